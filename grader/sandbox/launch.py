"""What a learner's kernel object is, and how the grader launches it (inside the worker).

Only genuine Triton objects are launched: a function decorated with ``@triton.jit`` (the
interpreter's ``InterpretedFunction`` under ``TRITON_INTERPRET=1``), optionally wrapped by
Triton's own ``Autotuner`` and ``Heuristics``. The check is on the exact class, so a
subclass with a ``__getitem__`` of its own (which would run at launch and could write the
expected answer) is refused, and the launch itself is always Triton's code, called here.

An autotuned kernel is run once per config, below the autotuner, on every device, and each
run is graded (see :mod:`.tuning`): a config the GPU's tuner never picks is still a config
it could pick elsewhere.
"""
from __future__ import annotations

import builtins
import inspect
from dataclasses import dataclass, field

from grader.sandbox.interpreter.hooks import RangePatch, grid_loop
from grader.source.wrapped import python_function


class NotGenuine(Exception):
    """The object is not a Triton kernel the grader can launch; the text says why."""


@dataclass
class Layers:
    """A kernel unwrapped: the innermost @triton.jit function and what wraps it."""

    outer: object                                  # what the learner defined
    base: object                                   # JITFunction / InterpretedFunction
    configs: list = field(default_factory=list)    # an autotuner's triton.Config objects
    autotuner: object | None = None
    heuristics: dict = field(default_factory=dict)  # name -> function of the arguments

    @property
    def provided(self) -> set[str]:
        """Parameters the wrappers give values to (the puzzle must not pass them too)."""
        names = set(self.heuristics)
        for config in self.configs:
            names |= set(config.kwargs)
        return names

    def config_labels(self) -> list[str]:
        return [describe_config(c) for c in self.configs]


def describe_config(config) -> str:
    parts = [f"{k}={v}" for k, v in config.kwargs.items()] + [f"num_warps={config.num_warps}"]
    return "config {" + ", ".join(parts) + "}"


def _triton_classes():
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction
    return JITFunction, InterpretedFunction, Autotuner, Heuristics


def unwrap(kernel, name: str) -> Layers:
    """The layers of ``kernel``, or NotGenuine with the reason."""
    jit, interpreted, autotuner, heuristics = _triton_classes()
    layers = Layers(outer=kernel, base=None)
    obj = kernel
    for _ in range(8):
        kind = type(obj)
        if kind is jit or kind is interpreted:
            layers.base = obj
            return layers
        if kind is autotuner:
            if layers.autotuner is not None:
                raise NotGenuine(f"`{name}` is autotuned twice: use one @triton.autotune with every config in it.")
            _no_hooks(obj, name, kernel)
            layers.autotuner, layers.configs = obj, list(obj.configs)
        elif kind is heuristics:
            _heuristics_see_a_gpu(obj)
            layers.heuristics = {**obj.values, **layers.heuristics}
        elif any(isinstance(obj, c) for c in (jit, interpreted, autotuner, heuristics)):
            raise NotGenuine(f"`{name}` is an instance of {kind.__name__}, a subclass of Triton's "
                             f"{kind.__mro__[1].__name__}: only functions decorated with @triton.jit "
                             f"(optionally with @triton.autotune or @triton.heuristics) are graded.")
        else:
            break
        obj = obj.fn
    raise NotGenuine(f"`{name}` is not a Triton kernel ({type(obj).__name__}): decorate it with @triton.jit.")


def _heuristics_see_a_gpu(layer) -> None:
    """A heuristic is learner Python given the launch's tensors: where Triton calls it, it gets them
    on the GPU (grader.sandbox.world), as where the kernel is used. A compile worker has no torch,
    and no tensors to give."""
    import sys
    if "torch" in sys.modules:
        from grader.sandbox.world import called_on_gpu
        layer.values.update({key: called_on_gpu(rule) for key, rule in layer.values.items()})


def _no_hooks(tuner, name: str, kernel) -> None:
    """Hooks and performance models run the submission's Python at launch time, with the
    kernel's tensors in hand: the grader does not run them. An ``early_config_prune`` of the
    kernel's own file is run, on tensors without values (see :mod:`.tuning`)."""
    prune = tuner.early_config_prune
    own = prune is None or (inspect.isfunction(prune) and python_function(kernel) is not None
                            and prune.__code__.co_filename == python_function(kernel).__code__.co_filename)
    hooks = [what for what, set_ in (("pre_hook", tuner.user_defined_pre_hook),
                                     ("post_hook", tuner.user_defined_post_hook),
                                     ("prune_configs_by's perf_model", tuner.perf_model),
                                     ("an early_config_prune from outside its file", not own)) if set_]
    hooks += [f"a Config's pre_hook ({describe_config(c)})" for c in tuner.configs if c.pre_hook is not None]
    if hooks:
        raise NotGenuine(f"`{name}` is autotuned with {', '.join(hooks)}: these run Python on the host with "
                         f"the kernel's tensors, so the grader does not run them. Use plain configs, "
                         f"`key`, `reset_to_zero`, `restore_value` and `prune_configs_by="
                         f"{{\"early_config_prune\": fn}}` with `fn` defined in the same file.")


def parameters(layers: Layers) -> tuple[list, dict]:
    """The innermost function's parameters (name, constexpr) and their literal defaults."""
    fn = layers.base.fn
    params, defaults = [], {}
    for p in inspect.signature(fn).parameters.values():
        ann = p.annotation
        constexpr = ann is not inspect.Parameter.empty and "constexpr" in (
            ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann)))
        params.append((p.name, bool(constexpr)))
        if p.default is not inspect.Parameter.empty:
            defaults[p.name] = p.default
    return params, defaults


def apply_heuristics(layers: Layers, values: dict) -> dict:
    """The values the heuristics give, from the call's named values (as Triton does)."""
    out = {}
    for key, rule in layers.heuristics.items():
        out[key] = rule({**values, **out})
    return out


def _compiled_minmax(python_builtin, elementwise):
    """Builtin ``min``/``max`` with their compiled meaning: elementwise on blocks.

    Compiled Triton maps ``max(a, b)`` to ``tl.maximum``; the interpreter would run Python's
    ``max``, which compares whole blocks and returns one of them."""
    def choose(*args, **kwargs):
        from triton.language.core import base_value
        if len(args) >= 2 and not kwargs and any(isinstance(a, base_value) for a in args):
            result = args[0]
            for arg in args[1:]:
                result = elementwise(result, arg)
            return result
        return python_builtin(*args, **kwargs)
    choose.__name__ = python_builtin.__name__
    return choose


def compiled_builtins() -> dict:
    import triton.language as tl
    return {"min": _compiled_minmax(builtins.min, lambda a, b: tl.minimum(a, b)),
            "max": _compiled_minmax(builtins.max, lambda a, b: tl.maximum(a, b))}


class program_order(RangePatch):
    """Run the interpreter's programs in reverse order while active.

    The interpreter walks the grid in a fixed order, so a race between programs never shows.
    Its grid loop calls ``range``; during a reversed run, the ``range`` calls made by that
    loop (and only by it) count down instead."""

    def __init__(self, reverse: bool) -> None:
        self.reverse = reverse

    def __enter__(self):
        if not self.reverse:
            return self
        import sys

        from triton.runtime import interpreter
        loop = grid_loop(interpreter)

        def grid_range(*args):
            if sys._getframe(1).f_code is loop:
                return builtins.range(*args)[::-1]
            return builtins.range(*args)
        self._patch(interpreter, grid_range)
        return self
