"""``--perf``: how fast a kernel would be on an H100, told on a machine without a GPU.

The kernel runs once in the interpreter at one representative size: the bench's headline
size where the puzzle has a Bench, else its largest case. Each launch interprets a spread
sample of its programs (:mod:`grader.sandbox.perf.record`), which count every load, store,
atomic, ``tl.dot`` and lane operation; the counts are scaled to the grid. The same launch is
compiled for sm_90 (:mod:`grader.sandbox.compile_stats`) for its registers, spills, shared
memory and matrix instructions, which give its occupancy. :mod:`grader.judge.perf.estimate`
turns both into a time, and says what bounds it. The course's reference solution gets the
same treatment, in a jail of its own, so that the learner sees theirs beside it.
"""
from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from grader.channel import wire, wire_measure
from grader.channel.worker_errors import WorkerDied, WorkerTimedOut
from grader.course.dtypes import DTYPES
from grader.course.loader import Course
from grader.course.puzzle import Case, Puzzle
from grader.judge import asking, failures
from grader.judge.kinds import kind_of
from grader.judge.perf import cache as perf_cache
from grader.judge.perf import estimate as model
from grader.judge.perf.findings import findings
from grader.judge.perf.model import LaunchCost, LineCost, PerfProfile, PerfResult

if TYPE_CHECKING:
    from grader.judge.session import Grading

PROGRAMS = 16          # programs interpreted per launch, at most
# Helion's kernels become Triton only inside Helion's compiler, where the interpreter's hooks do
# not reach: nothing of theirs is counted, so --perf says so rather than print an empty table
BUDGET = 2.0           # CPU seconds of interpreting a launch's programs after its first two (then fewer)
PROFILE_TIMEOUT = 300  # seconds: long loops are sampled, programs stop at the budget
COMPILE_TIMEOUT = 600


def perf_case(puzzle: Puzzle) -> tuple[Case, str]:
    """The size ``--perf`` runs: the bench's headline size, else the largest case."""
    if puzzle.bench is not None:
        from grader.judge.bench.run import bench_case
        return bench_case(puzzle, puzzle.bench.sizes[0]), "the bench's headline size"
    large = [c for c in puzzle.cases if c.large]
    case = large[0] if large else max(puzzle.cases, key=lambda c: math.prod(
        v if isinstance(v, int) else math.prod(v) for v in puzzle.sizes(c).values()))
    return case, f"case {case.name}"


def _contiguous(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(1, n)
    return tuple(reversed(strides))


def profile_request(course: Course, puzzle: Puzzle, case: Case, kernel_file: Path,
                    programs: int = PROGRAMS, seconds: float = 0.0) -> tuple[wire_measure.Profile, int]:
    """The request for one run at ``case``'s sizes, and the least traffic any implementation needs."""
    from grader.judge.plan import SpecShapes, integer_bounds
    shapes = SpecShapes(puzzle)
    dims = {**puzzle.sizes(case), **case.blocks}
    typed_in, typed_out = shapes.typed(case)
    inputs = [(s.name, s.dtype, s.shape(dims)) for s in typed_in]
    outputs = [(s.name, s.dtype, shapes.buffer_dims(s).shape(dims)) for s in typed_out]
    values = dict(dims)
    for name, _, shape in (*inputs, *outputs):
        for stride_name, stride in zip(puzzle.strides.get(name, ()), _contiguous(shape)):
            values[stride_name] = stride
    sent_in, sent_out = kind_of(puzzle).perf_tensors(inputs, outputs)
    ranges = {name: bounds for name, _, _ in inputs if (bounds := integer_bounds(puzzle, name, dims)) is not None}
    if puzzle.bench is not None:
        least = int(puzzle.bench.bytes({**puzzle.bench.blocks, **case.sizes}))
    else:
        least = sum(math.prod(shape) * DTYPES[dtype].itemsize for _, dtype, shape in (*inputs, *outputs))
    request = wire_measure.Profile(
        puzzle_file=str(course.puzzle_file(puzzle.id)), file=str(kernel_file),
        inputs=tuple(wire_measure.NamedTensor(dtype=d, shape=tuple(s), name=n) for n, d, s in sent_in),
        outputs=tuple(wire_measure.NamedTensor(dtype=d, shape=tuple(s), name=n) for n, d, s in sent_out),
        ranges=ranges, values={k: v for k, v in values.items() if isinstance(v, (int, float, tuple))},
        grid=tuple(puzzle.launch_grid(case)), programs=programs, seconds=seconds)
    return request, least


def compile_stats(worker, kernel_file: Path, kernel: str, launch: wire_measure.LaunchProfile, memo: dict):
    """ptxas's figures for one launch (None, and why, where the sm_90 compile cannot be made)."""
    if not launch.path:
        return None, "the kernel is not defined at the top level of the file, so it was not compiled"
    message = wire.Compile(file=str(kernel_file), kernel=kernel, signature={}, constexprs={}, values={},
                           path=launch.path, hops=launch.hops, arguments=launch.arguments, keywords=launch.keywords,
                           stage="cubin", stats=True,
                           options={"num_warps": launch.num_warps, "num_stages": launch.num_stages})
    key = json.dumps(wire.header(message), sort_keys=True)
    kept = perf_cache.compiled_key(kernel_file, message)
    if key not in memo and kept and (stats := perf_cache.load_compiled(kept)) is not None:
        memo[key] = wire.Compiled(variants=1, stats=(stats,))
    if key not in memo:
        try:
            reply, _ = worker.request(message, timeout=COMPILE_TIMEOUT)
        except (WorkerDied, WorkerTimedOut) as exc:
            reply = wire.Failure("error", error=f"the compile worker stopped: {type(exc).__name__}")
        memo[key] = reply
        if kept and not isinstance(reply, wire.Failure) and reply.stats:
            perf_cache.store_compiled(kept, reply.stats[0])
    reply = memo[key]
    if isinstance(reply, wire.Failure) or not reply.stats:
        return None, f"the sm_90 compile failed: {getattr(reply, 'error', '')[:200]}"
    return reply.stats[0], ""


def launch_cost(launch: wire_measure.LaunchProfile, stats, note: str, c: dict, device=model.H100) -> LaunchCost:
    """One launch's counts scaled to its grid, and its estimated time."""
    programs = math.prod(launch.grid)
    scale = programs / max(1, launch.interpreted)
    warps = stats.num_warps if stats else launch.num_warps
    per_sm = model.resident(device, warps, stats.registers if stats else None, stats.shared if stats else None)
    held = min(programs, per_sm * device.sms)
    flow = model.traffic(launch.accesses, scale, programs, held, c, device)
    # an atomic is done by the L2 slice owning its line: a small tensor's (a histogram's 1 KB, 8 lines) queue there
    atomics = sum(a.active for a in launch.accesses if a.op == "atomic") * scale
    queued = sum(a.active * scale * max(1.0, device.l2_slices / max(1.0, min(a.union * scale, a.tensor_bytes
                                                                             / model.SECTOR) / 4))
                 for a in launch.accesses if a.op == "atomic")
    conflicts = sum(a.conflicts for a in launch.accesses if a.op == "atomic") * scale
    same = 0.0
    for a in launch.accesses:
        if a.op == "atomic" and a.same_address:
            # where the sampled programs' atomics land on the same sectors, every program's do
            shared_by_all = launch.interpreted > 1 and a.union < 0.5 * a.program_unique
            same = max(same, a.same_address * (scale if shared_by_all else 1))
    rounds = model.rounds(launch.accesses) / max(1, launch.interpreted)
    flops = {}
    for d in launch.dots:
        flops[d.precision] = flops.get(d.precision, 0) + int(d.flops * scale)
    cores = stats.tensor_cores if stats else "?"
    # a loop-free kernel's arithmetic is the compiled code's, once per thread; a loop's trips are
    # the interpreter's to count (its own operations, at their own fitted rate)
    compiled = bool(stats and stats.alu and not stats.loops)
    lane_ops, slow_ops, compiled_ops = launch.alu * scale, launch.sfu * scale, 0.0
    if compiled:
        compiled_ops, lane_ops = stats.alu * 32 * warps * programs, 0.0
        slow_ops = stats.slow * 32 * warps * programs
    seconds = model.terms(traffic_=flow, flops=flops, tensor_cores=cores if stats else "wgmma",
                          lane_ops=lane_ops, slow_ops=slow_ops, compiled_ops=compiled_ops,
                          atomics=queued, conflicts=conflicts,
                          same_address=same, rounds=rounds, stages=launch.num_stages if rounds > 1 else 1,
                          # a tl.dot's tiles are reduced in rows each warp holds; elsewhere a tree of levels
                          reductions=0.0 if launch.dots else launch.reductions / max(1, launch.interpreted)
                          * model.tree_levels(launch.accesses, 32 * warps),
                          programs=programs, held=held,
                          # the threads moving a dot's tiles through shared memory, each trip
                          staged=(stats.loop_shared if stats and launch.dots else 0) * max(1.0, rounds),
                          spill_bytes=stats.spill_bytes if stats else None, threads=32 * warps, c=c, device=device)
    total, bound = model.combine(seconds, c)
    lines = tuple(LineCost(launch.kernel, a.tensor, a.op, a.line, a.source, int(a.bytes * scale),
                           int(a.sectors * model.SECTOR * scale), a.active / a.lanes if a.lanes else 1.0)
                  for a in launch.accesses)
    asked: dict[str, list] = {}
    for a in launch.accesses:
        if a.op == "load":
            entry = asked.setdefault(a.tensor, [0.0, a.program_unique * model.SECTOR * scale])
            entry[0] += a.bytes * scale
    # a program's reads of a tensor over what it touched of it: a second pass over its row shows,
    # a vector every program reads once does not (L2 serves that)
    reads = tuple((name, asked_bytes / own) for name, (asked_bytes, own) in asked.items() if own)
    return LaunchCost(
        kernel=launch.kernel, config=launch.config, grid=tuple(launch.grid), programs=programs,
        interpreted=launch.interpreted, num_warps=warps, num_stages=launch.num_stages,
        registers=stats.registers if stats else None, spill_bytes=stats.spill_bytes if stats else None,
        shared=stats.shared if stats else None, resident=per_sm, tensor_cores=cores, loaded=flow.loaded,
        stored=flow.stored, dram_read=flow.dram_read, dram_written=flow.dram_written, l2_moved=flow.l2_moved,
        flops=flops, lane_ops=int(lane_ops + compiled_ops), slow_ops=int(slow_ops), atomics=int(atomics),
        ms=total * 1e3, terms={k: v * 1e3 for k, v in seconds.items()}, bound=bound, lines=lines,
        reads=reads, compile_note=note, planned=launch.planned, loops_sampled=launch.loops_sampled,
        rounds=rounds, reductions=launch.reductions / max(1, launch.interpreted),
        staged=stats.loop_shared if stats and launch.dots else 0)


def profile_costs(reply: wire_measure.Profiled, stats: list, c: dict,
                  device=model.H100) -> tuple[tuple[LaunchCost, ...], float]:
    """Each launch costed (an autotuned launch: its fastest config, the others as alternatives),
    and the wrapper's own PyTorch operators. ``stats``: (KernelStats or None, note) per launch."""
    groups: dict[int, list[LaunchCost]] = {}
    for launch, (figures, note) in zip(reply.launches, stats):
        groups.setdefault(launch.group, []).append(launch_cost(launch, figures, note, c, device))
    chosen = []
    for options in groups.values():
        best = min(options, key=lambda cost: cost.ms)
        if len(options) > 1:
            best = replace(best, alternatives=tuple((o.config, o.ms) for o in options))
        chosen.append(best)
    torch_s = sum(c["torch_op_s"] * op.count + op.bytes / (device.dram_bytes_per_s * c["dram_eff"])
                  for op in reply.torch_ops)
    return tuple(chosen), torch_s * 1e3


def measure(grading: Grading, puzzle: Puzzle, kernel_file: Path, request: wire_measure.Profile,
            solution: Path | None, ran=None) -> tuple[wire_measure.Profiled | None, list, str]:
    """What one implementation did at the size: the worker's counts, ptxas's figures for each
    launch ((KernelStats or None, note) each), or why there are none. ``ran()`` is called once
    the run has counted and its worker is free, before the compiles (the learner's grading
    goes on beside them)."""
    worker = grading.reference(solution) if solution is not None else grading.tracer()
    try:
        reply, _ = worker.request(request, timeout=PROFILE_TIMEOUT)
    except (WorkerDied, WorkerTimedOut) as exc:
        return None, [], failures.word(asking.unfinished("the run", exc))
    finally:
        worker.recycle()
    if isinstance(reply, wire.Failure):
        return None, [], reply.error or reply.kind
    if reply.failure is not None:
        f = reply.failure
        return reply, [], f"{f.error or f.kind}" + (f" (line {f.line}: {f.source})" if f.line else "")
    if not reply.launches:
        return reply, [], "it launched no kernel"
    if ran is not None:
        ran()
    compiler, memo = grading.compiler(solution), {}
    return reply, [compile_stats(compiler, kernel_file, puzzle.kernel, launch, memo) for launch in reply.launches], ""


def costed(who: str, kernel_file: Path, reply: wire_measure.Profiled | None, stats: list, error: str,
           c: dict) -> PerfProfile:
    """One implementation's counts and figures, costed by the model with coefficients ``c``."""
    seconds = reply.seconds if reply is not None else 0.0
    if error:
        return PerfProfile(who, str(kernel_file), error=error, seconds=seconds)
    launches, torch_ms = profile_costs(reply, stats, c)
    return PerfProfile(who, str(kernel_file), ms=sum(l.ms for l in launches) + torch_ms, launches=launches,
                       torch_ms=torch_ms, torch_ops=tuple((op.name, op.count, op.bytes) for op in reply.torch_ops),
                       seconds=seconds)


def profile_one(grading: Grading, puzzle: Puzzle, who: str, kernel_file: Path, request: wire_measure.Profile,
                solution: Path | None, c: dict, ran=None) -> PerfProfile:
    """One implementation profiled, compiled and costed; its counts and figures are kept between
    runs (:mod:`.perf_cache`): the course's solution's, and the learner's until its file or a
    neighbour changes. ``ran``: see :func:`measure` (not called where the counts were kept)."""
    name = perf_cache.key(solution or kernel_file, grading.course.puzzle_file(puzzle.id), request,
                          "" if solution is not None else "yours-")
    kept = perf_cache.load(name) if name else None
    if kept is None:
        reply, stats, error = measure(grading, puzzle, kernel_file, request, solution, ran)
        if error or reply is None:
            return costed(who, kernel_file, reply, stats, error, c)
        if name:
            perf_cache.store(name, reply, stats)
        kept = (reply, stats)
    return costed(who, kernel_file, *kept, "", c)


@dataclass(frozen=True)
class Verdict:
    """What grading said of the kernel, for ``--perf``: ``wrong``, "" where it passes, else the
    grader's one-line reason (an estimate of a wrong kernel is marked as such); ``notes``, the
    grade's notes that name a faster way (``LookAlike.faster``), word for word as the grade says them."""

    wrong: str
    notes: tuple[str, ...] = ()


def faster_notes(puzzle: Puzzle, message: str) -> tuple[str, ...]:
    """The notes of correct alternatives that name a faster way, that the grade's ``message`` says."""
    from grader.judge.properties import said
    looks = puzzle.check.notes if puzzle.check is not None else ()
    return tuple(said(look) for look in looks if look.faster and said(look) in message)


def verdict(grading: Grading, puzzle_id: str, kernel_file: Path) -> Verdict:
    """The kernel graded (its passing verdict kept between runs, as its counts are)."""
    kept = perf_cache.verdict_key(Path(kernel_file), grading.course.puzzle_file(puzzle_id))
    if kept and (found := perf_cache.load_verdict(kept)) is not None:
        return Verdict(*found)
    result = grading.grade([(puzzle_id, Path(kernel_file))]).results[0]
    said = "" if result.passed else (result.message or result.status.value).split(". (")[0]  # the case, what differs
    said = said if len(said) <= 240 else said[:237] + "..."
    notes = faster_notes(grading.course.puzzle(puzzle_id), result.message) if result.passed else ()
    if kept and result.passed:  # a failure (a timeout on a busy machine, say) is graded again
        perf_cache.store_verdict(kept, said, notes)
    return Verdict(said, notes)


def run_perf(grading: Grading, puzzle_id: str, kernel_file: Path, programs: int = PROGRAMS,
             reference: bool = True, check: bool = True) -> PerfResult:
    """``--perf`` for one puzzle: the learner's kernel, and the course's solution beside it (its
    run in a worker of its own, at the same time). With ``check``, the learner's kernel is
    graded too, after its run: an estimate of a kernel that fails is marked so."""
    from grader.judge.pictures import reference_file
    course = grading.course
    puzzle = course.puzzle(puzzle_id)
    case, label = perf_case(puzzle)
    refused = kind_of(puzzle).perf_refused
    if refused:  # before any worker starts: nothing would be counted
        return PerfResult(puzzle=puzzle.id, title=puzzle.title, case=label, sizes=dict(case.sizes),
                          device=model.H100.name, minimum_bytes=0, minimum_flops=None, limit_ms=0.0,
                          limit_by="", yours=PerfProfile("yours", str(kernel_file), error=refused))
    c = model.coefficients()
    request, least = profile_request(course, puzzle, case, kernel_file, programs, BUDGET)
    values = {**case.blocks, **case.sizes}
    flops = int(puzzle.bench.flops(values)) if puzzle.bench and puzzle.bench.flops else None
    half = any(DTYPES[d.dtype].itemsize == 2 for d in request.inputs)
    peak = model.H100.peak_of("fp16" if half else "tf32")
    limit_s, limit_by = least / model.H100.dram_bytes_per_s, "memory"
    if flops and flops / peak > limit_s:
        limit_s, limit_by = flops / peak, "tensor cores"
    solution = reference_file(course, puzzle_id, kernel_file) if reference else None
    with ThreadPoolExecutor(max_workers=2) as beside:
        pending = None if solution is None else beside.submit(
            profile_one, grading, puzzle, "reference", solution,
            msgspec.structs.replace(request, file=str(solution)), solution, c)
        graded = []  # the learner's grading, started once its run is done, beside its sm_90 compile

        def ran() -> None:
            if check:
                graded.append(beside.submit(verdict, grading, puzzle_id, kernel_file))
        yours = profile_one(grading, puzzle, "yours", Path(kernel_file), request, None, c, ran)
        if not graded and check and yours.ok:  # its counts were kept: its verdict likely too
            graded.append(beside.submit(verdict, grading, puzzle_id, kernel_file))
        graded = graded[0].result() if graded and yours.ok else Verdict("")
        theirs = pending.result() if pending is not None else None
    yours = replace(findings(yours, theirs, least), wrong=graded.wrong, notes=graded.notes)
    if theirs is not None:
        theirs = findings(theirs, None, least)
    return PerfResult(puzzle=puzzle.id, title=puzzle.title, case=label, sizes=dict(case.sizes),
                      device=model.H100.name, minimum_bytes=least, minimum_flops=flops, limit_ms=limit_s * 1e3,
                      limit_by=limit_by, yours=yours, reference=theirs, model=model.calibration())
