"""How ``--bench`` plans and judges a size of a kernel's sweep (a Helion kernel's too: it is
planned as a kernel's). Plain data and torch, nothing of the runner."""
from __future__ import annotations

from grader.course.dtypes import tensor_bytes
from grader.judge.kinds.kind import SizePlan, described


def bench_plan(puzzle, shapes, plan, header: dict, device: str) -> SizePlan:
    """The size's inputs and the output buffers the kernel writes, judged against the spec's outputs."""
    header = header | {"inputs": [described(x) for x in plan.inputs],
                       "outputs": [{"name": b.name, "dtype": b.dtype, "shape": list(b.shape)}
                                   for b in plan.output_buffers],
                       "values": dict(plan.values), "grid": list(plan.grid)}
    return SizePlan(header, [tensor_bytes(x) for x in plan.inputs], puzzle.outputs,
                    tuple(tuple(b.shape) for b in plan.output_buffers), plan.expected, tuple(plan.inputs), filled=True)


def baseline_results(puzzle, planned: SizePlan, device: str) -> dict:
    """The Bench's baseline on the size's inputs: its results, named by ``Bench.baseline_outputs``."""
    from grader.course.puzzle import with_case_values
    bench = puzzle.bench
    got = with_case_values(bench.baseline, [x.to(device) for x in planned.inputs],
                           {**puzzle.variant_values, **planned.header["values"]})
    got = got() if bench.baseline_prepares else got
    return dict(zip(bench.baseline_outputs, got if isinstance(got, tuple) else (got,)))
