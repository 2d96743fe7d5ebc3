"""An autotuned kernel, config by config (inside the worker), the same on every device.

Triton's autotuner times the configs on a GPU and runs only the fastest, so a config that is
wrong on some shape hides wherever it is slower: an autotuned matmul with one wrong config
passed on an H100 and failed in the interpreter. The grader therefore runs every config the
tuner could pick, in the interpreter and on a GPU alike, each launched below the autotuner
as the autotuner itself launches its choice (``fn.run(*args, **kwargs, **config.all_kwargs())``).

Which configs the tuner could pick: all of them, or those ``early_config_prune`` keeps. The
grader calls it as Triton does, with the configs and the launch's arguments by name, but
passes copies of the configs and tensors that have shapes, dtypes and strides and no values
(PyTorch's ``meta`` device): pruning needs sizes, and then nothing it does reaches the data,
and it sees the same arguments in the interpreter and on a GPU.
"""
from __future__ import annotations

import copy
import inspect


class AutotunerError(Exception):
    """What Triton's autotuner would refuse: the learner's pruning returned no config, or others.
    ``line``/``source``: the pruning function's ``def``, where the learner looks."""

    def __init__(self, text: str, prune) -> None:
        super().__init__(text)
        import linecache
        code = getattr(prune, "__code__", None)
        self.line = code.co_firstlineno if code else None
        self.source = linecache.getline(code.co_filename, code.co_firstlineno).strip() if code else ""


def tuned_configs(layers, buffers, named: dict, torch) -> list:
    """The configs to grade for this launch, in the autotuner's order (a prune may drop some).
    ``buffers``: the wire's BufferSpecs, passed positionally before ``named``, as the launch does."""
    tuner = layers.autotuner
    if tuner is None or not layers.configs:
        return []
    if getattr(tuner, "early_config_prune", None) is None:
        return list(layers.configs)
    names = list(inspect.signature(layers.base.fn).parameters)
    shaped = [torch.empty_strided(tuple(b.shape), tuple(b.strides), dtype=getattr(torch, b.dtype), device="meta")
              for b in buffers]
    return kept_configs(layers, {**dict(zip(names, shaped)), **named}, named)


def kept_configs(layers, by_name: dict, named: dict) -> list:
    """The configs ``early_config_prune`` keeps for a launch whose arguments are ``by_name`` (tensors
    already without values) and whose keyword arguments are ``named``; all of them without a prune."""
    prune = getattr(layers.autotuner, "early_config_prune", None)
    if prune is None:
        return list(layers.configs)
    copies = [copy.deepcopy(c) for c in layers.configs]
    keywords = named
    try:  # Triton passes the launch's keyword arguments too; a prune without **kwargs takes none
        inspect.signature(prune).bind(copies, by_name, **named)
    except TypeError:
        keywords = {}
    kept = prune(copies, by_name, **keywords)
    what = f"`{getattr(prune, '__name__', 'early_config_prune')}` (early_config_prune)"
    if not isinstance(kept, (list, tuple)) or not all(any(k is c for c in copies) for k in kept):
        got = "a config it was not given" if isinstance(kept, (list, tuple)) else f"a {type(kept).__name__}"
        raise AutotunerError(f"{what} returned {got}: it must return a list of some of the configs it is "
                             f"given (the grader checks and compiles those)", prune)
    if not kept:
        raise AutotunerError(f"{what} kept no config for this launch, and Triton stops with \"No valid "
                             f"autotuner configs after pruning\": keep at least one for every size", prune)
    return [layers.configs[i] for i, c in enumerate(copies) if any(k is c for k in kept)]


def launch(layers, grid, views, named: dict, config=None):
    """Launch below any autotuner, with ``config``'s values and options, as the autotuner runs
    its choice; ``reset_to_zero`` arguments are zeroed first, as the autotuner does before the
    run that follows its tuning. Heuristics are Triton's own layer and run as they would."""
    inner = layers.autotuner.fn if layers.autotuner is not None else layers.outer
    if config is not None:
        names = list(inspect.signature(layers.base.fn).parameters)
        arguments = {**dict(zip(names, views)), **named}
        for name in getattr(layers.autotuner, "reset_to_zero", None) or ():
            if hasattr(arguments.get(name), "zero_"):
                arguments[name].zero_()
        named = {**named, **config.all_kwargs()}
    return inner[grid](*views, **named)


def tuner_skips(exc: BaseException) -> bool:
    """Whether Triton's autotuner would pass over a config that raised ``exc`` while timing it
    (too much shared memory or too many registers for this GPU, a failed tl.static_assert, a
    ptxas error) and tune among the others: the grader passes over it too, on a GPU."""
    from triton.compiler.errors import CompileTimeAssertionFailure
    from triton.runtime.errors import OutOfResources, PTXASError

    from grader.sandbox.error_chain import errors_behind
    return any(isinstance(link, (OutOfResources, CompileTimeAssertionFailure, PTXASError))
               for link in errors_behind(exc))
