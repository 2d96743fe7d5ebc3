"""What ``--perf`` tells a learner about their kernel: each finding a fact the counts show, with
the line it comes from and what to try. None claims what the code does not do: they say what
the lanes asked for and what the memory system would move, and the reference's figure where
the course has one to compare with."""
from __future__ import annotations

from dataclasses import replace

from grader.judge.perf.estimate import H100
from grader.judge.perf.model import LaunchCost, PerfProfile

SIGNIFICANT = 0.10  # a line matters when it moves at least this share of its launch's sectors
# a serial chain longer than the calibration's well-estimated ones (a matmul's 128 K steps)
SERIAL_ROUNDS = 128
SERIAL_REDUCTIONS = 64
# shared-memory instructions per thread in a tl.dot's loop past which the threads, not the copy
# engine, move its tiles (the calibration's well-estimated attentions have 21 at most)
STAGED = 32


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n < 1e10 else f"{n / 1e9:,.2f} GB"


def _lines(numbers) -> str:
    shown = sorted({n for n in numbers if n})
    if not shown:
        return ""
    return f" (line {shown[0]})" if len(shown) == 1 else f" (lines {', '.join(map(str, shown))})"


def _reads(reference: PerfProfile | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for launch in reference.launches if reference is not None else ():
        for tensor, times in launch.reads:
            out[tensor] = max(out.get(tensor, 0.0), times)
    return out


def _launch_findings(launch: LaunchCost, theirs: dict[str, float]) -> list[str]:
    said = []
    name = f"`{launch.kernel}`"
    for tensor, times in launch.reads:
        if times >= 1.5 and (tensor not in theirs or times >= 1.3 * theirs[tensor]):
            lines = _lines(l.line for l in launch.lines if l.tensor == tensor and l.op == "load")
            compare = f"; the reference reads it {theirs[tensor]:.1f} times" if tensor in theirs else ""
            said.append(f"{name} reads `{tensor}` {times:.1f} times over{lines}{compare}. Read each element once "
                        f"and keep it in registers, or fuse the passes.")
    total_moved = sum(l.moved for l in launch.lines) or 1
    for line in launch.lines:
        if line.moved < SIGNIFICANT * total_moved:
            continue
        where = f"line {line.line}" if line.line else "a line"
        if line.sector_use < 0.5 and line.op != "atomic":  # an atomic's address is its data's (a bin)
            said.append(f"The {line.op}s of `{line.tensor}` at {where} use {line.sector_use:.0%} of each 32-byte "
                        f"sector they move: neighbouring lanes touch addresses far apart, and no axis of the block "
                        f"is contiguous in memory. Index the tensor's contiguous axis with a plain `tl.arange`, "
                        f"so that neighbouring lanes take neighbouring elements.")
        if line.active_fraction < 0.7:
            said.append(f"{1 - line.active_fraction:.0%} of the lanes of the {line.op} of `{line.tensor}` at "
                        f"{where} are masked off: the block is much larger than what it covers. Choose a block "
                        f"closer to the size it walks.")
    if launch.spill_bytes:
        said.append(f"ptxas spills {launch.spill_bytes} bytes per thread in {name} ({launch.registers} registers): "
                    f"smaller tiles or fewer pipeline stages keep it in registers.")
    if launch.flops and launch.tensor_cores == "":
        said.append(f"The `tl.dot`s of {name} compile to no tensor-core instruction: they run on the FMA units.")
    elif launch.flops and launch.tensor_cores == "mma":
        said.append(f"The `tl.dot`s of {name} compile to `mma.sync`, not Hopper's `wgmma`: tiles of at least 64 "
                    f"rows with 4 or 8 warps let Triton use `wgmma`.")
    if launch.flops.get("tf32") and not launch.flops.get("fp16"):
        said.append(f"The `tl.dot`s of {name} take fp32 operands: TF32 on the tensor cores, half the fp16 rate.")
    if launch.bound == "atomics":
        said.append(f"{name} issues {launch.atomics:,} atomic lanes, and those that meet at one address queue in "
                    f"L2: accumulate in registers (`tl.histogram`, `tl.sum`) and add once per program.")
    if launch.bound == "latency" and launch.programs < H100.sms:  # most SMs have nothing to run
        said.append(f"{name} is bound by latency: {launch.programs:,} programs for the H100's {H100.sms} SMs, so most "
                    f"of the GPU idles while each waits on its loads in turn. Split the work over more programs.")
    elif launch.bound == "latency":
        said.append(f"{name} is bound by latency: {launch.programs:,} programs, {launch.resident} per SM at once, "
                    f"each waiting on its loads in turn. Larger blocks give each program more to do per trip.")
    if launch.bound == "launch":
        said.append(f"{name} is too small for the GPU to matter: its launch costs more than its work.")
    return said


def uncertainty(profile: PerfProfile) -> list[str]:
    """Why the estimate may be off by more than its usual error: each a kind of work the
    calibration's held-out families estimated worst (docs/perf-model.md)."""
    why = []
    for launch in profile.launches:
        name = f"`{launch.kernel}`"
        total_moved = sum(l.moved for l in launch.lines) or 1
        scattered = [l for l in launch.lines if l.moved >= SIGNIFICANT * total_moved and l.sector_use < 0.5
                     and l.op != "atomic"]
        if scattered:
            why.append(f"{name}'s {scattered[0].op}s of `{scattered[0].tensor}` use {scattered[0].sector_use:.0%} of "
                       f"the sectors they move: how much of the rest the caches catch is not modelled")
        if launch.planned and launch.interpreted < launch.planned:
            why.append(f"{name}'s figures rest on {launch.interpreted} of the {launch.planned} programs its sample "
                       f"chose: interpreting them outran the time budget")
        if (launch.flops.get("tf32") or launch.flops.get("tf32x3")) and launch.tensor_cores:
            why.append(f"{name}'s `tl.dot`s take fp32 operands (TF32): the H100 ran the calibration's such dots at a "
                       f"tenth of TF32's peak, and how fast depends on how Triton stages the converted tiles")
        if launch.flops and launch.tensor_cores in ("", "mma"):
            why.append(f"{name}'s `tl.dot`s compile to {'mma.sync' if launch.tensor_cores else 'FMA'} "
                       f"instructions, which few calibration kernels use")
        if launch.staged > STAGED:
            why.append(f"{name}'s loop moves its tiles through shared memory in its threads ({launch.staged} "
                       f"shared-memory loads and stores per thread and trip: layout conversions for the `tl.dot`s), "
                       f"and what their bank conflicts cost is not modelled")
        if launch.atomics:
            why.append(f"{name} issues atomics: how L2 queues those that meet at one address varies with the data, "
                       f"and few calibration kernels use them")
        if launch.bound == "ALU":
            why.append(f"{name} is bound by its arithmetic, counted from the interpreter's operations rather than "
                       f"the compiled instructions")
        if launch.bound == "latency" and (launch.rounds > SERIAL_ROUNDS or launch.reductions > SERIAL_REDUCTIONS):
            why.append(f"{name} is bound by latency, each program waiting on {launch.rounds:,.0f} trips to memory and "
                       f"{launch.reductions:,.0f} reductions in turn: how much of that the GPU overlaps is estimated")
        if launch.spill_bytes:
            why.append(f"{name} spills registers: the cost of local memory is estimated coarsely")
    return list(dict.fromkeys(why))


def findings(profile: PerfProfile, reference: PerfProfile | None, least: int) -> PerfProfile:
    """``profile`` with what its counts say, most costly first."""
    if not profile.ok:
        return profile
    said = []
    theirs = _reads(reference)
    # what a line of the costliest launch does first: the change most likely to help
    for launch in sorted(profile.launches, key=lambda l: -l.ms):
        said += _launch_findings(launch, theirs)
    moved = profile.dram_bytes
    if least and moved > 1.3 * least:
        compare = f" (the reference: {_mb(reference.dram_bytes)})" if reference is not None and reference.ok else ""
        said.append(f"It moves about {_mb(moved)} to and from memory, {moved / least:.1f}× the {_mb(least)} any "
                    f"implementation needs{compare}.")
    if profile.ms and profile.torch_ms > 0.1 * profile.ms:
        names = ", ".join(name.split(".")[0] for name, _, _ in profile.torch_ops[:4])
        said.append(f"Your wrapper's PyTorch operators ({names}) take about {profile.torch_ms * 1e3:.0f} µs of the "
                    f"{profile.ms * 1e3:.0f} µs.")
    return replace(profile, findings=tuple(dict.fromkeys(said)), uncertain=tuple(uncertainty(profile)))
