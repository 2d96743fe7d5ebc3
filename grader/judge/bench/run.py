"""``--bench``: time a puzzle's kernel on the GPU and report it against the device and PyTorch.

This module runs the benchmark; its result (:class:`grader.judge.bench.model.BenchResult`, one
``Row`` per size) is rendered by :mod:`grader.report.bench` (text, JSON, a plot).

Each size of the puzzle's sweep is planned as a graded case is (:mod:`grader.judge.plan`: the same
inputs, ``mantissa_bits`` included), twice, with two seeds: two input sets, which the worker
alternates at random between timed calls (:mod:`grader.sandbox.bench.loop`). The worker runs the
kernel once on the first set, then times it against the baseline (and ``torch.compile`` of it,
where the puzzle's Bench asks) and a device-to-device copy of the same byte count, and sends back
what the first call, a timed call drawn at random and the last timed call wrote. Each is judged
here against its own set's expected results (:mod:`grader.judge.bench.tolerance`: at these sizes
the tolerance follows PyTorch's own error), so a fast wrong kernel is not reported as fast,
nor one that is right only on the first calls.

What the worker watched, and the GPU's physical limits (:mod:`grader.judge.bench.integrity`),
decide whether the timing can be trusted at all: a size it cannot is REJECTED, and the sweep
stops there.

Figures per size: milliseconds, GB/s (from the least traffic any implementation needs), the
fraction of the copy's GB/s at that size, and the speed-up over each baseline.
"""
from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from grader.channel import wire, wire_measure
from grader.channel.protocol import MAX_MESSAGE
from grader.channel.worker_errors import WorkerDied, WorkerTimedOut
from grader.course.dtypes import DTYPES, dtype_name
from grader.course.loader import CourseError
from grader.course.puzzle import Case, Puzzle
from grader.judge import asking, failures
from grader.judge.bench.integrity import device_peaks, findings, limit_ms
from grader.judge.bench.model import COPY_BOUND, BenchResult, Row
from grader.judge.failures import FailureKind
from grader.judge.kinds import kind_of
from grader.judge.kinds.kind import SizePlan
from grader.judge.options import Options

if TYPE_CHECKING:
    from grader.judge.session import Grading

SETS = 2  # input sets per size: the worker alternates them at random between timed calls


def bench_case(puzzle: Puzzle, sizes: Mapping, seed: int = 0) -> Case:
    """A size of the sweep as a case, so that it is planned as the graded cases are."""
    return Case("bench", dict(sizes), dict(puzzle.bench.blocks) if kind_of(puzzle).bench.blocks else {},
                dtypes=dict(puzzle.bench.dtypes), seed=seed)


def plan_size(puzzle: Puzzle, sizes: Mapping, shapes=None, device: str = "cpu", seed: int = 0) -> SizePlan:
    """The size's inputs and expected results, from :class:`grader.judge.plan.SpecShapes` as grading
    makes them, planned as the puzzle's kind plans a size (an autograd function also gets the
    gradient flowing into its output and is judged on the gradients of its inputs). ``device``:
    where the spec (and its backward) runs: the GPU for the sweep's sizes, which the CPU would
    take minutes over (attention); the inputs are made on the CPU either way, as grading makes them.
    ``seed``: which input set."""
    from grader.judge.plan import SpecShapes
    shapes = shapes or SpecShapes(puzzle)
    case = bench_case(puzzle, sizes, seed)
    plan = shapes.plan(case, device=device)
    header = {"sizes": dict(sizes), "traffic": int(puzzle.bench.bytes(sizes))}
    return kind_of(puzzle).bench.plan(puzzle, shapes, plan, header, device)


def yardsticks(puzzle: Puzzle, planned: SizePlan, device: str) -> dict:
    """PyTorch's own error on each output the Bench's baseline computes (``Bench.baseline_outputs``),
    measured here, in the grader's process, on the size's first input set."""
    from grader.judge.bench.tolerance import measure
    names = puzzle.bench.baseline_outputs
    if not names:
        return {}
    unknown = [n for n in names if n not in planned.names]
    if unknown:
        raise ValueError(f"{puzzle.id}: Bench.baseline_outputs names {unknown}, which the bench does not check "
                         f"(it checks {', '.join(planned.names)})")
    theirs = kind_of(puzzle).bench.baseline_results(puzzle, planned, device)
    found = {}
    for name in names:
        want = planned.expected[planned.names.index(name)]
        stick = measure(name, puzzle.bench.baseline_name, want.to(device), theirs[name])
        if stick is not None:
            found[name] = stick
    return found


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


def judge_size(puzzle: Puzzle, planned: SizePlan, described: list, raw: list, sticks: Mapping | None = None,
               device: str = "cpu"):
    """(the outcome, the largest share of its allowance any element used) of what came back for
    one call: each output against its set's expected result, as the bench's tolerance says
    (:mod:`grader.judge.bench.tolerance`), after the host's reduction of a partial buffer.
    ``device``: where to compare (the GPU's 67M-element outputs take seconds on a CPU)."""
    from grader.judge.bench.tolerance import compare, headroom
    from grader.judge.compare import Comparison
    if len(described) != len(planned.names) or len(raw) != len(planned.names):
        return Comparison(False, FailureKind.MISMATCH,
                          f"{len(raw)} tensor(s) came back, {len(planned.names)} expected"), 0.0
    worst, used = 0.0, 0.0
    wants = planned.expected
    if puzzle.check is not None:  # graded by properties: against what this call's own choices give
        wants, facts = _by_properties(puzzle, planned, described, raw, device)
        if facts is not None:
            return Comparison.failed(facts), 0.0
    for name, shape, info, blob, want in zip(planned.names, planned.shapes, described, raw, wants):
        if want is None:
            continue
        got = _returned(info, blob)
        if got is None or tuple(got.shape) != tuple(shape):
            return Comparison(False, FailureKind.MISMATCH,
                              f"`{name}` came back as {info}, not as the planned tensor"), 0.0
        dtype = dtype_name(want)
        atol, rtol = puzzle.bench.tolerances.get(dtype) or puzzle.tolerance(dtype)
        stick = (sticks or {}).get(name)
        reduce = puzzle.host_reduce.get(name)
        got, want = got.to(device), want.to(device)
        outcome = compare(name, got, want, atol, rtol, stick, reduce, planned.filled)
        if not outcome.passed:
            return outcome, 0.0
        worst = max(worst, outcome.max_abs_err or 0.0)
        used = max(used, headroom(reduce(got) if reduce else got, want, atol, rtol, stick))
    return Comparison(True, max_abs_err=worst), used


def _by_properties(puzzle: Puzzle, planned: SizePlan, described: list, raw: list, device: str):
    """(what the call should have written given its own choices, the properties' failure or None):
    ``Puzzle.check`` on this one call; the reruns are grading's."""
    from grader.course.puzzle_parts import Run
    from grader.judge import properties
    got = [_returned(info, blob) for info, blob in zip(described, raw)]
    if any(g is None for g in got):
        return planned.expected, None  # the comparison names what came back wrong
    values = {**puzzle.bench.blocks, **planned.header["sizes"]}
    inputs, got = tuple(x.to(device) for x in planned.inputs), tuple(g.to(device) for g in got)
    return properties.expected(puzzle.check, values, inputs, got), properties.judged(puzzle, [Run(values, inputs, got)])


def check_size(puzzle: Puzzle, planned: SizePlan, described: list, raw: list, sticks: Mapping | None = None):
    """What the kernel wrote at one size, judged (see :func:`judge_size`)."""
    return judge_size(puzzle, planned, described, raw, sticks)[0]


def _checked(puzzle: Puzzle, sets: Sequence[SizePlan], result: dict, raw: list, sticks, device: str = "cpu") -> dict:
    """The first call's outputs, then each checked timed call's, against their own sets."""
    n = len(sets[0].names)
    first, used = judge_size(puzzle, sets[0], result.pop("outputs", []), raw[:n], sticks, device)
    row = {"correct": first.passed, "max_abs_err": first.max_abs_err or 0.0, "wrong": "" if first.passed
           else first.message, "headroom": used, "checked": [c["call"] for c in result.get("checked", [])]}
    offset, sets_of = n, {0: 0}  # call -> its input set (the first call's is set 0)
    for check in result.pop("checked", []):
        sets_of[check["call"]] = check["input_set"]
        if check.get("same_as") is not None:  # the same bytes as an earlier call on the same inputs: its verdict
            if sets_of.get(check["same_as"]) != check["input_set"] and row["correct"]:
                row["correct"] = False
                row["wrong"] = (f"timed call {check['call']} of {check['calls']} was said to repeat call "
                                f"{check['same_as']}, which was not on its inputs: its results were not sent")
            continue
        got = raw[offset:offset + len(check["outputs"])]
        offset += len(check["outputs"])
        if not row["correct"]:
            continue
        outcome, _ = judge_size(puzzle, sets[min(check["input_set"], len(sets) - 1)], check["outputs"], got, sticks,
                                device)
        if not outcome.passed:
            facts = outcome.facts
            row["correct"] = False
            row["wrong"] = failures.word(failures.TimedCall(facts.kind, check["call"], check["calls"], facts)) \
                if facts is not None else f"timed call {check['call']} of {check['calls']}: {outcome.message}"
    return row


def reply_bytes(planned: SizePlan) -> int:
    """What a size's reply may carry: what comes back three times (the first call's and two
    checked calls', each sent unless the same bytes were sent for the same inputs), and room
    besides; never less than the channel's default. What comes back is one tensor per name in
    its own shape, which for a partial buffer is not the spec's output's; a name with nothing
    expected (an integer input's gradient, sent as zeros) is counted at 8 bytes an element."""
    outputs = sum(math.prod(shape) * (8 if want is None else want.element_size())
                  for shape, want in zip(planned.shapes, planned.expected))
    return max(MAX_MESSAGE, 3 * outputs + (1 << 20))


def run_bench(grading: Grading, puzzle_id: str, kernel_file: Path, sizes: Sequence[Mapping] | None = None,
              calls: int = 0, sets: int = SETS) -> BenchResult:
    """The size sweep of ``puzzle_id``'s benchmark (or ``sizes``), timed by ``grading``'s worker:
    a CUDA worker; a cpu one (the interpreter, the host's clock) is the test path. ``calls``:
    timed calls per round (0: as many as a round's time allows)."""
    course = grading.course
    puzzle = course.puzzle(puzzle_id)
    if puzzle.bench is None:
        with_bench = [p for p in course.ids if course.puzzle(p).bench is not None]
        raise CourseError(f"{puzzle_id} has no benchmark; these do: {', '.join(with_bench) or 'none'}")
    if kind_of(puzzle).bench.missing:
        return BenchResult(puzzle_id, ok=False, error=kind_of(puzzle).bench.missing)
    from grader.judge.plan import SpecShapes
    shapes = SpecShapes(puzzle)
    device = "cuda" if grading.options.device == "cuda" else "cpu"
    peaks = device_peaks() if device == "cuda" else None
    worker = grading.worker()
    left = Options.BENCH_TIMEOUT  # the worker's time for the whole sweep, as when it was one request
    rows, reply = [], {}
    try:
        for size in (sizes or puzzle.bench.sizes):
            planned = [plan_size(puzzle, size, shapes, device, seed) for seed in range(sets)]
            if sets > 1 and sum(len(b) for p in planned for b in p.blobs) > MAX_MESSAGE // 2:
                planned = planned[:1]  # too large to send twice: the inputs are re-written, not varied
            sticks = yardsticks(puzzle, planned[0], device)
            _release_gpu_memory(device)  # the spec's: the worker times next, on the same GPU
            message = wire_measure.Bench(puzzle_file=str(course.puzzle_file(puzzle_id)), file=str(kernel_file),
                                 graphs=not any(r.get("gpu_note") for r in rows), sets=len(planned), calls=calls,
                                 variant=dict(puzzle.chosen), **planned[0].header)
            started = time.monotonic()
            reply, raw = worker.request(message, [b for p in planned for b in p.blobs], timeout=max(1.0, left),
                                        reply_bytes=reply_bytes(planned[0]))
            left -= time.monotonic() - started
            if isinstance(reply, wire.Failure):
                return BenchResult(puzzle_id, ok=False, error=reply.error or "unknown error")
            reply = wire.envelope(reply)
            result = dict(reply["result"])
            checked = _checked(puzzle, planned, result, raw, sticks, device)
            _release_gpu_memory(device)
            values = {**puzzle.bench.blocks, **size}
            limit = limit_ms(int(puzzle.bench.bytes(values)), None if puzzle.bench.flops is None
                             else int(puzzle.bench.flops(values)), peaks)
            found = findings(result, device == "cuda", limit)
            rows.append(result | checked | {"rejected": failures.word(found[0]) if found else "",
                                            "limit_ms": limit[0], "input_sets": len(planned)})
            if found:  # the process is not to be trusted any more: no figure after this one
                break
    except (WorkerTimedOut, WorkerDied) as exc:
        return BenchResult(puzzle_id, ok=False, error=failures.word(asking.unfinished("the benchmark", exc)))
    finally:
        worker.recycle()  # the learner's code ran in it: it serves nothing else
    return summarise(puzzle, {**reply, "results": rows}, peaks)


def _release_gpu_memory(device: str) -> None:
    if device == "cuda":
        import torch
        torch.cuda.empty_cache()


def summarise(puzzle: Puzzle, reply: dict, peaks=None) -> BenchResult:
    """The worker's timings, with this side's check of each size, as the result model."""
    copy = reply["copy"]["gb_per_s"]
    rows = []
    for r in reply["results"]:
        values = {**puzzle.bench.blocks, **r["sizes"]}  # a mode such as CAUSAL is a block
        traffic = int(puzzle.bench.bytes(values))
        copy_ms = r.get("copy_ms")
        copy_here = traffic / (copy_ms * 1e-3) / 1e9 if copy_ms else copy
        rows.append(Row(
            sizes=r["sizes"], traffic=traffic, ms=r["ms"], baseline_ms=r["baseline_ms"],
            copy_gb_per_s=copy_here, copy_bound=copy_here >= COPY_BOUND * copy,
            correct=r["correct"], max_abs_err=r["max_abs_err"], wrong=r.get("wrong", ""), copy_ms=copy_ms,
            compiled_ms=r.get("compiled_ms"), gpu_ms=r.get("gpu_ms"), baseline_gpu_ms=r.get("baseline_gpu_ms"),
            gpu_note=r.get("gpu_note", ""), ms_rounds=tuple(r.get("ms_rounds", ())),
            baseline_ms_rounds=tuple(r.get("baseline_ms_rounds", ())),
            compiled_ms_rounds=tuple(r.get("compiled_ms_rounds", ())),
            flops=None if puzzle.bench.flops is None else int(puzzle.bench.flops(values)),
            rejected=r.get("rejected", ""), limit_ms=r.get("limit_ms", 0.0), wall_ms=r.get("wall_ms"),
            calls=r.get("calls", 0), checked=tuple(r.get("checked", ())), headroom=r.get("headroom"),
            input_sets=r.get("input_sets", 1)))
    kind = kind_of(puzzle).bench
    # A Bench's own baseline goes by its baseline_name; the spec may go by the kind's name for it.
    baseline = puzzle.bench.baseline_name if puzzle.bench.baseline or kind.spec_named is None else kind.spec_named
    return BenchResult(
        puzzle=puzzle.id, title=puzzle.title, device=reply["device"], versions=reply["versions"],
        copy_gb_per_s=copy, copy_cached=reply["copy"]["cached"], baseline=baseline,
        compiled=f"{baseline}, compiled" if any(r.compiled_ms is not None for r in rows) else None,
        what=kind.what,
        blocks=dict(puzzle.bench.blocks), launch=dict(puzzle.bench.launch), statistic=reply["statistic"],
        rows=tuple(rows), peak_gb_per_s=peaks.bytes_per_s / 1e9 if peaks and peaks.bytes_per_s else None,
        peak_tflops=peaks.flops_per_s / 1e12 if peaks and peaks.flops_per_s else None)
