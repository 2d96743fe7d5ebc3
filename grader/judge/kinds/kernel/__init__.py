"""A kernel puzzle: the learner writes one ``@triton.jit`` kernel, which the grader launches on
the puzzle's grid with each case's fenced buffers (:class:`grader.judge.kinds.kernel.run.KernelRunner`),
compiled for sm_90 beside the cases (:mod:`grader.judge.kinds.kernel.gpu_compile`)."""
from __future__ import annotations

from grader.judge.kinds.kind import BenchPlan, PuzzleKind, kernel_baseline_results, kernel_size_plan


def _runner() -> type:
    from grader.judge.kinds.kernel.run import KernelRunner  # imports torch: only once a puzzle is graded
    return KernelRunner


def _checks() -> tuple:
    from grader.judge.kinds.kernel.gpu_compile import CHECK
    return (CHECK,)


KIND = PuzzleKind(
    name="kernel", called="a kernel puzzle", runner=_runner, checks=_checks, order=1, pictures=True, viewer=True,
    bench=BenchPlan(blocks=True, plan=kernel_size_plan, what="kernel", baseline_results=kernel_baseline_results))
