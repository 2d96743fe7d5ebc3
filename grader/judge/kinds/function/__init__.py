"""An autograd puzzle: the learner writes a ``torch.autograd.Function`` whose forward and
backward launch their own kernels; it is recorded on tensors without values, then replayed
(:class:`grader.judge.kinds.function.run.FunctionRunner`). It lists no check beside its cases: each
launch the wrapper made compiles beside the replays, and fails the cases it belongs to."""
from __future__ import annotations

from grader.channel.kinds.function import FunctionWarmStep
from grader.course.dtypes import tensor_bytes
from grader.judge.kinds.kind import BenchPlan, PuzzleKind, SizePlan, described


def _runner() -> type:
    from grader.judge.kinds.function.run import FunctionRunner  # imports torch: only once a puzzle is graded
    return FunctionRunner


def _bench_plan(puzzle, shapes, plan, header: dict, device: str) -> SizePlan:
    """The size's inputs and the gradient flowing into the output (seeded as grading seeds it);
    judged on the gradients of the inputs, from the spec's backward run on ``device``."""
    import torch

    from grader.judge.plan import case_seed
    leaves = [x.to(device, copy=True).requires_grad_(x.is_floating_point()) for x in plan.inputs]
    output = puzzle.run_spec(leaves, plan.values)
    gen = torch.Generator().manual_seed(case_seed(puzzle, plan.case) + 1)
    grad_output = torch.randn(output.shape, generator=gen, dtype=output.dtype)
    output.backward(grad_output.to(device))
    sent = [*plan.inputs, grad_output]
    header = header | {"inputs": [described(x) for x in sent], "values": dict(plan.values)}
    return SizePlan(header, [tensor_bytes(x) for x in sent], tuple(f"grad_{s.name}" for s in shapes.inputs),
                    tuple(tuple(x.shape) for x in leaves),
                    tuple(None if x.grad is None else x.grad.cpu() for x in leaves), tuple(sent))


def _baseline_results(puzzle, planned: SizePlan, device: str) -> dict:
    """Autograd through the Bench's baseline on the size's inputs: the gradients, named ``grad_<input>``."""
    from grader.course.puzzle import with_case_values
    *inputs, grad_output = planned.inputs
    leaves = [x.to(device, copy=True).requires_grad_(x.is_floating_point()) for x in inputs]
    with_case_values(puzzle.bench.baseline, leaves,
                     {**puzzle.variant_values, **planned.header["values"]}).backward(grad_output.to(device))
    return {name: leaf.grad for name, leaf in zip(planned.names, leaves) if name in puzzle.bench.baseline_outputs}


def _perf_tensors(inputs: list, outputs: list) -> tuple[list, list]:
    """The inputs, then the gradient flowing into the output, as the bench sends them; the
    wrapper allocates its own outputs."""
    name, dtype, shape = outputs[0]
    return [*inputs, ("grad_output", dtype, shape)], []


KIND = PuzzleKind(
    name="function", called="an autograd puzzle", runner=_runner,
    warm=frozenset({FunctionWarmStep.FAKE_TENSORS}),  # the recording's: warmed once in the zygote, before its fork
    order=0,  # recorded, then replayed with each launch compiled: the longest to grade
    pictures=False, viewer=False,  # a case is many launches of the learner's choosing
    bench=BenchPlan(blocks=False, plan=_bench_plan, what="forward + backward", baseline_results=_baseline_results,
                    spec_named="PyTorch autograd"),
    perf_tensors=_perf_tensors)
