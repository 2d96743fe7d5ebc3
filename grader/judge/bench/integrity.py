"""Whether ``--bench`` can trust a size's timing: the GPU's physical limits, and the grader's
verdict on what the worker watched while the learner's code ran
(:mod:`grader.sandbox.bench.guard` saw it; nothing there decides).

**The physical limit.** No kernel finishes faster than its least memory traffic at the
memory's peak bandwidth, nor than its floating-point operations at the tensor cores' peak.
Both peaks come from the driver's own attributes, read in the grader's process: memory clock
times bus width times two (HBM moves data on both edges), and the SM count times the highest
SM clock times the dense 16-bit tensor throughput per SM of the architecture (4096 FLOP per
clock on Hopper: 989 TFLOP/s at 1.83 GHz on an H100 SXM; taken at the highest clock, the
limit is lower still). The L2 cache is flushed before each call, but a kernel's writes may
stay in it when it ends: up to the L2's size of the traffic is not counted. A time below the
limit is refused, not flagged: it means the timer did not see the work.

**The watch** (each a :mod:`grader.judge.failures` fact of ``bench_rejected``): names rebound or
switches thrown, audit events of the learner's (the garbage collector, frames, ctypes,
profile hooks), threads that outlived a call, results that are not plain tensors, another
current stream, persisting L2 lines, and the host's clock well above the events (work on
another stream: more than ``HIDDEN_MS`` and ``HIDDEN_SHARE`` of the call beyond the timer's
own overhead).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

from grader.judge import failures

HIDDEN_MS, HIDDEN_SHARE = 0.02, 0.2
# Dense 16-bit tensor-core FLOP per SM per clock, by compute capability (an upper bound where
# a family varies): Volta/Turing 1024, Ampere A100 2048, consumer Ampere and Ada 1024 (their
# fp16-accumulate rate), Hopper 4096, Blackwell 8192.
TENSOR_FLOP_PER_CLOCK = {(7, 0): 1024, (7, 5): 1024, (8, 0): 2048, (8, 6): 1024, (8, 7): 1024, (8, 9): 1024,
                         (9, 0): 4096, (10, 0): 8192, (12, 0): 2048}
# cuDeviceGetAttribute's numbers for what the limits need
_CLOCK, _SMS, _MEMORY_CLOCK, _BUS_WIDTH, _L2, _MAJOR, _MINOR = 13, 16, 36, 37, 38, 75, 76


@dataclass(frozen=True)
class Peaks:
    """What one GPU can do at most: bytes per second from memory, 16-bit tensor FLOP per second."""

    device: str
    bytes_per_s: float | None
    flops_per_s: float | None
    l2_bytes: int = 0


def device_peaks() -> Peaks | None:
    """The current CUDA device's peaks, from the driver (None without a GPU or a driver that says)."""
    import torch
    if not torch.cuda.is_available():
        return None
    torch.cuda.init()
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        handle = ctypes.c_int(0)
        if cuda.cuDeviceGet(ctypes.byref(handle), ctypes.c_int(torch.cuda.current_device())) != 0:
            return None

        def attribute(number: int) -> int:
            value = ctypes.c_int(0)
            if cuda.cuDeviceGetAttribute(ctypes.byref(value), ctypes.c_int(number), handle) != 0:
                raise OSError(f"cuDeviceGetAttribute({number}) failed")
            return value.value
        memory = 2 * attribute(_MEMORY_CLOCK) * 1e3 * attribute(_BUS_WIDTH) / 8
        per_clock = TENSOR_FLOP_PER_CLOCK.get((attribute(_MAJOR), attribute(_MINOR)))
        flops = per_clock * attribute(_SMS) * attribute(_CLOCK) * 1e3 if per_clock else None
        return Peaks(torch.cuda.get_device_name(), memory or None, flops, attribute(_L2))
    except OSError:
        return None


def limit_ms(traffic: int, flops: int | None, peaks: Peaks | None) -> tuple[float, str]:
    """The least time a size can take on this GPU, and what sets it in words; (0, "") where unknown."""
    if peaks is None:
        return 0.0, ""
    found = [(0.0, "")]
    counted = max(0, traffic - peaks.l2_bytes)
    if peaks.bytes_per_s and counted:
        found.append((counted / peaks.bytes_per_s * 1e3,
                      f"{counted} bytes beyond the L2 cache's {peaks.l2_bytes} at the memory's peak "
                      f"{peaks.bytes_per_s / 1e9:.0f} GB/s"))
    if peaks.flops_per_s and flops:
        found.append((flops / peaks.flops_per_s * 1e3,
                      f"{flops} FLOP at the tensor cores' peak {peaks.flops_per_s / 1e12:.0f} TFLOP/s"))
    return max(found)


def findings(timing: dict, on_gpu: bool, limit: tuple[float, str]) -> list:
    """Why the size's timing cannot be trusted, as facts; empty where it can."""
    watch = timing.get("watch") or {}
    found = []  # the most telling first: the report gives the first
    if watch.get("l2_limit") or watch.get("l2_window"):
        found.append(failures.PersistingL2(watch.get("l2_limit", 0), watch.get("l2_window", 0)))
    hidden = timing.get("gap_ms", 0.0) - timing.get("overhead_ms", 0.0)
    if on_gpu and hidden > max(HIDDEN_MS, HIDDEN_SHARE * timing.get("wall_ms", 0.0)):
        found.append(failures.HiddenWork(timing["ms"], timing["ms"] + hidden, timing.get("overhead_ms", 0.0)))
    if watch.get("threads"):
        found.append(failures.ThreadsStarted(watch["threads"], watch.get("thread_call", -1)))
    if watch.get("not_plain"):
        found.append(failures.NotPlain(tuple(watch["not_plain"])))
    found += [failures.Reached(seen["event"], seen.get("file", ""), seen.get("line", 0))
              for seen in watch.get("audit", ())[:1]]
    changed = [*watch.get("tampered", ()), *watch.get("switched", ())]
    if watch.get("stream_changed"):
        changed.append("torch.cuda.current_stream()")
    if changed:
        found.append(failures.Tampered(tuple(changed)))
    floor, bound = limit
    if timing["ms"] < floor:
        found.append(failures.BelowLimit(timing["ms"], floor, bound))
    return found
