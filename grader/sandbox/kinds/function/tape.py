"""The tape of an autograd recording: the ``TorchDispatchMode`` that writes down what a
learner's wrapper does on fake tensors, inside a worker.

:class:`Tape` gives each tensor a step made (or an input) a ref, writes each PyTorch operator
down with its arguments and the learner's line, writes each Triton launch down with its grid
per autotuning config, and notes the first tensor no step made and the first place the wrapper
asked for values. It stands apart from :mod:`.record`, which sets a recording up (the fake
tensors, ``ctx``, Triton's launch paths and addresses patched) and turns what the tape holds
into the program; the tape knows only how one call is written down.
"""
from __future__ import annotations

import inspect
import linecache
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from grader.course.dtypes import dtype_name
from grader.sandbox.world import in_memory

CONSTANT_LIMIT = 4096  # elements of a tensor made from Python data (torch.tensor([...])) kept as values
# What records nothing: asking a tensor for its device.
SILENT = {"prim::device"}


# How ``Tape.unseen`` names a tensor the forward made that the backward reached without ctx (a
# class attribute, a closure, a global, a cache): grader.judge.failures.wrappers words it.
SMUGGLED = "a tensor the forward made, reached by the backward without ctx.save_for_backward"


class KeptFromElsewhere(Exception):
    """An operator was given a tensor made outside this recording (kept from an earlier call):
    ``Tape.unseen`` says which and where; the recording stops there."""


def _line(files: dict[str, str]) -> tuple[str, int | None, str]:
    """The innermost frame in a learner file: (the file as messages name it, line, its text)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name in files:
            return files[name], frame.f_lineno, linecache.getline(name, frame.f_lineno).strip()
        frame = frame.f_back
    return "", None, ""


class Tape(TorchDispatchMode):
    """The program being recorded: refs for tensors, steps, the first unseen tensor."""

    def __init__(self, files: dict[str, str], kernels, mode) -> None:
        super().__init__()
        self.files = files  # learner file -> how messages name it ("" for the graded file)
        self.kernels = kernels  # a kernel object -> its path from the learner's module
        # Tensors are known weakly: a mode that keeps its outputs alive makes PyTorch hand the wrapper a
        # detached alias instead. Their storages are kept, so that no address is reused meanwhile.
        self.ids = WeakIdKeyDictionary()       # tensor -> ref
        self.kept: list = []
        self.storages: dict[int, int] = {}     # a storage's address -> its number
        self.metas: list[dict] = []
        self.steps: list[dict] = []
        self.phase = "forward"
        self.unseen: dict | None = None  # the first tensor no recorded step made
        self.host_values: dict | None = None
        self.mode = mode  # the FakeTensorMode of this recording: a tensor of another was kept from elsewhere
        # Backward's provenance: storages made before it may be reached only if they are an input's,
        # grad_output's or a saved tensor's (their numbers here); those from ``backward_from`` on are its own.
        self.handed: set[int] = set()
        self.backward_from: int | None = None

    def begin_backward(self, given: int, saved) -> None:
        """The backward starts: what it may reach of what came before is the first ``given`` refs
        (the inputs and grad_output) and the tensors ``saved`` (ctx.saved_tensors, as memory)."""
        self.phase = "backward"
        refs = [*range(given), *(self.ids.get(t) for t in saved if isinstance(t, torch.Tensor))]
        self.handed = {self.metas[r]["storage"] for r in refs if r is not None}
        self.backward_from = len(self.storages)

    def _smuggled(self, ref: int, what: str) -> None:
        """Notes ``ref`` when the backward reaches storage the forward made that no saved tensor,
        input or grad_output shares: it came through Python (an attribute, a closure, a cache)."""
        storage = self.metas[ref]["storage"]
        if self.phase != "backward" or self.backward_from is None or self.unseen is not None \
                or storage in self.handed or storage >= self.backward_from:
            return
        file, line, source = _line(self.files)
        self.unseen = {"phase": "backward", "what": f"{SMUGGLED}, as {what}", "shape": self.metas[ref]["shape"],
                       "file": file, "line": line, "source": source}

    # ---- refs --------------------------------------------------------------------------------
    def add(self, tensor: torch.Tensor) -> int:
        """A ref for a tensor a step made (or an input)."""
        known = self.ids.get(tensor)
        if known is not None:
            return known
        storage = tensor.untyped_storage()
        self.kept.append(storage)
        storage = storage._cdata
        self.storages.setdefault(storage, len(self.storages))
        self.ids[tensor] = len(self.metas)
        self.metas.append({"shape": list(tensor.shape), "strides": list(tensor.stride()), "dtype": dtype_name(tensor),
                           "offset": tensor.storage_offset(), "storage": self.storages[storage]})
        return len(self.metas) - 1

    def ref(self, tensor: torch.Tensor, what: str) -> dict:
        """How a tensor the wrapper passes on is written in the program (a GPU tensor of the
        recording's world as its memory, the fake tensor the steps made)."""
        tensor = in_memory(tensor)
        known = self.ids.get(tensor)
        if known is not None:
            self._smuggled(known, what)
            return {"ref": known}
        if not _is_fake(tensor) and tensor.numel() <= CONSTANT_LIMIT and tensor.device.type == "cpu":
            from torch._subclasses.fake_tensor import unset_fake_temporarily
            with unset_fake_temporarily():  # a real tensor made from Python data: its values are the program's
                values = tensor.reshape(-1).tolist()
            return {"constant": {"dtype": dtype_name(tensor), "shape": list(tensor.shape), "values": values}}
        if self.unseen is None:
            file, line, source = _line(self.files)
            self.unseen = {"phase": self.phase, "what": what, "shape": list(tensor.shape), "file": file,
                           "line": line, "source": source}
        return {"unseen": True}

    def encode(self, value, what: str):
        """An argument as JSON: tensors become refs; dtypes, devices and layouts their names."""
        if isinstance(value, torch.Tensor):
            return self.ref(value, what)
        if isinstance(value, (list, tuple)):
            return [self.encode(v, what) for v in value]
        if isinstance(value, dict):
            return {"dict": {str(k): self.encode(v, what) for k, v in value.items()}}
        if isinstance(value, torch.dtype):
            return {"dtype": str(value).removeprefix("torch.")}
        if isinstance(value, torch.device):
            return {"device": True}  # the replay's own device
        if isinstance(value, torch.layout):
            return {"layout": str(value).replace("torch.", "")}
        if isinstance(value, torch.memory_format):
            return {"memory_format": str(value).replace("torch.", "")}
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        value = getattr(value, "value", value)  # a tl.constexpr
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if type(value).__module__.startswith("triton.language") and type(value).__name__ == "dtype":
            return {"tl_dtype": str(value)}  # tl.float16, passed to a constexpr
        descriptor = _descriptor(value)
        if descriptor is not None:
            return {"descriptor": {k: self.encode(v, what) for k, v in descriptor.items()}}
        raise TypeError(f"{what} is a {type(value).__name__}, which a recorded program cannot hold: pass "
                        f"tensors, numbers, dtypes and tl.constexpr values")

    # ---- operators ---------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name
        if name in SILENT:
            return func(*args, **kwargs)
        what = f"an argument of `{name.split('::')[-1]}`"
        step = {"phase": self.phase, "op": f"{name}.{func._overloadname}",
                "args": self.encode(list(args), what), "kwargs": self.encode(dict(kwargs), what)["dict"]}
        if self.unseen is not None and any(_is_fake(t) and t.fake_mode is not self.mode
                                           for t in flat([list(args), list(kwargs.values())])
                                           if isinstance(t, torch.Tensor)):
            raise KeptFromElsewhere()
        try:
            out = func(*args, **kwargs)
        except Exception as exc:
            if needs_values(exc) and self.host_values is None:
                file, line, source = _line(self.files)
                self.host_values = {"phase": self.phase, "op": asked(name, exc), "file": file, "line": line,
                                    "source": source}
            raise
        made = [t for t in flat([out]) if isinstance(t, torch.Tensor)]
        if not made:  # a Python value (a size, a constant's item): nothing for the replay to make
            return out
        step["out"] = [self.add(t) for t in made]
        file, step["line"], step["source"] = _line(self.files)
        step["file"] = file
        self.steps.append(step)
        return out

    # ---- launches ----------------------------------------------------------------------------
    def launch(self, kernel, grid, args, kwargs, handle=None) -> None:
        """A Triton launch, written down instead of run. ``handle``: launched through the
        compiled handle ``kernel.warmup(...)`` returned (its constexprs and options)."""
        from grader.sandbox.launch import unwrap
        path, hops = self.kernels(kernel)
        layers = unwrap(kernel if handle is None else handle["outer"], path[-1])
        what = f"an argument of the launch of `{path[-1]}`"
        step = {"phase": self.phase, "kernel": {"path": path, "hops": hops},
                "args": self.encode(list(args), what), "kwargs": self.encode(dict(kwargs), what)["dict"],
                "compiled": handle is not None}
        if handle is not None:
            step["options"] = self.encode(dict(handle["kwargs"]), what)["dict"]
            named = _bind(layers.base.fn, list(args), {})  # the handle takes every parameter in order
            named.update(handle["kwargs"])
            step["grids"] = [_grid(grid, named)]
        else:
            configs = layers.configs or [None]
            step["grids"] = [_grid(grid, _meta(layers, args, kwargs, config)) for config in configs]
        file, step["line"], step["source"] = _line(self.files)
        step["file"] = file
        self.steps.append(step)


def _is_fake(tensor: torch.Tensor) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor
    return isinstance(tensor, FakeTensor)


def asked(op: str, exc: BaseException) -> str:
    """What the wrapper asked of a tensor, in the learner's words."""
    if "_local_scalar_dense" in op or "_local_scalar_dense" in str(exc) or "is_nonzero" in op:
        return "a tensor's value (`.item()`, `int()`, `bool()`, an `if` on a tensor, `.tolist()`)"
    if "numpy" in str(exc):
        return "a tensor's values through `.numpy()`"
    return "a tensor's values"


def needs_values(exc: BaseException) -> bool:
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException
    text = str(exc)
    return isinstance(exc, (DataDependentOutputException, DynamicOutputShapeException)) \
        or "tensor subclasses" in text or "FakeTensor" in text


def _descriptor(value) -> dict | None:
    """A host-side tensor descriptor (``triton.tools.tensor_descriptor.TensorDescriptor``)."""
    if type(value).__name__ != "TensorDescriptor" or not isinstance(getattr(value, "base", None), torch.Tensor):
        return None
    return {"base": value.base, "shape": list(value.shape), "strides": list(value.strides),
            "block_shape": list(value.block_shape), "padding": getattr(value, "padding", "zero")}


def flat(items) -> list:
    """The leaves of nested lists and tuples, in order: the tensors a call takes or returns."""
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(flat(item))
        else:
            out.append(item)
    return out


def _bind(fn, args: list, kwargs: dict) -> dict:
    """The launch's values by parameter name, defaults included."""
    params = inspect.signature(fn).parameters
    named = {p: p_default.default for p, p_default in params.items()
             if p_default.default is not inspect.Parameter.empty}
    named.update(zip(params, args))
    named.update(kwargs)
    return named


def _meta(layers, args, kwargs: dict, config) -> dict:
    """What Triton hands a grid function: the bound arguments, with an autotuning config's
    values and the heuristics' values."""
    named = _bind(layers.base.fn, list(args), dict(kwargs))
    if config is not None:
        named.update(config.all_kwargs())
    for key, rule in layers.heuristics.items():
        named[key] = rule(named)
    return named


def _grid(grid, meta: dict) -> list[int]:
    value = grid(meta) if callable(grid) else grid
    value = tuple(value) if isinstance(value, (list, tuple)) else (value,)
    return [int(getattr(g, "value", g)) for g in value]
