"""Measures where the host time of puzzle 15's forward + backward step goes, and what cuts it
(a few minutes on a GPU at the default 12 rounds).

    python benchmarks/step_profile.py [--rounds N]

1. Host cost per call of single pieces and of whole steps (tiny tensors: the GPU idles, so wall
   time is CPU time). Variants run in interleaved rounds; min and median over rounds are shown,
   because this machine's host speed drifts between rounds.
2. The step at 65536 x 1024 and 262144 x 1024 with ``do_bench`` (host and GPU, what ``--bench``
   reports) in interleaved rounds, and with ``do_bench_cudagraph`` (GPU only).

The solution's wrapper runs with three launchers in turn: Triton's JIT call
``kernel[grid](...)``; a compiled handle per specialisation (``kernel.warmup`` then
``compiled[grid](...)``, as the fused-softmax tutorial does: the solution's own); or Triton's
C launcher called directly (the floor; a private API, not for a course).
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

import puzzle15_weighted_sum_autograd as solution  # noqa: E402
from puzzle13_weighted_sum_forward import weighted_sum_fwd  # noqa: E402

FWD = solution.FWD
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 12


def jit_launch(kernel, programs: int, args: tuple, config: dict) -> None:
    kernel[(programs,)](*args, **config)


handle_launch = solution._launch  # a compiled handle per specialisation
_launchers: dict = {}


def c_launch(kernel, programs: int, args: tuple, config: dict) -> None:
    """Triton's C launcher called directly: the floor of a launch's host cost (private API)."""
    key = (kernel, solution._specialisation(args))
    entry = _launchers.get(key)
    if entry is None:
        compiled = kernel.warmup(*args, grid=(programs,), **config)
        compiled._init_handles()
        entry = _launchers[key] = (compiled.run, compiled.function, compiled.packed_metadata)
    run, function, meta = entry
    stream = torch._C._cuda_getCurrentRawStream(torch.cuda.current_device())
    constexprs = (v for k, v in config.items() if k not in solution.LAUNCH_OPTIONS)
    run(programs, 1, 1, stream, function, meta, None, None, None, *args, *constexprs)


def launching_with(launch):
    """The solution's wrapper with its launches made by ``launch``. The backward looks the
    launcher up when it runs, so a step's forward and backward use the same one."""
    def apply(x, w):
        solution._launch = launch
        return solution.WeightedSumFunc.apply(x, w)
    return apply


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
    "JIT launches": launching_with(jit_launch),
    "the solution: compiled handles": launching_with(handle_launch),
    "C launcher": launching_with(c_launch),
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
        "Triton JIT launch": lambda: jit_launch(weighted_sum_fwd, 16, args, FWD),
        "Triton compiled handle": lambda: handle_launch(weighted_sum_fwd, 16, args, FWD),
        "Triton C launcher": lambda: c_launch(weighted_sum_fwd, 16, args, FWD),
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
    print(f"  {'':32s} {'round means: min':>17s} {'median':>7s} {'max':>7s}   round medians: min  median    max")
    for name in VARIANTS:
        a, b = means[name], medians[name]
        print(f"  {name:32s} {min(a):17.4f} {statistics.median(a):7.4f} {max(a):7.4f}   "
              f"{min(b):18.4f} {statistics.median(b):7.4f} {max(b):7.4f}")
    print(f"== rows={rows} D=1024: do_bench_cudagraph ms (GPU only)")
    for name, apply in VARIANTS.items():
        ms = triton.testing.do_bench_cudagraph(lambda: apply(x, w).backward(g), grad_to_none=[x, w])
        print(f"  {name:32s} {ms:.4f}")


def main() -> int:
    print(torch.cuda.get_device_name(), "triton", triton.__version__, "torch", torch.__version__)
    host_costs()
    for rows in (65536, 262144):
        big_step(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
