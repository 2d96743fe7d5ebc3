"""Timing a learner's kernel or autograd function on a GPU, one size of the sweep per request
(runs inside a cuda worker).

The grader plans each size as it plans a graded case (``grader.judge.plan``: the same inputs, with
the puzzle's ``mantissa_bits``) and sends the inputs; this side runs the kernel once on them
and sends back what it wrote (an autograd function: the gradients it returned), so that the
grader, not this process, judges the result. Then it times.

``triton.testing.do_bench`` does the warm-up, the repeats and the L2 flush. Each timing is
the median of its repeats, as in the Triton tutorials, and yours and the baselines are taken
in turn, ROUNDS times; the report keeps the fastest round of each (noise only ever adds time,
as ``timeit``'s documentation argues) and every round's figure for the JSON. Each size also
times a device-to-device copy moving the same number of bytes, the yardstick its GB/s are
set against. An autograd function is also timed replayed as a CUDA graph, which leaves out
the host's work: the gap between the two figures is the step's host overhead.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

from grader.channel import wire
from grader.channel.binding import Param, bind
from grader.course.dtypes import dtype_name, tensor_bytes
from grader.course.puzzle import Puzzle, with_case_values
from grader.sandbox.launch import parameters, unwrap

STATISTIC = "median"
ROUNDS = 3
METHOD = f"fastest of {ROUNDS} rounds, each the median of do_bench's repeats"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "triton-puzzles" / "copy-bandwidth.json"
_measured: dict = {}  # this process's copy bandwidth, once measured or read


def copy_bandwidth() -> dict:
    """The device's own copy bandwidth (bytes read + written per second), measured once and cached."""
    import triton.testing
    name = torch.cuda.get_device_name()
    try:
        cached = json.loads(CACHE.read_text())
        if cached.get(name, {}).get("statistic") == STATISTIC:
            return cached[name] | {"cached": True}
    except (OSError, ValueError):
        cached = {}
    n = 1 << 28  # 1 GiB of float32
    src, dst = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
    ms = triton.testing.do_bench(lambda: dst.copy_(src), warmup=50, rep=500, return_mode=STATISTIC)
    entry = {"gb_per_s": 2 * 4 * n / (ms * 1e-3) / 1e9, "bytes": 2 * 4 * n, "ms": ms, "statistic": STATISTIC,
             "measured": time.strftime("%Y-%m-%d %H:%M")}
    try:
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_text(json.dumps(cached | {name: entry}, indent=1))
    except OSError:
        pass
    return entry | {"cached": False}


def warm_up(seconds: float = 0.5) -> None:
    """Keep the GPU copying for a moment, so that the first size is not timed on a GPU that
    has just woken from idle clocks (the sizes after it, and PyTorch after yours, would be)."""
    src = torch.empty(1 << 26, device="cuda")  # 256 MiB
    dst = torch.empty_like(src)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            dst.copy_(src)
        torch.cuda.synchronize()


def device_copy() -> dict:
    """The device's copy bandwidth for this worker: read or measured at its first size (then
    the GPU is warmed up too, where the figure came from the cache), kept for the others."""
    if not _measured:
        _measured.update(copy_bandwidth())
        if _measured["cached"]:  # otherwise measuring the copy has just kept the GPU busy
            warm_up()
    return dict(_measured)


def copy_ms(traffic: int) -> float:
    """A device-to-device copy moving ``traffic`` bytes, half read and half written: what the
    least traffic a size needs would cost at the device's copy speed, at this very size."""
    import triton.testing
    half = max(1, traffic // 2)
    src = torch.empty(half, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return triton.testing.do_bench(lambda: dst.copy_(src), return_mode=STATISTIC)


def _rounds(timers: dict) -> dict:
    """Each timer in turn, ROUNDS times: the fastest of each (``<name>``), and all of them
    (``<name>_rounds``)."""
    taken: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(ROUNDS):
        for name, timer in timers.items():
            taken[name].append(timer())
    return {**{name: min(values) for name, values in taken.items()},
            **{f"{name}_rounds": values for name, values in taken.items()}}


def tensors(described: tuple[wire.TensorShape, ...], blobs: list[bytes]) -> list[torch.Tensor]:
    """The grader's planned tensors (their dtypes and shapes, and their bytes), on the GPU."""
    out = []
    for info, blob in zip(described, blobs):
        dtype = getattr(torch, info.dtype)
        flat = torch.frombuffer(bytearray(blob), dtype=dtype) if blob else torch.empty(0, dtype=dtype)
        out.append(flat.reshape(info.shape).to("cuda"))
    return out


def allocate(described: tuple[wire.NamedTensor, ...], zeroed=()) -> list[torch.Tensor]:
    """Output buffers, NaN where floats can hold it, so that an element never written shows;
    zeros for the outputs the puzzle starts as zeros (``Puzzle.zeroed``: atomics accumulate)."""
    out = []
    for info in described:
        dtype = getattr(torch, info.dtype)
        fill = float("nan") if dtype.is_floating_point and info.name not in zeroed else 0
        out.append(torch.full(info.shape, fill, dtype=dtype, device="cuda"))
    return out


def raw(values: list[torch.Tensor]) -> tuple[list[dict], list[bytes]]:
    """What goes back to the grader: each tensor's dtype and shape, and its bytes."""
    described, blobs = [], []
    for value in values:
        described.append({"dtype": dtype_name(value), "shape": list(value.shape)})
        blobs.append(tensor_bytes(value))
    return described, blobs


def _baselines(puzzle: Puzzle, values: dict, timer) -> dict:
    """The baseline's timer (the Bench's baseline, else the spec), and ``torch.compile`` of it when
    the puzzle's Bench asks for one."""
    chosen = puzzle.bench.baseline or puzzle.spec

    def baseline(*xs):  # keyword-only parameters (a mode such as CAUSAL) get the size's values
        return with_case_values(chosen, xs, values)
    timers = {"baseline_ms": timer(baseline)}
    if puzzle.bench.compile_baseline:
        timers["compiled_ms"] = timer(torch.compile(baseline))
    return timers


def bench_kernel(puzzle: Puzzle, kernel, params: list[Param], msg: wire.Bench,
                 blobs: list[bytes]) -> tuple[dict, list]:
    """One size: the planned inputs in, the kernel run once, what it wrote out; then the timings."""
    import triton.testing
    inputs = tensors(msg.inputs, blobs)
    outputs = allocate(msg.outputs, puzzle.zeroed)
    # An autotuner's configs give some constexprs: they are not passed, and the grid follows
    # the config Triton picks.
    values = dict(msg.values)
    layers = unwrap(kernel, puzzle.kernel)
    provided = layers.provided
    _, defaults = parameters(layers)  # a defaulted parameter (``eps: tl.constexpr = 1e-5``) keeps it, as in grading
    binding = bind(params, [None] * (len(inputs) + len(outputs)), values, puzzle.kernel, provided=provided,
                   defaults=defaults)
    grid = tuple(msg.grid) if not provided else \
        (lambda meta: tuple(int(g) for g in puzzle.grid({**values, **meta})))

    def run():
        kernel[grid](*inputs, *outputs, **binding.named, **puzzle.bench.launch)

    run()
    torch.cuda.synchronize()
    described, out = raw(outputs)
    timed = _rounds({"ms": lambda: triton.testing.do_bench(run, return_mode=STATISTIC),
                     **_baselines(puzzle, values, lambda fn: lambda: triton.testing.do_bench(
                         lambda: fn(*inputs), return_mode=STATISTIC))})
    return {"sizes": msg.sizes, "blocks": dict(puzzle.bench.blocks), "outputs": described,
            "copy_ms": copy_ms(msg.traffic), **timed}, out


def bench_function(puzzle: Puzzle, cls, msg: wire.Bench, blobs: list[bytes]) -> tuple[dict, list]:
    """One size of forward + backward of ``cls`` against autograd through the Bench's baseline (else
    the spec): the gradients
    ``cls`` gave go back; ``gpu_ms`` is the same step replayed as a CUDA graph (``msg.graphs``
    false skips that, after a capture has failed at an earlier size)."""
    import triton.testing
    *planned, grad = tensors(msg.inputs, blobs)
    leaves = [x.requires_grad_(x.is_floating_point()) for x in planned]
    grads = [x for x in leaves if x.requires_grad]

    def ours():
        cls.apply(*leaves).backward(grad)

    def step(fn):
        return lambda: fn(*leaves).backward(grad)

    ours()
    torch.cuda.synchronize()
    described, out = raw([x.grad if x.grad is not None else torch.zeros_like(x) for x in leaves])
    for x in grads:
        x.grad = None
    timers = {"ms": ours, **_baselines(puzzle, dict(msg.values), step)}
    timed = _rounds({name: (lambda fn: lambda: triton.testing.do_bench(fn, grad_to_none=grads,
                                                                       return_mode=STATISTIC))(fn)
                     for name, fn in timers.items()})
    gpu = {"gpu_ms": None, "baseline_gpu_ms": None,
           "gpu_note": "" if msg.graphs else "not timed as a CUDA graph: the capture failed at an earlier size"}
    if msg.graphs:
        try:
            gpu["gpu_ms"] = triton.testing.do_bench_cudagraph(ours, grad_to_none=grads, return_mode=STATISTIC)
            gpu["baseline_gpu_ms"] = triton.testing.do_bench_cudagraph(timers["baseline_ms"], grad_to_none=grads,
                                                                       return_mode=STATISTIC)
        except Exception as exc:  # a wrapper that synchronises or reads values cannot be captured
            gpu["gpu_note"] = f"not timed as a CUDA graph: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    return {"sizes": msg.sizes, "blocks": {}, "outputs": described, "copy_ms": copy_ms(msg.traffic),
            **timed, **gpu}, out
