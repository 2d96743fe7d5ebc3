"""Timing a learner's kernel or autograd function on a GPU (runs inside a cuda worker).

``triton.testing.do_bench`` does the warm-up, the repeats and the L2 flush. Every size is
checked against the spec before it is timed, so a fast wrong kernel is not reported as fast.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

from .annotations import read_spec
from .binding import Param, bind
from .puzzle import Case, Puzzle

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "triton-puzzles" / "copy-bandwidth.json"


def copy_bandwidth() -> dict:
    """The device's own copy bandwidth (bytes read + written per second), measured once and cached."""
    import triton.testing
    name = torch.cuda.get_device_name()
    try:
        cached = json.loads(CACHE.read_text())
        if name in cached:
            return cached[name] | {"cached": True}
    except (OSError, ValueError):
        cached = {}
    n = 1 << 28  # 1 GiB of float32
    src, dst = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
    ms = triton.testing.do_bench(lambda: dst.copy_(src), warmup=50, rep=500)
    entry = {"gb_per_s": 2 * 4 * n / (ms * 1e-3) / 1e9, "bytes": 2 * 4 * n, "ms": ms,
             "measured": time.strftime("%Y-%m-%d %H:%M")}
    try:
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_text(json.dumps(cached | {name: entry}, indent=1))
    except OSError:
        pass
    return entry | {"cached": False}


def _inputs(puzzle: Puzzle, dims: dict, gen: torch.Generator) -> list[torch.Tensor]:
    specs, _ = read_spec(puzzle.spec, puzzle.outputs)
    return [torch.randn(s.shape(dims), generator=gen, device="cuda", dtype=getattr(torch, s.dtype)) for s in specs]


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
        outputs.append(torch.empty(shape, device="cuda", dtype=getattr(torch, spec.dtype)))
    values = dict(dims)
    for name, tensor in zip([*[s.name for s in read_spec(puzzle.spec, puzzle.outputs)[0]], *puzzle.outputs],
                            [*inputs, *outputs]):
        values.update(zip(puzzle.strides.get(name, ()), tensor.stride()))
    binding = bind(params, [None] * (len(inputs) + len(outputs)), values, puzzle.kernel)
    grid = puzzle.launch_grid(case)

    def run():
        kernel[grid](*inputs, *outputs, **binding.named, **puzzle.bench.launch)

    run()
    expected = puzzle.spec(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    error = 0.0
    for name, got, want in zip(puzzle.outputs, outputs, expected):
        reduce = puzzle.host_reduce.get(name)
        got = reduce(got) if reduce else got
        error = max(error, float((got.double() - want.double()).abs().max()))
    ok = error <= puzzle.atol * 10 + puzzle.rtol * 10 * max(1.0, max(float(w.abs().max()) for w in expected))
    ms = triton.testing.do_bench(run)
    baseline = puzzle.bench.baseline or puzzle.spec
    base_ms = triton.testing.do_bench(lambda: baseline(*inputs))
    return {"sizes": sizes, "blocks": blocks, "ms": ms, "baseline_ms": base_ms, "max_abs_err": error, "correct": ok}


def bench_function(puzzle: Puzzle, cls, sizes: dict) -> dict:
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
    ms = triton.testing.do_bench(ours, grad_to_none=leaves)
    base_ms = triton.testing.do_bench(theirs, grad_to_none=leaves)
    return {"sizes": sizes, "blocks": {}, "ms": ms, "baseline_ms": base_ms, "max_abs_err": error, "correct": ok}
