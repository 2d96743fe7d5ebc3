"""``--bench``: time a puzzle's kernel on the GPU and report it against the device and PyTorch.

This module runs the benchmark; its result (:class:`grader.judge.bench_model.BenchResult`, one
``Row`` per size) is rendered by :mod:`grader.report.bench` (text, JSON, a plot).

Each size of the puzzle's sweep is planned as a graded case is (:mod:`grader.judge.plan`: the same
inputs, ``mantissa_bits`` included) and sent to a cuda worker, which runs the kernel once,
sends back what it wrote, then times it, the baseline (and ``torch.compile`` of it, where the
puzzle's Bench asks) and a device-to-device copy of the same byte count. What it wrote is
judged here, as grading judges it (:func:`grader.judge.compare.compare_tensor`, with the puzzle's
tolerance), so a fast wrong kernel is not reported as fast.

Figures per size: milliseconds, GB/s (from the least traffic any implementation needs), the
fraction of the copy's GB/s at that size, and the speed-up over each baseline. A result above
the copy bandwidth is flagged: it means the byte count is wrong or the kernel did not do the work.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Mapping

from grader.channel import wire
from grader.judge.bench_model import BenchResult, Row
from grader.course.loader import Course, CourseError
from grader.course.dtypes import DTYPES, dtype_name
from grader.judge.kinds import kind_of
from grader.judge.kinds.kind import SizePlan
from grader.judge.options import Options
from grader.judge.results import FailureKind
from grader.course.puzzle import Case, Puzzle
from grader.channel.worker_pool import WorkerDied, WorkerTimedOut
from grader.judge.session import Grading


def bench_case(puzzle: Puzzle, sizes: Mapping) -> Case:
    """A size of the sweep as a case, so that it is planned as the graded cases are."""
    return Case("bench", dict(sizes), dict(puzzle.bench.blocks) if kind_of(puzzle).bench.blocks else {},
                dtypes=dict(puzzle.bench.dtypes))


def plan_size(puzzle: Puzzle, sizes: Mapping, shapes=None, device: str = "cpu") -> SizePlan:
    """The size's inputs and expected results, from :class:`grader.judge.plan.SpecShapes` as grading
    makes them, planned as the puzzle's kind plans a size (an autograd function also gets the
    gradient flowing into its output and is judged on the gradients of its inputs). ``device``:
    where the spec (and its backward) runs: the GPU for the sweep's sizes, which the CPU would
    take minutes over (attention); the inputs are made on the CPU either way, as grading makes them."""
    from grader.judge.plan import SpecShapes
    shapes = shapes or SpecShapes(puzzle)
    case = bench_case(puzzle, sizes)
    plan = shapes.plan(case, device=device)
    header = {"sizes": dict(sizes), "traffic": int(puzzle.bench.bytes(sizes))}
    return kind_of(puzzle).bench.plan(puzzle, shapes, plan, header, device)


def _returned(info: dict, blob: bytes):
    """A tensor the worker sent back, or None where it is not one this side can read."""
    import torch
    try:
        if info.get("dtype") not in DTYPES:
            return None
        dtype = getattr(torch, info["dtype"])
        flat = torch.frombuffer(bytearray(blob), dtype=dtype) if blob else torch.empty(0, dtype=dtype)
        return flat.reshape([int(n) for n in info["shape"]]).clone()
    except (KeyError, TypeError, ValueError, RuntimeError):
        return None


def check_size(puzzle: Puzzle, planned: SizePlan, described: list, raw: list):
    """What the kernel wrote at one size, judged as a graded case is: the tolerance for the
    output's dtype (the Bench's own where it sets one, for sums over the sweep's long axes), the
    host's reduction of a partial buffer, NaN where an element was never written."""
    from grader.judge.compare import Outcome, compare_tensor
    if len(described) != len(planned.names) or len(raw) != len(planned.names):
        return Outcome(False, FailureKind.MISMATCH, f"{len(raw)} tensor(s) came back, {len(planned.names)} expected")
    worst = 0.0
    for name, shape, info, blob, want in zip(planned.names, planned.shapes, described, raw, planned.expected):
        if want is None:
            continue
        got = _returned(info, blob)
        if got is None or tuple(got.shape) != tuple(shape):
            return Outcome(False, FailureKind.MISMATCH, f"`{name}` came back as {info}, not as the planned tensor")
        dtype = dtype_name(want)
        atol, rtol = puzzle.bench.tolerances.get(dtype) or puzzle.tolerance(dtype)
        outcome = compare_tensor(name, got, want, atol, rtol, on_gpu=True, reduce=puzzle.host_reduce.get(name),
                                 filled=False)
        if not outcome.passed:
            return outcome
        worst = max(worst, outcome.max_abs_err or 0.0)
    return Outcome(True, max_abs_err=worst)


def run_bench(grading: Grading, puzzle_id: str, kernel_file: Path) -> BenchResult:
    """The size sweep of ``puzzle_id``'s benchmark, timed by ``grading``'s CUDA worker."""
    course = grading.course
    puzzle = course.puzzle(puzzle_id)
    if puzzle.bench is None:
        with_bench = [p for p in course.ids if course.puzzle(p).bench is not None]
        raise CourseError(f"{puzzle_id} has no benchmark; these do: {', '.join(with_bench) or 'none'}")
    from grader.judge.plan import SpecShapes
    shapes = SpecShapes(puzzle)
    worker = grading.worker()
    left = Options.BENCH_TIMEOUT  # the worker's time for the whole sweep, as when it was one request
    rows, reply = [], {}
    try:
        for sizes in puzzle.bench.sizes:
            planned = plan_size(puzzle, sizes, shapes, device="cuda")
            _release_gpu_memory()  # the spec's: the worker times next, on the same GPU
            message = wire.Bench(puzzle_file=str(course.puzzle_file(puzzle_id)), file=str(kernel_file),
                                 graphs=not any(r.get("gpu_note") for r in rows), **planned.header)
            started = time.monotonic()
            reply, raw = worker.request(message, planned.blobs, timeout=max(1.0, left))
            left -= time.monotonic() - started
            if isinstance(reply, wire.Failure):
                return BenchResult(puzzle_id, ok=False, error=reply.error or "unknown error")
            reply = wire.envelope(reply)
            result = dict(reply["result"])
            outcome = check_size(puzzle, planned, result.pop("outputs", []), raw)
            rows.append(result | {"correct": outcome.passed, "max_abs_err": outcome.max_abs_err or 0.0,
                                  "wrong": "" if outcome.passed else outcome.message})
    except (WorkerTimedOut, WorkerDied) as exc:
        return BenchResult(puzzle_id, ok=False, error=f"the benchmark did not finish: {type(exc).__name__}")
    return summarise(puzzle, {**reply, "results": rows})


def _release_gpu_memory() -> None:
    import torch
    torch.cuda.empty_cache()


def summarise(puzzle: Puzzle, reply: dict) -> BenchResult:
    """The worker's timings, with this side's check of each size, as the result model."""
    copy = reply["copy"]["gb_per_s"]
    rows = []
    for r in reply["results"]:
        values = {**puzzle.bench.blocks, **r["sizes"]}  # a mode such as CAUSAL is a block
        traffic = int(puzzle.bench.bytes(values))
        copy_ms = r.get("copy_ms")
        rows.append(Row(
            sizes=r["sizes"], traffic=traffic, ms=r["ms"], baseline_ms=r["baseline_ms"],
            copy_gb_per_s=traffic / (copy_ms * 1e-3) / 1e9 if copy_ms else copy,
            correct=r["correct"], max_abs_err=r["max_abs_err"], wrong=r.get("wrong", ""), copy_ms=copy_ms,
            compiled_ms=r.get("compiled_ms"), gpu_ms=r.get("gpu_ms"), baseline_gpu_ms=r.get("baseline_gpu_ms"),
            gpu_note=r.get("gpu_note", ""), ms_rounds=tuple(r.get("ms_rounds", ())),
            baseline_ms_rounds=tuple(r.get("baseline_ms_rounds", ())),
            compiled_ms_rounds=tuple(r.get("compiled_ms_rounds", ())),
            flops=None if puzzle.bench.flops is None else int(puzzle.bench.flops(values))))
    kind = kind_of(puzzle).bench
    # A Bench's own baseline goes by its baseline_name; the spec may go by the kind's name for it.
    baseline = puzzle.bench.baseline_name if puzzle.bench.baseline or kind.spec_named is None else kind.spec_named
    return BenchResult(
        puzzle=puzzle.id, title=puzzle.title, device=reply["device"], versions=reply["versions"],
        copy_gb_per_s=copy, copy_cached=reply["copy"]["cached"], baseline=baseline,
        compiled=f"{baseline}, compiled" if any(r.compiled_ms is not None for r in rows) else None,
        what=kind.what,
        blocks=dict(puzzle.bench.blocks), launch=dict(puzzle.bench.launch), statistic=reply["statistic"],
        rows=tuple(rows))
