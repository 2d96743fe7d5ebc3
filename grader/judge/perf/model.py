"""The result of ``--perf``: what a kernel would cost on an H100, estimated without one.

Plain data, as :mod:`grader.judge.bench.model` is for ``--bench``, so that the renderers in
:mod:`grader.report` never reach a worker. :mod:`grader.judge.perf.run` makes it;
:mod:`grader.judge.perf.estimate` holds the model its times come from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class LineCost:
    """One line's loads (or stores, or atomics) of one tensor, scaled to the whole grid."""

    kernel: str
    tensor: str
    op: str
    line: int | None
    source: str
    bytes: int               # what the lanes the mask let through asked for
    moved: int               # 32-byte sectors those requests touched, in bytes (what L2 sends the SMs)
    active_fraction: float   # lanes the mask let through, of all lanes asked for

    @property
    def sector_use(self) -> float:
        """Of each 32-byte sector moved, the fraction the lanes used (1.0: perfectly coalesced)."""
        return self.bytes / self.moved if self.moved else 1.0


@dataclass(frozen=True)
class LaunchCost:
    """One kernel launch (of an autotuned one, the config the estimate would pick)."""

    kernel: str
    config: str
    grid: tuple[int, int, int]
    programs: int
    interpreted: int
    num_warps: int
    num_stages: int
    registers: int | None    # per thread, from ptxas; None where the sm_90 compile could not be made
    spill_bytes: int | None
    shared: int | None       # bytes per program
    resident: int            # programs one SM holds at once (occupancy)
    tensor_cores: str        # "wgmma", "mma", "" (none), "?" (not compiled)
    loaded: int              # bytes the lanes asked for
    stored: int
    dram_read: int           # estimated bytes from memory, after what L2 keeps
    dram_written: int
    l2_moved: int            # sectors moved between L2 and the SMs, in bytes
    flops: Mapping[str, int]  # tl.dot FLOPs by precision (fp16, tf32, fp32, ...)
    lane_ops: int
    slow_ops: int
    atomics: int
    ms: float
    terms: Mapping[str, float]  # what each resource alone would take, in ms
    bound: str               # the term that dominates
    alternatives: tuple[tuple[str, float], ...] = ()  # an autotuner's configs: (label, estimated ms)
    lines: tuple[LineCost, ...] = ()
    reads: tuple[tuple[str, float], ...] = ()  # (tensor, how many times over its footprint the lanes read it)
    compile_note: str = ""
    planned: int = 0         # programs the sample chose; ``interpreted`` ran (fewer: the time budget ran out)
    loops_sampled: int = 0   # loops of which a sample of iterations ran, summed over the programs interpreted
    rounds: float = 0.0      # trips to memory each program waits for in turn
    reductions: float = 0.0  # reductions and scans per program
    staged: int = 0          # shared-memory loads and stores per thread in the loops of a launch with tl.dot


@dataclass(frozen=True)
class PerfProfile:
    """One implementation at the size: its launches, PyTorch's operators around them, the estimate."""

    who: str                 # "yours" or "reference"
    file: str
    ms: float = 0.0
    launches: tuple[LaunchCost, ...] = ()
    torch_ops: tuple[tuple[str, int, int], ...] = ()  # (operator, calls, bytes)
    torch_ms: float = 0.0
    findings: tuple[str, ...] = ()
    seconds: float = 0.0     # how long the interpreter took
    error: str = ""
    wrong: str = ""          # why grading fails this kernel ("" where it passes, or was not graded)
    notes: tuple[str, ...] = ()  # the grade's notes of a faster way (LookAlike.faster), as the grade says them
    uncertain: tuple[str, ...] = ()  # why the estimate may be off by more than its usual error

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def dram_bytes(self) -> int:
        return sum(l.dram_read + l.dram_written for l in self.launches)

    @property
    def loaded(self) -> int:
        return sum(l.loaded for l in self.launches)

    @property
    def stored(self) -> int:
        return sum(l.stored for l in self.launches)

    @property
    def flops(self) -> int:
        return sum(sum(l.flops.values()) for l in self.launches)

    @property
    def bound(self) -> str:
        """What bounds the launch that takes longest."""
        return max(self.launches, key=lambda l: l.ms).bound if self.launches else ""


@dataclass(frozen=True)
class PerfResult:
    """``--perf`` for one puzzle at one size: yours beside the course's reference."""

    puzzle: str
    title: str
    case: str                # "the bench's headline size", or the case's name
    sizes: Mapping
    device: str              # what the estimate is for
    minimum_bytes: int       # the least traffic any implementation needs (the Bench's byte formula)
    minimum_flops: int | None
    limit_ms: float          # the physical floor: those bytes at peak bandwidth, those FLOPs at peak
    limit_by: str            # "memory" or "tensor cores"
    yours: PerfProfile
    reference: PerfProfile | None = None
    model: Mapping = field(default_factory=dict)  # the calibration's figures, for the report's footnote

    @property
    def fraction_of_limit(self) -> float | None:
        return self.limit_ms / self.yours.ms if self.yours.ok and self.yours.ms else None
