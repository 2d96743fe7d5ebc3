"""Recording a learner's ``torch.autograd.Function`` as a program (inside a worker).

The wrapper's forward and backward run once, on fake tensors: they carry the case's shapes,
strides and dtypes, the GPU as their device wherever the grader runs (on a CPU, GPU tensors of
:mod:`grader.sandbox.world`, with ``torch.cuda`` answering as an H100), and no values (PyTorch's
``FakeTensorMode``). Everything they do
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
line: a wrapper allocates, views, launches and saves. The tape that writes each call down is
:mod:`.tape`; this module sets the recording up and turns the tape into the program.
"""
from __future__ import annotations

import contextlib

import torch

from grader.sandbox.kinds.function.tape import KeptFromElsewhere, Tape, asked, needs_values
from grader.sandbox.recorded_launch import kernel_paths
from grader.sandbox.world import gpu_world, in_memory, on_gpu


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


def _escaped(exc: BaseException) -> bool:
    """An error from below the fake tensors: a wrapper that turned PyTorch's dispatch off meets
    the device they are made on, which it never sees otherwise."""
    text = str(exc)
    return "device" in text and "meta" in text


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
    tape = Tape(files, kernel_paths(module), mode)
    for tensor in tensors:
        tape.add(tensor)
    for tensor in tensors[:-1]:  # as autograd hands them over: `if x.requires_grad: ctx.save_for_backward(x)` saves
        if tensor.is_floating_point():
            tensor.requires_grad_(True)
    *inputs, grad_output = on_gpu(tensors)  # on a GPU to the wrapper, wherever it is recorded
    ctx = Context(len(inputs))
    custom_setup = getattr(cls, "setup_context", None) is not getattr(torch.autograd.Function, "setup_context", None)
    try:
        with gpu_world(), mode, tape, recorded_launches(tape), plausible_addresses(tape), torch.no_grad():
            if custom_setup:  # the newer style: forward without ctx, then setup_context
                output = cls.forward(*inputs)
                cls.setup_context(ctx, tuple(inputs), output)
            else:
                output = cls.forward(ctx, *inputs)
            tape.begin_backward(len(tensors), in_memory(ctx.saved_tensors))
            grads = cls.backward(ctx, grad_output)
    except KeptFromElsewhere:  # the program so far, with the tensor no step made
        return {"inputs": len(inputs), "metas": tape.metas, "steps": tape.steps, "output": {"type": "unseen tensor"},
                "grads": [], "saved": [], "unseen": tape.unseen, "attributes": []}
    except Exception as exc:
        escaped = _escaped(exc)
        if not (escaped or needs_values(exc)):
            raise RecordingFailed(tape.phase, None) from exc
        info = None if escaped else tape.host_values
        if info is None:  # asked outside PyTorch's dispatch (.numpy()), or computed below it
            file, line, source = _traceback_line(exc, files)
            info = {"phase": tape.phase, "file": file, "line": line, "source": source,
                    "op": str(exc).split("\n")[0][:160] if escaped else asked("", exc)}
        raise RecordingFailed(tape.phase, {**info, "escaped": escaped}) from exc
    grads = grads if isinstance(grads, tuple) else (grads,)

    def returned(value, what: str) -> dict:
        if isinstance(value, torch.Tensor):
            tape.phase = "forward" if what == "the forward's result" else "backward"
            reference = tape.ref(in_memory(value), what)
            return {"ref": reference["ref"]} if "ref" in reference else {"type": "unseen tensor"}
        return {"type": type(value).__name__}
    tape.phase = "backward"
    saved = [tape.ref(t, "a tensor ctx saved").get("ref") if isinstance(t, torch.Tensor) else None
             for t in in_memory(ctx.saved_tensors)]
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
