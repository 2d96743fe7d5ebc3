"""Timing a learner's kernel or autograd function on a GPU (runs inside a cuda worker).

``triton.testing.do_bench`` does the warm-up, the repeats and the L2 flush. Each timing is
the median of its repeats, as in the Triton tutorials, and yours and PyTorch's are taken in
turn, ROUNDS times; the report keeps the fastest round of each (noise only ever adds time, as
``timeit``'s documentation argues) and every round's figure for the JSON. Every size is
checked against the spec before it is timed, so a fast wrong kernel is not reported as fast.
An autograd function is also timed replayed as a CUDA graph, which leaves
out the host's work: the gap between the two figures is the step's host overhead.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

from ..annotations import read_spec
from ..binding import Param, bind
from ..puzzle import Case, Puzzle
from .launch import unwrap

STATISTIC = "median"
ROUNDS = 3
METHOD = f"fastest of {ROUNDS} rounds, each the median of do_bench's repeats"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "triton-puzzles" / "copy-bandwidth.json"


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


def _rounds(time_ours, time_theirs) -> dict:
    """Yours and PyTorch's in turn, ROUNDS times: the fastest of each, and all of them."""
    ours, theirs = [], []
    for _ in range(ROUNDS):
        ours.append(time_ours())
        theirs.append(time_theirs())
    return {"ms": min(ours), "baseline_ms": min(theirs), "ms_rounds": ours, "baseline_ms_rounds": theirs}


def _inputs(puzzle: Puzzle, dims: dict, gen: torch.Generator) -> list[torch.Tensor]:
    specs, _ = read_spec(puzzle.spec, puzzle.outputs)
    return [_input(puzzle, s, dims, gen) for s in specs]


def _input(puzzle: Puzzle, spec, dims: dict, gen: torch.Generator) -> torch.Tensor:
    """Floats from randn; integers the puzzle bounds (``Puzzle.ranges``) drawn in their range."""
    from ..inputs import integer_bounds
    dtype = getattr(torch, spec.dtype)
    bounds = integer_bounds(puzzle, spec.name, dims)
    if bounds is None:
        return torch.randn(spec.shape(dims), generator=gen, device="cuda", dtype=dtype)
    return torch.randint(*bounds, spec.shape(dims), generator=gen, device="cuda", dtype=dtype)


def bench_kernel(puzzle: Puzzle, kernel, params: list[Param], sizes: dict) -> dict:
    import triton.testing
    blocks = dict(puzzle.bench.blocks)
    case = Case("bench", sizes, blocks)
    dims = {**puzzle.sizes(case), **blocks}
    gen = torch.Generator(device="cuda").manual_seed(0)
    inputs = _inputs(puzzle, dims, gen)
    _, out_specs = read_spec(puzzle.spec, puzzle.outputs)
    outputs = []
    for spec in out_specs:
        dims_str = puzzle.allocate.get(spec.name)
        shape = tuple(dims[d] for d in dims_str.split()) if dims_str else spec.shape(dims)
        fill = torch.zeros if spec.name in puzzle.zeroed else torch.empty
        outputs.append(fill(shape, device="cuda", dtype=getattr(torch, spec.dtype)))
    values = dict(dims)
    for name, tensor in zip([*[s.name for s in read_spec(puzzle.spec, puzzle.outputs)[0]], *puzzle.outputs],
                            [*inputs, *outputs]):
        values.update(zip(puzzle.strides.get(name, ()), tensor.stride()))
    # An autotuner's configs give some constexprs: they are not passed, and the grid follows
    # the config Triton picks.
    provided = unwrap(kernel, puzzle.kernel).provided
    binding = bind(params, [None] * (len(inputs) + len(outputs)), values, puzzle.kernel, provided=provided)
    grid = puzzle.launch_grid(case) if not provided else \
        (lambda meta: tuple(int(g) for g in puzzle.grid({**dims, **meta})))

    def run():
        kernel[grid](*inputs, *outputs, **binding.named, **puzzle.bench.launch)

    run()
    expected = puzzle.run_spec(inputs, dims)  # keyword-only parameters get the size's values
    expected = expected if isinstance(expected, tuple) else (expected,)
    error = 0.0
    for name, got, want in zip(puzzle.outputs, outputs, expected):
        reduce = puzzle.host_reduce.get(name)
        got = reduce(got) if reduce else got
        error = max(error, float((got.double() - want.double()).abs().max()))
    ok = error <= puzzle.atol * 10 + puzzle.rtol * 10 * max(1.0, max(float(w.abs().max()) for w in expected))
    baseline = puzzle.bench.baseline or puzzle.spec
    return {"sizes": sizes, "blocks": blocks, "max_abs_err": error, "correct": ok,
            **_rounds(lambda: triton.testing.do_bench(run, return_mode=STATISTIC),
                      lambda: triton.testing.do_bench(lambda: baseline(*inputs), return_mode=STATISTIC))}


def bench_function(puzzle: Puzzle, cls, sizes: dict, graphs_ok: bool = True) -> dict:
    """Forward + backward of ``cls`` against autograd on the spec; ``gpu_ms`` is the same step
    replayed as a CUDA graph (``graphs_ok=False`` skips that, after a capture has failed)."""
    import triton.testing
    case = Case("bench", sizes, {})
    dims = dict(puzzle.sizes(case))
    gen = torch.Generator(device="cuda").manual_seed(0)
    leaves = [x.requires_grad_() for x in _inputs(puzzle, dims, gen)]
    grad = torch.randn(puzzle.spec(*leaves).shape, generator=gen, device="cuda")

    def ours():
        cls.apply(*leaves).backward(grad)

    def theirs():
        puzzle.spec(*leaves).backward(grad)

    ours()
    mine = [x.grad.clone() for x in leaves]
    for x in leaves:
        x.grad = None
    theirs()
    error = max(float((a - x.grad).abs().max()) for a, x in zip(mine, leaves))
    scale = max(float(x.grad.abs().max()) for x in leaves)
    ok = error <= puzzle.atol * 10 + puzzle.rtol * 10 * max(1.0, scale)
    timed = _rounds(lambda: triton.testing.do_bench(ours, grad_to_none=leaves, return_mode=STATISTIC),
                    lambda: triton.testing.do_bench(theirs, grad_to_none=leaves, return_mode=STATISTIC))
    gpu = {"gpu_ms": None, "baseline_gpu_ms": None,
           "gpu_note": "" if graphs_ok else "not timed as a CUDA graph: the capture failed at an earlier size"}
    if graphs_ok:
        try:
            gpu["gpu_ms"] = triton.testing.do_bench_cudagraph(ours, grad_to_none=leaves, return_mode=STATISTIC)
            gpu["baseline_gpu_ms"] = triton.testing.do_bench_cudagraph(theirs, grad_to_none=leaves,
                                                                       return_mode=STATISTIC)
        except Exception as exc:  # a wrapper that synchronises or reads values cannot be captured
            gpu["gpu_note"] = f"not timed as a CUDA graph: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    return {"sizes": sizes, "blocks": {}, "max_abs_err": error, "correct": ok, **timed, **gpu}
