"""Autograd wrappers: the result must come from the learner's kernels."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grader.judge.failures.catalogue import FailureKind, register
from grader.judge.failures.words import _where, fmt_index, fmt_shape

_WRAPPER_DOES = ("A wrapper allocates, reshapes, launches your Triton kernels and saves for backward; "
                 "PyTorch may also sum the kernels' partial results.")


@dataclass(frozen=True)
class TorchOp:
    """A PyTorch operator computed on an input (or, ``on_kernel_buffers``, on what a kernel was handed)."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    op: str
    shapes: str  # the operands' shapes, as written
    line: int | None
    source: str
    file: str = ""
    on_kernel_buffers: bool = False


def _torch_op(f: TorchOp) -> str:
    if f.on_kernel_buffers:
        return (f"the {f.phase} computed with PyTorch on what a Triton kernel was handed: `aten.{f.op}` read a "
                f"kernel's buffer{_where(f.line, f.source, f.file)}, operand shapes {f.shapes}. Copying the inputs "
                f"through a kernel and computing with PyTorch is still PyTorch's result. {_WRAPPER_DOES}")
    return (f"the {f.phase} computed with PyTorch: `aten.{f.op}` read an input{_where(f.line, f.source, f.file)}, "
            f"operand shapes {f.shapes}. The result must come from your Triton kernels. {_WRAPPER_DOES}")


@dataclass(frozen=True)
class HostReduction:
    """A PyTorch reduction on a kernel's buffer that the puzzle's statement does not leave to the host."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    op: str
    shape: tuple[int, ...]   # the reduced tensor's
    why: str                 # what about it the statement does not allow
    allowed: str             # what the statement allows the host, in its words
    line: int | None
    source: str
    file: str = ""


def _host_reduction(f: HostReduction) -> str:
    return (f"the {f.phase} reduced a kernel's buffer of shape {fmt_shape(f.shape)} with PyTorch: `aten.{f.op}`"
            f"{_where(f.line, f.source, f.file)} {f.why}. The statement leaves the host {f.allowed}. Do the "
            f"reduction in your Triton kernel (`tl.sum` over the block, a loop over the rows a program owns).")


@dataclass(frozen=True)
class NoLaunch:
    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str


def _no_launch(f: NoLaunch) -> str:
    return f"the {f.phase} launched no Triton kernel: compute it with your kernels from the previous puzzles."


@dataclass(frozen=True)
class Unseen:
    """A tensor passed on that no recorded operator made."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    what: str
    shape: tuple[int, ...]
    line: int | None
    source: str
    file: str = ""


# grader.sandbox.kinds.function.tape.SMUGGLED: how the recording names what the backward reached
# of the forward's without ctx (tests/test_provenance.py keeps the two the same).
SMUGGLED = "a tensor the forward made, reached by the backward without ctx.save_for_backward"


def _unseen(f: Unseen) -> str:
    if f.what.startswith(SMUGGLED):
        return (f"the backward reached a tensor (shape {fmt_index(tuple(f.shape))}) that the forward made, "
                f"{f.what.removeprefix(SMUGGLED + ', ')}{_where(f.line, f.source, f.file)}, without "
                f"`ctx.save_for_backward`: kept on the Function class, in a closure, a global or a cache, it is "
                f"one that autograd neither tracks nor frees, and one call's value can reach another's backward. "
                f"Fix: save it with `ctx.save_for_backward(...)` and read it from `ctx.saved_tensors`, or "
                f"recompute it in the backward with your kernels.")
    return (f"the {f.phase} passed on a tensor (shape {fmt_index(tuple(f.shape))}) that no PyTorch operator the "
            f"grader recorded made, as {f.what}{_where(f.line, f.source, f.file)}: it was computed where the grader "
            f"cannot see (another thread, PyTorch's dispatch turned off, NumPy) or kept from an earlier call. The "
            f"result must come from your Triton kernels. {_WRAPPER_DOES}")


@dataclass(frozen=True)
class HostValues:
    """The wrapper asked for values on the host (``op``), or (``escaped``) computed with PyTorch's
    dispatch turned off and failed there (``op``: the error)."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    op: str
    line: int | None
    source: str
    file: str = ""
    escaped: bool = False


def _host_values(f: HostValues) -> str:
    if f.escaped:
        return (f"the {f.phase} computed with PyTorch's dispatch turned off{_where(f.line, f.source, f.file)}, "
                f"where the grader cannot see it, and it failed there ({f.op}). The result must come from your "
                f"Triton kernels. {_WRAPPER_DOES}")
    return (f"the {f.phase} reads {f.op} on the host{_where(f.line, f.source, f.file)}. The grader "
            f"records your wrapper on tensors that have shapes and dtypes but no values, then replays what it "
            f"recorded on the real ones, so the wrapper never sees data: compute with values in a Triton kernel, "
            f"and pass sizes from `.shape`. {_WRAPPER_DOES}")


@dataclass(frozen=True)
class ReturnsInput:
    """A returned tensor is an input, or a view or copy of one."""

    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    name: str
    made: str  # what it is, in the learner's words


def _returns_input(f: ReturnsInput) -> str:
    return (f"the {f.phase} returns {f.made} as `{f.name}`, which no Triton kernel wrote: an input (or a view or "
            f"copy of one) is not a result. Compute `{f.name}` with your Triton kernels. {_WRAPPER_DOES}")


@dataclass(frozen=True)
class NeverComputed:
    """A returned tensor no kernel wrote, nor was it computed from the inputs."""

    kind: ClassVar = FailureKind.UNWRITTEN
    phase: str
    name: str
    made: str


def _never_computed(f: NeverComputed) -> str:
    return (f"`{f.name}` is never written: the {f.phase} returns {f.made}, which no Triton kernel wrote. Every "
            f"output element must be stored by one of your kernels: launch the kernel that computes `{f.name}` "
            f"and return the tensor it wrote.")


@dataclass(frozen=True)
class NotReplayable:
    kind: ClassVar = FailureKind.TORCH_COMPUTE
    phase: str
    what: str  # what the wrapper does that a replay cannot


def _not_replayable(f: NotReplayable) -> str:
    return (f"the {f.phase} {f.what}. The grader replays what your wrapper recorded, operator by operator and "
            f"launch by launch, so a wrapper may only use PyTorch's own operators and your Triton kernels. "
            f"{_WRAPPER_DOES}")


@dataclass(frozen=True)
class NotATensor:
    """The forward returned something else than a tensor."""

    kind: ClassVar = FailureKind.SHAPE
    returned: str  # its type
    shape: tuple[int, ...]  # the output's
    dtype: str


def _not_a_tensor(f: NotATensor) -> str:
    return (f"forward returned a {f.returned}, not a tensor: return the output "
            f"tensor, of shape {fmt_shape(f.shape)} {f.dtype}.")


@dataclass(frozen=True)
class WrongOutput:
    """The forward's output has another shape or dtype than the spec's."""

    kind: ClassVar = FailureKind.SHAPE
    shape: tuple[int, ...]
    dtype: str
    expected_shape: tuple[int, ...]
    expected_dtype: str


def _wrong_output(f: WrongOutput) -> str:
    return (f"forward returned {fmt_shape(f.shape)} {f.dtype}, expected {fmt_shape(f.expected_shape)} "
            f"{f.expected_dtype}: reshape the kernel's output back to the input's leading dims "
            f"(x.shape[:-1]) and keep {f.expected_dtype}.")


@dataclass(frozen=True)
class GradCount:
    kind: ClassVar = FailureKind.SHAPE
    count: int
    inputs: tuple[str, ...]


def _grad_count(f: GradCount) -> str:
    return (f"backward returned {f.count} value(s); it must return one gradient per forward "
            f"input ({', '.join(f.inputs)}).")


@dataclass(frozen=True)
class GradNotTensor:
    kind: ClassVar = FailureKind.SHAPE
    returned: str  # its type
    label: str     # grad_<input>
    shape: tuple[int, ...]


def _grad_not_tensor(f: GradNotTensor) -> str:
    return f"backward returned {f.returned} for {f.label}; return a tensor of shape {fmt_shape(f.shape)}."


@dataclass(frozen=True)
class GradShape:
    kind: ClassVar = FailureKind.SHAPE
    label: str
    shape: tuple[int, ...]
    expected: tuple[int, ...]


def _grad_shape(f: GradShape) -> str:
    return (f"backward returned {f.label} of shape {fmt_shape(f.shape)}, expected "
            f"{fmt_shape(f.expected)}: a gradient has its input's shape.")


@dataclass(frozen=True)
class CtxAttribute:
    """A tensor kept as an attribute of ctx, not saved for backward."""

    kind: ClassVar = FailureKind.SAVED
    attribute: str


def _ctx_attribute(f: CtxAttribute) -> str:
    return (f"ctx.{f.attribute} holds a tensor: pass tensors to ctx.save_for_backward, "
            f"which autograd tracks and frees, not as attributes of ctx.")


@dataclass(frozen=True)
class SavedExtra:
    """ctx saved a tensor that is neither an input nor one of the results the puzzle lets it keep."""

    kind: ClassVar = FailureKind.SAVED
    shape: tuple[int, ...]
    saves: tuple[str, ...]   # the results the puzzle lets ctx keep
    inputs: tuple[str, ...]


def _saved_extra(f: SavedExtra) -> str:
    needed = ", ".join([*f.inputs, *f.saves])
    return (f"ctx saved a tensor of shape {fmt_shape(f.shape)} that is not an input"
            f"{' nor one of ' + ', '.join(f.saves) if f.saves else ''}: "
            f"save only what the backward needs ({needed}), and recompute the rest.")


@dataclass(frozen=True)
class SavedStorage:
    """ctx saved a tensor of an allowed shape whose storage (what saving it keeps alive) is larger
    than what the puzzle lets ctx keep: a view into a buffer that holds more."""

    kind: ClassVar = FailureKind.SAVED
    shape: tuple[int, ...]
    dtype: str
    kept: int        # bytes of the storage the saved tensor views
    allowed: int     # bytes of what the puzzle lets ctx keep in that storage
    made: str = ""   # where the storage was made: "`empty` at line 12: `buf = ...`"
    saves: tuple[str, ...] = ()
    count: int = 1   # the saved tensors that view it


def _saved_storage(f: SavedStorage) -> str:
    made = f" (made by {f.made})" if f.made else ""
    itself = "the tensor itself takes" if f.count == 1 else f"the {f.count} tensors saved from it take"
    lets = f" The puzzle lets ctx keep {' and '.join(f.saves)} besides the inputs." if f.saves else ""
    return (f"ctx saved a tensor of shape {fmt_shape(f.shape)} {f.dtype} that keeps alive a storage of "
            f"{f.kept:,} bytes{made}, where {itself} {f.allowed:,} bytes: saving a view keeps its whole storage, "
            f"and the backward can read all of it.{lets} Save tensors with memory of their own (allocate each by "
            f"itself, or `.clone()` the view), and recompute the rest in the backward.")


register(FailureKind.UNWRITTEN, {NeverComputed: _never_computed})
register(FailureKind.SHAPE, {NotATensor: _not_a_tensor, WrongOutput: _wrong_output, GradCount: _grad_count,
                 GradNotTensor: _grad_not_tensor, GradShape: _grad_shape})
register(FailureKind.TORCH_COMPUTE, {TorchOp: _torch_op, NoLaunch: _no_launch, Unseen: _unseen,
                                     HostValues: _host_values, ReturnsInput: _returns_input,
                                     NotReplayable: _not_replayable, HostReduction: _host_reduction})
register(FailureKind.SAVED, {CtxAttribute: _ctx_attribute, SavedExtra: _saved_extra, SavedStorage: _saved_storage})
