"""Recording a learner's ``torch.autograd.Function`` as a program (inside a worker).

The wrapper's forward and backward run once, on fake tensors: they carry the case's shapes,
strides, dtypes and device, and no values (PyTorch's ``FakeTensorMode``). Everything they do
is written down as a :class:`grader.channel.kinds.function.Program`:

* each PyTorch operator (``aten::view.default``, ``aten::sum.dim_IntList``, ...), with its
  arguments, the tensors it made, and the learner's line that called it;
* each Triton launch, which does not run here: the kernel (as a path from the learner's module,
  so that another process finds the same one), its arguments, and its grid, worked out here for
  each autotuning config;
* what ``ctx`` saved, and what forward and backward returned.

Another worker replays the program on real data (:mod:`.replay`), and the verdict
comes from that replay, so there is no checking run here for a wrapper to recognise: a
wrapper that hides an operator from the recording only makes the replay wrong. A wrapper that
needs values on the host (``.item()``, ``.tolist()``, branching on data) fails here, with its
line: a wrapper allocates, views, launches and saves.
"""
from __future__ import annotations

import contextlib
import inspect
import linecache
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from grader.course.dtypes import dtype_name
from grader.sandbox.recorded_launch import kernel_paths

CONSTANT_LIMIT = 4096  # elements of a tensor made from Python data (torch.tensor([...])) kept as values
# What records nothing: asking a tensor for its device.
SILENT = {"prim::device"}


class _KeptFromElsewhere(Exception):
    """An operator was given a tensor made outside this recording (kept from an earlier call):
    ``Tape.unseen`` says which and where; the recording stops there."""


class RecordingFailed(Exception):
    """The wrapper raised while it was recorded: in which phase, and, where it asked for a
    tensor's values or computed below the recording, what and where (``host``). The learner's
    own exception is the cause."""

    def __init__(self, phase: str, host: dict | None) -> None:
        super().__init__(f"the {phase} raised")
        self.phase, self.host = phase, host


def _traceback_line(exc: BaseException, files: dict[str, str]) -> tuple[str, int | None, str]:
    """The deepest frame of ``exc``'s traceback in a learner file."""
    import traceback
    found = ("", None, "")
    for entry in traceback.extract_tb(exc.__traceback__):
        if entry.filename in files:
            found = (files[entry.filename], entry.lineno, (entry.line or "").strip())
    return found


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
        """How a tensor the wrapper passes on is written in the program."""
        known = self.ids.get(tensor)
        if known is not None:
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
                                           for t in flat([list(args), list(kwargs.values())]) if isinstance(t, torch.Tensor)):
            raise _KeptFromElsewhere()
        try:
            out = func(*args, **kwargs)
        except Exception as exc:
            if _needs_values(exc) and self.host_values is None:
                file, line, source = _line(self.files)
                self.host_values = {"phase": self.phase, "op": _asked(name, exc), "file": file, "line": line,
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


def _asked(op: str, exc: BaseException) -> str:
    """What the wrapper asked of a tensor, in the learner's words."""
    if "_local_scalar_dense" in op or "_local_scalar_dense" in str(exc) or "is_nonzero" in op:
        return "a tensor's value (`.item()`, `int()`, `bool()`, an `if` on a tensor, `.tolist()`)"
    if "numpy" in str(exc):
        return "a tensor's values through `.numpy()`"
    return "a tensor's values"


def _needs_values(exc: BaseException) -> bool:
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException
    text = str(exc)
    return isinstance(exc, (DataDependentOutputException, DynamicOutputShapeException)) \
        or "tensor subclasses" in text or "FakeTensor" in text


def _escaped(exc: BaseException) -> bool:
    """An error from below the fake tensors: a wrapper that turned PyTorch's dispatch off meets
    the device they are made on, which it never sees otherwise."""
    text = str(exc)
    return "device" in text and "meta" in text


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


class Context:
    """What ``forward`` gets as ``ctx``: it keeps what is saved, and says what it holds."""

    def __init__(self, inputs: int) -> None:
        object.__setattr__(self, "_saved", None)
        object.__setattr__(self, "_attributes", {})
        object.__setattr__(self, "needs_input_grad", tuple(True for _ in range(inputs)))
        object.__setattr__(self, "materialize_grads", True)

    def save_for_backward(self, *tensors) -> None:
        object.__setattr__(self, "_saved", tensors)

    @property
    def saved_tensors(self) -> tuple:
        return tuple(self._saved or ())

    def mark_dirty(self, *tensors) -> None:
        pass

    def mark_non_differentiable(self, *tensors) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        object.__setattr__(self, "materialize_grads", bool(value))

    def __setattr__(self, name: str, value) -> None:
        self._attributes[name] = value
        object.__setattr__(self, name, value)


_recording: list[Tape] = []  # the tape of the recording under way (a handle may outlive its case's)


class Handle:
    """What ``kernel.warmup(...)`` returns while recording: launching it, ``handle[grid](...)``,
    is written down as a launch of the kernel with the constexprs and options warmup got."""

    def __init__(self, outer, kwargs) -> None:
        self.outer, self.kwargs = outer, kwargs

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            if not _recording:
                raise RuntimeError("a kernel launched outside the wrapper's forward and backward")
            _recording[-1].launch(self.outer, grid, args, kwargs, {"outer": self.outer, "kwargs": self.kwargs})
        return launch


@contextlib.contextmanager
def recorded_launches(tape: Tape):
    """Triton's launch paths write to the tape instead of launching: ``kernel[grid](...)`` and
    ``kernel.run(...)`` (the outermost of autotune, heuristics and jit), and the handle
    ``kernel.warmup(...)`` returns (the fused-softmax tutorial's way), launched as
    ``handle[grid](...)``."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    def run(self, *args, grid=None, warmup=False, **kwargs):
        if warmup:
            return Handle(self, kwargs)
        tape.launch(self, grid, args, kwargs)

    originals = {cls: cls.__dict__.get("run") for cls in (JITFunction, InterpretedFunction, Autotuner, Heuristics)}
    for cls in originals:
        cls.run = run
    _recording.append(tape)
    try:
        yield
    finally:
        _recording.pop()
        for cls, original in originals.items():
            cls.run = original


@contextlib.contextmanager
def plausible_addresses(tape: Tape):
    """``x.data_ptr()`` of a fake tensor is 0, which no real tensor's is: give each storage an
    address of its own, 4 GiB apart and aligned as an allocator's, so that a wrapper keying a
    cache on alignment (``x.data_ptr() % 16``) works, and none can tell a recording by it."""
    from torch._subclasses.fake_tensor import FakeTensor

    def data_ptr(self) -> int:
        number = tape.storages.setdefault(self.untyped_storage()._cdata, len(tape.storages))
        return 0x7F3A_0000_0000 + (number << 32) + self.storage_offset() * self.element_size()
    FakeTensor.data_ptr = data_ptr
    try:
        yield
    finally:
        del FakeTensor.data_ptr


def record(cls, module, files: dict[str, str], layouts, device: str) -> dict:
    """Forward and backward of ``cls`` on fake tensors laid out as ``layouts`` (the inputs, then
    grad_output: shape, strides, dtype). ``files``: the learner's files, each as messages name
    it. Returns the program as JSON."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    mode = FakeTensorMode()
    with mode:
        tensors = [torch.empty_strided(tuple(spec.shape), tuple(spec.strides), dtype=getattr(torch, spec.dtype),
                                       device=device) for spec in layouts]
    *inputs, grad_output = tensors
    tape = Tape(files, kernel_paths(module), mode)
    for tensor in tensors:
        tape.add(tensor)
    ctx = Context(len(inputs))
    custom_setup = getattr(cls, "setup_context", None) is not getattr(torch.autograd.Function, "setup_context", None)
    try:
        with mode, tape, recorded_launches(tape), plausible_addresses(tape), torch.no_grad():
            if custom_setup:  # the newer style: forward without ctx, then setup_context
                output = cls.forward(*inputs)
                cls.setup_context(ctx, tuple(inputs), output)
            else:
                output = cls.forward(ctx, *inputs)
            tape.phase = "backward"
            grads = cls.backward(ctx, grad_output)
    except _KeptFromElsewhere:  # the program so far, with the tensor no step made
        return {"inputs": len(inputs), "metas": tape.metas, "steps": tape.steps, "output": {"type": "unseen tensor"},
                "grads": [], "saved": [], "unseen": tape.unseen, "attributes": []}
    except Exception as exc:
        escaped = _escaped(exc)
        if not (escaped or _needs_values(exc)):
            raise RecordingFailed(tape.phase, None) from exc
        info = None if escaped else tape.host_values
        if info is None:  # asked outside PyTorch's dispatch (.numpy()), or computed below it
            file, line, source = _traceback_line(exc, files)
            info = {"phase": tape.phase, "file": file, "line": line, "source": source,
                    "op": str(exc).split("\n")[0][:160] if escaped else _asked("", exc)}
        raise RecordingFailed(tape.phase, {**info, "escaped": escaped}) from exc
    grads = grads if isinstance(grads, tuple) else (grads,)

    def returned(value, what: str) -> dict:
        if isinstance(value, torch.Tensor):
            tape.phase = "forward" if what == "the forward's result" else "backward"
            reference = tape.ref(value, what)
            return {"ref": reference["ref"]} if "ref" in reference else {"type": "unseen tensor"}
        return {"type": type(value).__name__}
    tape.phase = "backward"
    saved = [tape.ref(t, "a tensor ctx saved").get("ref") if isinstance(t, torch.Tensor) else None
             for t in ctx.saved_tensors]
    return {"inputs": len(inputs), "metas": tape.metas, "steps": tape.steps,
            "output": returned(output, "the forward's result"),
            "grads": [returned(g, f"gradient {i + 1}") for i, g in enumerate(grads)],
            "saved": saved, "unseen": tape.unseen,
            "attributes": sorted(k for k, v in ctx._attributes.items() if _holds_tensor(v))}


def _holds_tensor(value, depth: int = 0) -> bool:
    """Whether an attribute of ctx keeps a tensor alive: itself, or inside a list, tuple, set, dict
    or an object's attributes (a few levels down)."""
    if isinstance(value, torch.Tensor):
        return True
    if depth > 4 or isinstance(value, (str, bytes, int, float, bool, type(None), torch.dtype, torch.device)):
        return False
    if isinstance(value, dict):
        return any(_holds_tensor(v, depth + 1) for v in (*value.keys(), *value.values()))
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_holds_tensor(v, depth + 1) for v in value)
    attributes = getattr(value, "__dict__", None)
    return isinstance(attributes, dict) and any(_holds_tensor(v, depth + 1) for v in attributes.values())
