"""``--bench``: a later call wrong, a timing that cannot be trusted, and a run that gave no answer."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from grader.judge.failures.catalogue import VALUE_KINDS, FailureKind, register, word
from grader.judge.failures.words import ended, last_line, plural


@dataclass(frozen=True)
class TimedCall:
    """A timed call of ``--bench`` whose result was wrong, though the first call's was right:
    ``facts`` (a Mismatch, Unwritten or Nonfinite) say how."""

    kind: FailureKind
    call: int
    calls: int
    facts: Any


def _timed_call(f: TimedCall) -> str:
    return (f"timed call {f.call} of {f.calls}, on inputs other than the call before it: {word(f.facts)} The first "
            f"call was right. Every call must do the whole work on the inputs it is given: a result kept from an "
            f"earlier call, looked up by the inputs' addresses, or skipped once the first calls were checked, is "
            f"wrong here.")


_REFUSED = "--bench refuses this run: "


@dataclass(frozen=True)
class BelowLimit:
    """A time no kernel could reach on this GPU: its traffic at the memory's peak, or its
    floating-point operations at the tensor cores' peak, take longer."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    ms: float
    limit_ms: float
    bound: str  # what sets the limit, in words: "67108864 bytes at 3352 GB/s"


def _below_limit(f: BelowLimit) -> str:
    return (f"{_REFUSED}it measured {f.ms:.4g} ms, below this GPU's physical limit of {f.limit_ms:.4g} ms "
            f"({f.bound}). No kernel is that fast: the timer did not see the work (work on another stream or "
            f"thread, or after the timer stopped), or the work was not done.")


@dataclass(frozen=True)
class Tampered:
    """Names the learner's code rebound, or switches it threw, while it ran."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    names: tuple[str, ...]


def _tampered(f: Tampered) -> str:
    names = ", ".join(f"`{n}`" for n in f.names[:6]) + (f" and {len(f.names) - 6} more" if len(f.names) > 6 else "")
    return (f"{_REFUSED}your code changed {names} while it ran. The timer, PyTorch's functions and its settings "
            f"belong to the grader (a patched timer lies; a slowed baseline flatters): a kernel or wrapper may "
            f"only compute, and must leave the process as it found it.")


@dataclass(frozen=True)
class HiddenWork:
    """The host's clock, to a device-wide synchronise, well above the events on the learner's stream."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    event_ms: float
    wall_ms: float
    overhead_ms: float


def _hidden_work(f: HiddenWork) -> str:
    return (f"{_REFUSED}a call took {f.wall_ms:.4g} ms to finish on the GPU, but the events on its stream saw "
            f"{f.event_ms:.4g} ms (the timer's own overhead is {f.overhead_ms:.3g} ms): work ran where the timer "
            f"cannot see it, on another CUDA stream. Launch every kernel on the current stream.")


@dataclass(frozen=True)
class ThreadsStarted:
    kind: ClassVar = FailureKind.BENCH_REJECTED
    count: int
    call: int  # after which call a thread was first seen (0: the first, untimed one)


def _threads_started(f: ThreadsStarted) -> str:
    when = "the first call" if f.call <= 0 else f"timed call {f.call}"
    return (f"{_REFUSED}your code left {plural(f.count, 'thread')} running after {when} returned. Work a thread "
            f"does after the call returns is not timed; a call must finish its work before it returns.")


@dataclass(frozen=True)
class Reached:
    """An audit event the learner's code raised while it ran (the garbage collector, frames, ctypes, hooks)."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    event: str
    file: str = ""
    line: int = 0


def _reached(f: Reached) -> str:
    where = f" at {f.file.rsplit('/', 1)[-1]}:{f.line}" if f.file else ""
    return (f"{_REFUSED}your code called `{f.event}`{where} while the bench ran it. That reaches past its own "
            f"tensors (to the grader's objects, frames, memory or hooks), which a kernel or wrapper has no need of.")


@dataclass(frozen=True)
class NotPlain:
    """Results that were not plain tensors (a subclass can compute when read, after the timer)."""

    kind: ClassVar = FailureKind.BENCH_REJECTED
    names: tuple[str, ...]


def _not_plain(f: NotPlain) -> str:
    return (f"{_REFUSED}{', '.join(f.names)} came back as an object that is not a plain torch.Tensor. A tensor "
            f"subclass can do its work when it is read, after the timer stopped: return plain tensors.")


@dataclass(frozen=True)
class PersistingL2:
    kind: ClassVar = FailureKind.BENCH_REJECTED
    limit: int   # bytes of L2 set aside for persisting lines
    window: int  # bytes of the stream's access policy window


def _persisting_l2(f: PersistingL2) -> str:
    return (f"{_REFUSED}your code set aside L2 cache for persisting lines (a carve-out of {f.limit} bytes, "
            f"an access policy window of {f.window} bytes). The bench flushes L2 before each call so that every "
            f"call reads its inputs from memory, as in a model where the tensors do not stay in cache.")


@dataclass(frozen=True)
class Unfinished:
    """The worker that timed ``--bench`` (or counted ``--perf``) gave no answer: it died
    (``returncode``, None where it wrote garbage into the channel; ``stderr_tail``), or ran past
    ``limit`` (its words, kind TIMEOUT)."""

    kind: FailureKind
    what: str  # "the benchmark", "the run"
    returncode: int | None = None
    stderr_tail: str = ""
    limit: str = ""


def _unfinished(f: Unfinished) -> str:
    if f.kind == FailureKind.TIMEOUT:
        return f"{f.what} did not finish: it ran past its limit ({f.limit})."
    last = last_line(f.stderr_tail, "nothing on stderr")
    if f.returncode is None:
        return f"{f.what} did not finish: the process running your code broke the grader's channel ({last})."
    said = (f"{f.what} did not finish: the process running your code died "
            f"({ended(f.returncode)}; its last words: {last}).")
    if f.returncode == -9:
        said += " A process killed by signal 9 was most often out of memory: the largest size needs the most."
    return said


register(VALUE_KINDS, {TimedCall: _timed_call})
register((FailureKind.CRASH, FailureKind.TIMEOUT), {Unfinished: _unfinished})
register(FailureKind.BENCH_REJECTED, {BelowLimit: _below_limit, Tampered: _tampered, HiddenWork: _hidden_work,
                            ThreadsStarted: _threads_started, Reached: _reached, NotPlain: _not_plain,
                            PersistingL2: _persisting_l2})
