"""The result of ``--bench``: one :class:`Row` per size of a puzzle's sweep, in a
:class:`BenchResult`. Plain data, apart from the code that runs a benchmark, so that the
renderers in :mod:`grader.report` never reach a worker."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

COPY_BOUND = 0.8  # a copy at this share of the device's bandwidth (over 1 GiB) or more is bound by memory


@dataclass(frozen=True)
class Row:
    """One size: the timings (the fastest round of each; every round in ``*_rounds``) and the check."""

    sizes: Mapping
    traffic: int                   # bytes: the least memory traffic any implementation needs here
    ms: float
    baseline_ms: float
    copy_gb_per_s: float           # a copy of the same bytes at this size (the device's, where not timed)
    correct: bool
    max_abs_err: float
    wrong: str = ""                # what the comparison said, where the result is wrong
    copy_ms: float | None = None   # that copy's time; None: not timed at this size
    compiled_ms: float | None = None  # torch.compile of the baseline, where the Bench asks for it
    gpu_ms: float | None = None    # autograd functions: the step replayed as a CUDA graph (no host work)
    baseline_gpu_ms: float | None = None
    gpu_note: str = ""
    ms_rounds: tuple = ()
    baseline_ms_rounds: tuple = ()
    compiled_ms_rounds: tuple = ()
    flops: int | None = None       # compute-bound puzzles: the floating-point operations at this size
    rejected: str = ""             # why the timing cannot be trusted (grader.judge.bench.integrity); "" if it can
    limit_ms: float = 0.0          # the GPU's physical limit at this size (0: unknown)
    wall_ms: float | None = None   # the same round by the host's clock, to a device-wide synchronise
    calls: int = 0                 # timed calls per round
    checked: tuple = ()            # the timed calls whose results were judged too (1-based)
    headroom: float | None = None  # the largest share of its tolerance any element used
    input_sets: int = 1            # input sets alternated between calls
    copy_bound: bool = True        # the copy at this size ran near the device's copy bandwidth (COPY_BOUND)

    def _tflops(self, ms: float | None) -> float | None:
        return None if ms is None or self.flops is None else self.flops / (ms * 1e-3) / 1e12

    @property
    def tflops(self) -> float | None:
        return self._tflops(self.ms)

    @property
    def baseline_tflops(self) -> float | None:
        return self._tflops(self.baseline_ms)

    @property
    def compiled_tflops(self) -> float | None:
        return self._tflops(self.compiled_ms)

    def _gb_per_s(self, ms: float | None) -> float | None:
        return None if ms is None else self.traffic / (ms * 1e-3) / 1e9

    @property
    def gb_per_s(self) -> float:
        return self._gb_per_s(self.ms)

    @property
    def copy_fraction(self) -> float:
        return self.gb_per_s / self.copy_gb_per_s

    @property
    def baseline_gb_per_s(self) -> float:
        return self._gb_per_s(self.baseline_ms)

    @property
    def baseline_copy_fraction(self) -> float:
        return self.baseline_gb_per_s / self.copy_gb_per_s

    @property
    def compiled_gb_per_s(self) -> float | None:
        return self._gb_per_s(self.compiled_ms)

    @property
    def compiled_copy_fraction(self) -> float | None:
        return None if self.compiled_ms is None else self.compiled_gb_per_s / self.copy_gb_per_s

    @property
    def speedup(self) -> float:
        return self.baseline_ms / self.ms

    @property
    def compiled_speedup(self) -> float | None:
        return None if self.compiled_ms is None else self.compiled_ms / self.ms

    @property
    def host_bound(self) -> bool:
        """The step took clearly longer than its GPU work: the host could not keep the GPU busy."""
        return self.gpu_ms is not None and self.ms > 1.15 * self.gpu_ms

    @property
    def flag(self) -> str:
        """WRONG, REJECTED and IMPOSSIBLE fail the run; above a copy only asks for a look. A kernel
        that mostly reads can pass a copy, which reads and writes equally (puzzle 13 reached 1.10x
        of one on an H100): where the GPU's physical limit is known, a time below it is refused
        (``rejected``) and nothing short of it is impossible; where it is not, far above a copy is,
        if that copy ran near the device's bandwidth. A copy of a few MiB is bound by its launch
        and the L2, not by memory: puzzle 14's honest kernel reached 1.24x of one at 4096 x 1024
        on an H100, where the traffic fits the L2 and the copy ran at 58 % of its bandwidth."""
        if self.rejected:
            return "REJECTED"
        if not self.correct:
            return "WRONG RESULT"
        if self.copy_fraction > 1.1 and not self.limit_ms and self.copy_bound:
            return "IMPOSSIBLE: far above copy bandwidth; check the byte count, or whether the kernel ran"
        if self.copy_fraction > 1.0:
            return "above copy bandwidth: check"
        if self.host_bound:
            return f"host-bound: the GPU works {self.gpu_ms:.4f} ms of it"
        return self.gpu_note

    @property
    def fails(self) -> bool:
        return self.flag.startswith(("WRONG", "IMPOSSIBLE", "REJECTED"))


@dataclass(frozen=True)
class BenchResult:
    """A benchmark of one puzzle: its rows, or why there are none (``ok`` false, ``error``)."""

    puzzle: str
    ok: bool = True
    error: str = ""
    title: str = ""
    what: str = ""                  # "kernel", or "forward + backward"
    device: str = ""
    versions: Mapping = field(default_factory=dict)
    copy_gb_per_s: float = 0.0      # the device's copy bandwidth, over 1 GiB
    copy_cached: bool = False
    baseline: str = ""              # the baseline's name
    compiled: str | None = None     # the compiled baseline's name, where one was timed
    blocks: Mapping = field(default_factory=dict)
    launch: Mapping = field(default_factory=dict)
    statistic: str = ""
    rows: tuple[Row, ...] = ()
    peak_gb_per_s: float | None = None  # the GPU's memory peak, from the driver (the physical limits' source)
    peak_tflops: float | None = None    # its dense 16-bit tensor peak

    @property
    def fails(self) -> bool:
        """The run did not finish, or a size is wrong or impossibly fast."""
        return not self.ok or any(r.fails for r in self.rows)
