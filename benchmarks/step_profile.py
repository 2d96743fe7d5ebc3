"""Where the host time of puzzle 15's forward + backward step goes, and what cuts it.

    python benchmarks/step_profile.py [--rounds N]

1. Host cost per call of single pieces and of whole steps (tiny tensors: the GPU idles, so wall
   time is CPU time). Variants run in interleaved rounds; min and median over rounds are shown,
   because this machine's host speed drifts between rounds.
2. The step at 65536 x 1024 and 262144 x 1024 with ``do_bench`` (host and GPU, what ``--bench``
   reports) in interleaved rounds, and with ``do_bench_cudagraph`` (GPU only).

Besides the solution, three wrappers that differ only in how they launch: Triton's JIT call
``kernel[grid](...)``, a compiled handle per specialisation (``kernel.warmup`` then
``compiled[grid](...)``, as the fused-softmax tutorial and the solution do), or Triton's C
launcher called directly (the floor; a private API, not for a course).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "solutions"))

from puzzle13_weighted_sum_forward import weighted_sum_fwd  # noqa: E402
from puzzle14_weighted_sum_backward import weighted_sum_bwd  # noqa: E402
from puzzle15_weighted_sum_autograd import BWD, FWD, WeightedSumFunc  # noqa: E402

OPTIONS = ("num_warps", "num_stages", "maxnreg")
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 12


def _constexprs(config: dict) -> tuple:
    return tuple(v for k, v in config.items() if k not in OPTIONS)


def _specialisation(args: tuple) -> tuple:
    """What Triton specialises a compiled kernel on: dtype and 16-byte alignment of pointers;
    ints equal to 1, divisible by 16, fitting int32."""
    return tuple((a.dtype, a.data_ptr() % 16 == 0) if isinstance(a, torch.Tensor)
                 else (a == 1, a % 16 == 0, -2**31 <= a < 2**31) for a in args)


def jit_launch(kernel, config: dict, grid: int, args: tuple) -> None:
    kernel[(grid,)](*args, **config)


_handles: dict = {}


def handle_launch(kernel, config: dict, grid: int, args: tuple) -> None:
    key = (kernel, _specialisation(args))
    compiled = _handles.get(key)
    if compiled is None:
        compiled = _handles[key] = kernel.warmup(*args, grid=(grid,), **config)
    compiled[(grid, 1, 1)](*args, *_constexprs(config))


_launchers: dict = {}


def c_launch(kernel, config: dict, grid: int, args: tuple) -> None:
    key = (kernel, _specialisation(args))
    entry = _launchers.get(key)
    if entry is None:
        compiled = kernel.warmup(*args, grid=(grid,), **config)
        compiled._init_handles()
        entry = _launchers[key] = (compiled.run, compiled.function, compiled.packed_metadata)
    run, function, meta = entry
    stream = torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())
    run(grid, 1, 1, stream, function, meta, None, None, None, *args, *_constexprs(config))


def wrapper(launch):
    """The reference wrapper with as few host-side tensor calls as it can make."""
    class Wrapper(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            d = x.shape[-1]
            rows_x = x.reshape(-1, d)
            rows = rows_x.shape[0]
            y = x.new_empty(rows)
            sr, sd = rows_x.stride()
            launch(weighted_sum_fwd, FWD, triton.cdiv(rows, FWD["ROWS_TILE_SIZE"]),
                   (rows_x, w, y, sr, sd, w.stride(0), 1, rows, d))
            ctx.save_for_backward(x, w)
            return y.view(x.shape[:-1])

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            d = x.shape[-1]
            rows_x = x.reshape(-1, d)
            rows = rows_x.shape[0]
            g = g.reshape(-1)
            tiles = triton.cdiv(rows, BWD["ROWS_TILE_SIZE"])
            grad_x = x.new_empty((rows, d))
            partial = x.new_empty((tiles, d))
            sr, sd = rows_x.stride()
            launch(weighted_sum_bwd, BWD, tiles,
                   (rows_x, w, g, grad_x, partial, sr, sd, w.stride(0), g.stride(0), d, 1, d, 1, rows, d))
            return grad_x.view(x.shape), partial.sum(0)
    return Wrapper


class Nothing(torch.autograd.Function):
    """Autograd's own cost for a Python Function: the same allocations, no kernels."""
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x.new_empty(x.shape[:-1])

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        return torch.empty_like(x), torch.empty_like(w)


VARIANTS = {
    "the solution": WeightedSumFunc.apply,
    "JIT launches": wrapper(jit_launch).apply,
    "compiled handles": wrapper(handle_launch).apply,
    "C launcher": wrapper(c_launch).apply,
    "PyTorch autograd": lambda a, b: a @ b,
}


def interleaved(rows: dict, calls: int = 100) -> None:
    """Wall time per call of every row, measured in interleaved rounds; min and median."""
    times = {name: [] for name in rows}
    for fn in rows.values():
        fn()
    for _ in range(ROUNDS):
        for name, fn in rows.items():
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
            times[name].append((time.perf_counter() - start) / calls * 1e6)
    for name, us in times.items():
        print(f"  {name:44s} min {min(us):7.1f} us   median {statistics.median(us):7.1f} us")


def host_costs() -> None:
    x = torch.randn(64, 1024, device="cuda", requires_grad=True)
    w = torch.randn(1024, device="cuda", requires_grad=True)
    g = torch.randn(64, device="cuda")
    xd, wd = x.detach(), w.detach()
    y = torch.empty(64, device="cuda")
    args = (xd, wd, y, 1024, 1, 1, 1, 64, 1024)

    def step(apply):
        def run():
            apply(x, w).backward(g)
            x.grad = w.grad = None
        return run

    print(f"== host cost per call, 64 x 1024 ({ROUNDS} interleaved rounds of 100 calls)")
    interleaved({
        "PyTorch mv (one ATen launch)": lambda: torch.mv(xd, wd),
        "PyTorch sum(0) of (4, 1024)": lambda: y.new_empty(4, 1024).sum(0),
        "Triton JIT launch": lambda: jit_launch(weighted_sum_fwd, FWD, 4, args),
        "Triton compiled handle": lambda: handle_launch(weighted_sum_fwd, FWD, 4, args),
        "Triton C launcher": lambda: c_launch(weighted_sum_fwd, FWD, 4, args),
    })
    interleaved({"autograd.Function, no kernels: fwd+bwd": step(Nothing.apply),
                 **{f"{name}: fwd+bwd": step(apply) for name, apply in VARIANTS.items()}})


def big_step(rows: int) -> None:
    x = torch.randn(rows, 1024, device="cuda", requires_grad=True)
    w = torch.randn(1024, device="cuda", requires_grad=True)
    g = torch.randn(rows, device="cuda")
    ref = None
    for apply in VARIANTS.values():
        apply(x, w).backward(g)
        grads = (x.grad.clone(), w.grad.clone())
        x.grad = w.grad = None
        ref = ref or grads
        err = max(float((a - b).abs().max() / b.abs().max()) for a, b in zip(grads, ref))
        assert err < 1e-5, err
    means = {name: [] for name in VARIANTS}
    medians = {name: [] for name in VARIANTS}
    for _ in range(ROUNDS // 2):
        for name, apply in VARIANTS.items():
            ms = triton.testing.do_bench(lambda: apply(x, w).backward(g), grad_to_none=[x, w], return_mode="all")
            means[name].append(statistics.mean(ms))
            medians[name].append(statistics.median(ms))
    print(f"== rows={rows} D=1024: do_bench ms (host + GPU), {ROUNDS // 2} interleaved rounds")
    print(f"  {'':24s} {'round means: min':>17s} {'median':>7s} {'max':>7s}   round medians: min  median    max")
    for name in VARIANTS:
        a, b = means[name], medians[name]
        print(f"  {name:24s} {min(a):17.4f} {statistics.median(a):7.4f} {max(a):7.4f}   "
              f"{min(b):18.4f} {statistics.median(b):7.4f} {max(b):7.4f}")
    print(f"== rows={rows} D=1024: do_bench_cudagraph ms (GPU only)")
    for name, apply in VARIANTS.items():
        ms = triton.testing.do_bench_cudagraph(lambda: apply(x, w).backward(g), grad_to_none=[x, w])
        print(f"  {name:24s} {ms:.4f}")


def main() -> int:
    print(torch.cuda.get_device_name(), "triton", triton.__version__, "torch", torch.__version__)
    host_costs()
    for rows in (65536, 262144):
        big_step(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
