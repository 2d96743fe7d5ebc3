"""A Helion puzzle: the learner writes one ``@helion.kernel`` that takes the spec's inputs and
returns its outputs, its work inside ``hl.tile`` loops; Helion lowers it to Triton
(:class:`grader.judge.grade_helion.HelionGrader`). Nothing here imports helion."""
from __future__ import annotations

from grader.judge.kinds.kernel import KIND as KERNEL
from grader.judge.kinds.kind import BenchPlan, PuzzleKind


def _grader() -> type:
    from grader.judge.grade_helion import HelionGrader  # imports torch: only once a puzzle is graded
    return HelionGrader


KIND = PuzzleKind(
    name="helion", called="a Helion puzzle", grader=_grader,
    order=0,  # Helion's import and its compiler, per case: among the longest to grade
    pictures=False, viewer=False,  # Helion launches the kernel it generates: no one traced launch to draw
    # Timed as the learner calls it, compiled by Helion with the Bench's one config
    # (grader.sandbox.kinds.helion.bench): planned, judged and compared as a kernel's size is.
    bench=BenchPlan(blocks=True, plan=KERNEL.bench.plan, what="kernel (compiled by Helion, one config)",
                    baseline_results=KERNEL.bench.baseline_results),
    perf_refused=("no estimate for a Helion kernel: --perf counts what a Triton kernel does in Triton's "
                  "interpreter, and a Helion kernel becomes Triton only inside Helion's compiler, out of its "
                  "reach. On a GPU, time it with --bench; run --verbose to see the Triton it becomes"))
