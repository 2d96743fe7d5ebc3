"""The H100 model behind ``--perf``: from what a launch did to how long it would take.

Each launch is costed by the resources it uses, each alone at its rate on an H100 SXM:

- **memory**: the bytes estimated to come from (and go to) HBM, after what L2 keeps. A tensor
  costs the sectors any program touched (the sample's union, scaled to the grid, at most the
  tensor), plus the re-reads L2 could not keep: a program's re-reads of its own data miss once
  the programs running at once hold more than L2 (their footprint, from the occupancy), and
  re-reads of data another program read miss at a calibrated rate;
- **L2**: every 32-byte sector each request touched, which is where uncoalesced loads pay;
- **tensor cores** by precision (fp16/bf16, TF32, fp8), at the calibrated share of the peak,
  less where ptxas used ``mma.sync`` rather than Hopper's ``wgmma``; a ``tl.dot`` with no
  matrix instruction runs on the FMA units;
- **ALU** lane operations, and the slow ones (exp, log, sqrt, division) on the SFUs;
- **atomics**: their throughput at the L2 slices that own their lines (all of them for a large
  tensor, a few for a histogram's bins), the lanes of one request that meet at one address (they
  queue in L2, one after another), and the queue at the address the most programs hit;
- **latency**: the waves of programs (the grid over the SMs times the programs each holds
  at once) times each program's rounds of loads, each a trip to memory, and the shared-memory
  loads and stores a ``tl.dot`` loop's threads make each trip (tiles converted or laid out
  again for the matrix instructions), each a round trip to shared memory;
- a fixed **launch** cost.

The launch takes the smooth maximum of these (a p-norm: resources overlap, not perfectly).
The rates are the H100's; the efficiencies, the latency, the L2 share, the launch cost and p
were fitted on an H100 against ``--bench`` (``benchmarks/perf_calibration.py``; method and
figures in ``docs/perf-model.md``), and live in ``h100.json`` beside this module.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

COEFFICIENTS = Path(__file__).with_name("h100.json")
SECTOR = 32  # bytes: what L2 moves to an SM per request, at the least (the worker counts in sectors)


@dataclass(frozen=True)
class Device:
    name: str = "H100 SXM5 80GB"
    sms: int = 132
    clock_hz: float = 1.755e9
    dram_bytes_per_s: float = 3.35e12
    l2_bytes: int = 50 * 2 ** 20
    # L2 slices, each owning its lines and their atomics: about 100 (the A100's 40 MB is 80
    # slices of 512 KB; the H100's 50 MB taken alike)
    l2_slices: int = 100
    # dense peak FLOP/s by tl.dot precision (tf32x3 is three TF32 products)
    peak: tuple = (("fp16", 989e12), ("tf32", 494e12), ("tf32x3", 165e12), ("fp8", 1979e12),
                   ("int8", 1979e12), ("fp32", 67e12))
    lanes_per_sm_clock: int = 128   # fp32/int lane operations
    slow_per_sm_clock: int = 16     # SFU
    max_warps: int = 64
    max_programs: int = 32
    registers: int = 65536
    shared: int = 228 * 1024

    def peak_of(self, precision: str) -> float:
        return dict(self.peak).get(precision, dict(self.peak)["fp32"])


H100 = Device()
DEFAULTS = {"dram_eff": 0.90, "l2_bytes_per_s": 12.0e12, "l2_keeps": 0.5, "cross_miss": 0.1, "fp16_eff": 0.75,
            "tf32_eff": 0.7, "fp8_eff": 0.7, "fp32_eff": 0.6, "mma_factor": 0.6, "alu_eff": 0.5, "slow_eff": 0.5,
            "atomics_per_s": 3.0e11, "conflicts_per_s": 1.0e10, "same_address_s": 2.0e-9, "latency_s": 0.7e-6,
            "launch_s": 2.5e-6,
            "torch_op_s": 3.0e-6, "spill_factor": 4.0, "partial_miss": 0.5, "p": 3.0,
            # the ALU's share of its peak for the compiled code's arithmetic (a loop-free kernel's
            # PTX, counted per thread); alu_eff is the rate of the interpreter's lane operations,
            # which count what the compiler folds (above 1)
            "ptx_eff": 1.0,
            # one level of a reduction's or scan's tree across the threads: a shuffle, or past a
            # warp shared memory and a barrier (see tree_levels)
            "reduce_s": 0.03e-6,
            # a shared-memory load or store a dot loop's threads make each trip, waited for in turn:
            # a round trip to shared memory (about 30 clocks) without bank conflicts
            "stage_s": 30 / 1.755e9}


def _fitted() -> dict:
    try:
        return json.loads(COEFFICIENTS.read_text())
    except (OSError, ValueError):
        return {}


def coefficients() -> dict:
    """The fitted coefficients (the defaults where the file lacks one)."""
    fitted = _fitted().get("coefficients", {})
    return {**DEFAULTS, **{k: float(v) for k, v in fitted.items() if k in DEFAULTS}}


def calibration() -> dict:
    """What the fit measured (its figures, for the report's footnote)."""
    return _fitted().get("fit", {})


def resident(device: Device, num_warps: int, registers: int | None, shared: int | None) -> int:
    """Programs of this launch one SM holds at once (at least one: the launch runs)."""
    by_warps = device.max_warps // max(1, num_warps)
    by_registers = by_warps
    if registers:
        per_warp = math.ceil(registers * 32 / 256) * 256  # registers are given out 256 per warp
        by_registers = device.registers // (per_warp * num_warps)
    by_shared = device.shared // (shared + 1024) if shared else device.max_programs
    return max(1, min(by_warps, by_registers, by_shared, device.max_programs))


@dataclass(frozen=True)
class Traffic:
    """A launch's memory traffic, scaled to the grid."""

    loaded: int
    stored: int
    l2_moved: int
    dram_read: int
    dram_written: int


def traffic(accesses, scale: float, programs: int, held: int, c: dict, device: Device = H100) -> Traffic:
    """Bytes asked for, sectors moved, and the bytes estimated to reach HBM (see the module's
    docstring). ``held``: programs running at once on the whole GPU."""
    by_tensor: dict[tuple, dict] = {}
    loaded = stored = moved = 0
    for a in accesses:
        key = (a.tensor, "load" if a.op == "load" else "store")
        t = by_tensor.setdefault(key, {"moved": 0, "asked": 0, "unique": a.program_unique * SECTOR * scale,
                                       "union": a.union * SECTOR * scale, "size": a.tensor_bytes})
        t["moved"] += a.sectors * SECTOR * scale
        t["asked"] += a.bytes * scale
        moved += a.sectors * SECTOR * scale
        if a.op == "load":
            loaded += a.bytes * scale
        else:
            stored += a.bytes * scale
    footprint = sum(t["unique"] for t in by_tensor.values()) / max(1, programs) * held
    keeps = c["l2_keeps"] * device.l2_bytes
    miss = 0.0 if footprint <= keeps else 1.0 - keeps / footprint
    dram = {"load": 0.0, "store": 0.0}
    for (_, op), t in by_tensor.items():
        union = min(t["union"], t["size"]) if t["size"] else t["union"]
        unique = max(t["unique"], union)
        again_own = max(0.0, t["moved"] - unique)     # a program's re-reads of what it read
        again_shared = unique - union                 # reads of what another program read
        # of those, the sectors each program uses only part of (lanes far apart): the rest of the
        # sector is another program's, which comes for it later, when L2 may have let it go
        partial = min(again_shared, max(0.0, t["moved"] - t["asked"]))
        dram[op] += union + miss * again_own + c["cross_miss"] * (again_shared - partial) \
            + c["partial_miss"] * partial
    return Traffic(int(loaded), int(stored), int(moved), int(dram["load"]), int(dram["store"]))


def rounds(accesses) -> float:
    """Trips to memory one after another, over the programs interpreted: the line loaded most
    often (a loop's loads go out together, one iteration after another). A request whose sectors
    an earlier one of its program brought in waits for nothing new (a column walk's next seven
    columns are in the sectors the first brought into L1): the worker counts the requests that
    touched a new sector; counts without that figure bound them by a line's distinct sectors
    over its sectors per request."""
    out = 0.0
    for a in accesses:
        if a.op != "load" or not a.requests:
            continue
        if a.fresh:
            out = max(out, a.fresh)
            continue
        per_request = max(1.0, a.sectors / a.requests)
        out = max(out, min(a.requests, a.program_unique / per_request))
    return out


def tree_levels(accesses, threads: int) -> float:
    """Levels of a reduction's tree across the threads that hold the block, each waited for in
    turn: log2 of the threads the block's lanes cover (a thread adds its own elements in
    registers first, which the ALU counts). The block is the widest load's lanes per request;
    the reduced axis is not recorded, so a tile reduced along its short axis counts its width."""
    width = max((a.lanes / a.requests for a in accesses if a.op == "load" and a.requests), default=32.0)
    return math.log2(max(2.0, min(width, threads)))


def terms(*, traffic_: Traffic, flops: dict, tensor_cores: str, lane_ops: float, slow_ops: float,
          atomics: float, conflicts: float, same_address: float, rounds: float, stages: int, programs: int, held: int,
          reductions: float = 0.0, compiled_ops: float = 0.0, staged: float = 0.0,
          spill_bytes: int | None,
          threads: int, c: dict, device: Device = H100) -> dict[str, float]:
    """Seconds each resource alone would take."""
    out = {"memory": (traffic_.dram_read + traffic_.dram_written) / (device.dram_bytes_per_s * c["dram_eff"]),
           # spilled registers go to local memory and back, once per trip of the program's loop
           "L2": (traffic_.l2_moved + (spill_bytes or 0) * threads * programs * max(1.0, rounds) * c["spill_factor"])
           / c["l2_bytes_per_s"]}
    per_sm = programs / device.sms
    quantised = per_sm / math.ceil(per_sm) if per_sm > 0 else 1.0  # the last wave of programs, part full
    matrix = 0.0
    for precision, count in flops.items():
        rate = device.peak_of(precision) * c.get(f"{precision}_eff", c["tf32_eff"])
        if tensor_cores == "mma":
            rate *= c["mma_factor"]
        elif tensor_cores == "":  # no matrix instruction: the FMA units
            rate = device.peak_of("fp32") * c["fp32_eff"]
        matrix += count / rate
    out["tensor cores"] = matrix / quantised
    clock = device.sms * device.clock_hz
    out["ALU"] = (lane_ops / (clock * device.lanes_per_sm_clock * c["alu_eff"])
                  + compiled_ops / (clock * device.lanes_per_sm_clock * c["ptx_eff"])
                  + slow_ops / (clock * device.slow_per_sm_clock * c["slow_eff"])) / quantised
    # lanes of one request that hit one address queue behind each other in L2
    out["atomics"] = (atomics / c["atomics_per_s"] + conflicts / c["conflicts_per_s"]
                      + same_address * c["same_address_s"])
    # a loop's later loads are issued ``stages - 1`` iterations ahead (software pipelining)
    # and each reduction waits for its tree across the lanes, one after another
    out["latency"] = math.ceil(programs / held) * (max(1.0, rounds) * c["latency_s"] / max(1, stages - 1)
                                                   + reductions * c["reduce_s"] + staged * c["stage_s"])
    return out


COMPUTE = ("tensor cores", "ALU")  # one SM's issue slots: these add up, where memory overlaps them


def combine(seconds: dict[str, float], c: dict) -> tuple[float, str]:
    """The launch's time (its fixed cost plus the smooth maximum of the resources, the compute
    terms added first) and what bounds it."""
    p = c["p"]
    sides = [sum(seconds.get(k, 0.0) for k in COMPUTE)] + [t for k, t in seconds.items() if k not in COMPUTE]
    busy = sum(t ** p for t in sides) ** (1 / p)
    bound = max(seconds, key=seconds.get)
    if c["launch_s"] > busy:
        bound = "launch"
    return c["launch_s"] + busy, bound
