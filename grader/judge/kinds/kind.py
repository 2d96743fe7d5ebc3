"""What a kind of puzzle is, to the grader: the description each module of :mod:`grader.judge.kinds`
gives of its kind. Plain data and the callables it names; nothing here imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from grader.course.dtypes import dtype_name, tensor_bytes

if TYPE_CHECKING:
    from grader.course.puzzle import Puzzle
    from grader.judge.plan import CasePlan, SpecShapes


@dataclass(frozen=True)
class SizePlan:
    """One size of ``--bench``'s sweep made concrete: what the worker is sent, and what is expected back."""

    header: dict
    blobs: list
    names: tuple[str, ...]       # what each returned tensor is (an output, or grad_<input>)
    shapes: tuple                # the shape each comes back in (an output's buffer may be a partial one)
    expected: tuple              # one tensor per name (None: nothing to compare, an integer input)
    inputs: tuple = ()           # the planned inputs (on the CPU), as sent
    filled: bool = False         # the worker fills what comes back with the grader's NaN before each call


def described(x) -> dict:
    """A tensor as a bench request's header names it."""
    return {"dtype": dtype_name(x), "shape": list(x.shape)}


def kernel_size_plan(puzzle, shapes, plan, header: dict, device: str) -> SizePlan:
    """A size of a kernel's sweep (a Helion kernel's too): the inputs and the output buffers the
    kernel writes, judged against the spec's outputs. Here, beside ``BenchPlan``, because two kinds
    name it and ``--bench`` (``grader.judge.bench``) asks the kinds, never the other way."""
    header = header | {"inputs": [described(x) for x in plan.inputs],
                       "outputs": [{"name": b.name, "dtype": b.dtype, "shape": list(b.shape)}
                                   for b in plan.output_buffers],
                       "values": dict(plan.values), "grid": list(plan.grid)}
    return SizePlan(header, [tensor_bytes(x) for x in plan.inputs], puzzle.outputs,
                    tuple(tuple(b.shape) for b in plan.output_buffers), plan.expected, tuple(plan.inputs), filled=True)


def kernel_baseline_results(puzzle, planned: SizePlan, device: str) -> dict:
    """The Bench's baseline on a kernel's size: its results, named by ``Bench.baseline_outputs``."""
    from grader.course.puzzle import with_case_values
    bench = puzzle.bench
    got = with_case_values(bench.baseline, [x.to(device) for x in planned.inputs],
                           {**puzzle.variant_values, **planned.header["values"]})
    got = got() if bench.baseline_prepares else got
    return dict(zip(bench.baseline_outputs, got if isinstance(got, tuple) else (got,)))


@dataclass(frozen=True)
class BenchPlan:
    """How ``--bench`` (:mod:`grader.judge.bench.run`) plans a puzzle of the kind, and names what it timed."""

    blocks: bool  # whether the Bench's blocks are given to each size, as a case's (a kernel's tile sizes)
    # (puzzle, its SpecShapes, the size planned as a case, the header so far, where the spec runs) -> SizePlan
    plan: Callable[[Puzzle, SpecShapes, CasePlan, dict, str], SizePlan]
    what: str  # what the timings are of: "kernel", "forward + backward"
    # (puzzle, the SizePlan, where to run) -> {name: the baseline's result}, for Bench.baseline_outputs
    baseline_results: Callable[[Puzzle, SizePlan, str], dict] | None = None
    spec_named: str | None = None  # the baseline's name where the spec is the baseline; None: the Bench's baseline_name
    missing: str = ""  # why --bench cannot time a puzzle of this kind yet; "": it can


@dataclass(frozen=True)
class Check:
    """A check a kind lists beside its cases (the sm_90 compile): begun before the first case, on a
    thread of its own, its CheckResult (None: nothing was checked) awaited once the cases are done."""

    name: str  # its entry in the result's checks: a CheckName
    # (the kind's runner, the kernel's parameters) -> what ``.result()`` gives its CheckResult, or None
    # where it does not run (no compile checker)
    start: Callable[[object, list], object]
    # True: no case counts until it passes (its failure is the verdict, the cases shown beside it);
    # False: judged after the cases, where it can only fail a pass
    gate: bool


@dataclass(frozen=True)
class PuzzleKind:
    """One kind of puzzle, as its package in :mod:`grader.judge.kinds` describes it."""

    name: str            # as a puzzle file writes it: Puzzle(kind="kernel")
    called: str          # how messages name such a puzzle: "an autograd puzzle"
    # Its case runner's class (a grader.judge.case_run.CaseRunner), imported when first asked: it imports
    # torch. The life cycle (grader.judge.grade) is given the kind: it cannot ask this registry, which
    # names the runners (a circle).
    runner: Callable[[], type]
    order: int           # when many are graded, lower first: the longest kinds start first
    pictures: bool       # whether a failing case is drawn as memory-access pictures (one traced launch)
    viewer: bool         # whether triton-viz can show a case (it traces one kernel launch)
    bench: BenchPlan
    # --perf: the tensors a run is sent, from the spec's (name, dtype, shape) inputs and outputs:
    # (made in the worker, passed to the run) -> (inputs, outputs the grader allocates)
    perf_tensors: Callable[[list, list], tuple[list, list]] = lambda inputs, outputs: (inputs, outputs)
    # --perf: why it gives no estimate for this kind, said before any worker starts; "": it gives one
    perf_refused: str = ""
    # The checks beside its cases, imported when first asked (each a Check)
    checks: Callable[[], tuple[Check, ...]] = lambda: ()
    warm: frozenset[str] = frozenset()  # what its worker's zygote imports once, before its forks
    decorator: str = "@triton.jit"      # what the expected signature is written with, in messages
