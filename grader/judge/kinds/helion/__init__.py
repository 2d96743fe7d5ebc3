"""A Helion puzzle: the learner writes one ``@helion.kernel`` that takes the spec's inputs and
returns its outputs, its work inside ``hl.tile`` loops; Helion lowers it to Triton
(:class:`grader.judge.kinds.helion.run.HelionRunner`), which is compiled for sm_90 beside the cases
and judged after them (:mod:`grader.judge.kinds.helion.gpu_compile`). Nothing here imports helion."""
from __future__ import annotations

from grader.channel.kinds.helion import HelionWarmStep
from grader.judge.kinds.kind import BenchPlan, PuzzleKind, kernel_baseline_results, kernel_size_plan


def _runner() -> type:
    from grader.judge.kinds.helion.run import HelionRunner  # imports torch: only once a puzzle is graded
    return HelionRunner


def _checks() -> tuple:
    from grader.judge.kinds.helion.gpu_compile import CHECK
    return (CHECK,)


KIND = PuzzleKind(
    name="helion", called="a Helion puzzle", runner=_runner, checks=_checks,
    # Helion's import, once in the zygote before its forks: every Helion puzzle's worker starts with it.
    # (The compile worker imports Helion only where its Triton calls Helion's helpers.)
    warm=frozenset({HelionWarmStep.HELION}), decorator="@helion.kernel",
    order=0,  # Helion's import and its compiler, per case: among the longest to grade
    pictures=False, viewer=False,  # Helion launches the kernel it generates: no one traced launch to draw
    # Timed as the learner calls it, compiled by Helion with the Bench's one config
    # (grader.sandbox.kinds.helion.bench): planned, judged and compared as a kernel's size is.
    bench=BenchPlan(blocks=True, plan=kernel_size_plan, what="kernel (compiled by Helion, one config)",
                    baseline_results=kernel_baseline_results),
    perf_refused=("no estimate for a Helion kernel: --perf counts what a Triton kernel does in Triton's "
                  "interpreter, and a Helion kernel becomes Triton only inside Helion's compiler, out of its "
                  "reach. On a GPU, time it with --bench; run --verbose to see the Triton it becomes"))
