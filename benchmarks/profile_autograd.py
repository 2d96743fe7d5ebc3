"""Where the time of the puzzle-15 reference (forward + backward through autograd) goes on a GPU.

    python benchmarks/profile_autograd.py

Prints per-call wall time of each part, then torch.profiler's table for the whole step.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import torch
import triton.testing

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "solutions"))

from puzzle15_weighted_sum_autograd import WeightedSumFunc  # noqa: E402

ROWS, D = 65536, 1024


def wall(fn, n=50) -> float:
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n * 1e3


def main() -> int:
    x = torch.randn(ROWS, D, device="cuda", requires_grad=True)
    w = torch.randn(D, device="cuda", requires_grad=True)
    g = torch.randn(ROWS, device="cuda")

    def step():
        WeightedSumFunc.apply(x, w).backward(g)
        x.grad = None
        w.grad = None

    def forward_only():
        with torch.no_grad():
            WeightedSumFunc.apply(x, w)

    def torch_step():
        (x @ w).backward(g)
        x.grad = None
        w.grad = None

    for name, fn in (("forward only", forward_only), ("forward + backward", step), ("PyTorch autograd", torch_step)):
        print(f"{name:20s} wall {wall(fn):.4f} ms/call   do_bench {triton.testing.do_bench(fn):.4f} ms")
    # The launch cost alone: a tiny backward launch, from this thread and from another one
    # (autograd runs CUDA backward passes on a thread of its own).
    import threading

    import triton

    from puzzle15_weighted_sum_autograd import BWD
    from puzzle14_weighted_sum_backward import weighted_sum_bwd
    xs, ws, gs = torch.randn(64, 64, device="cuda"), torch.randn(64, device="cuda"), torch.randn(64, device="cuda")
    gx, part = torch.empty_like(xs), torch.empty(2, 64, device="cuda")

    def tiny_launch():
        weighted_sum_bwd[(2,)](xs, ws, gs, gx, part, 64, 1, 1, 1, 64, 1, 64, 1, 64, 64, **BWD)

    print(f"tiny launch, main thread   {wall(tiny_launch, 200) * 1e3:.1f} us/launch")
    box = {}
    thread = threading.Thread(target=lambda: box.update(us=wall(tiny_launch, 200) * 1e3))
    thread.start()
    thread.join()
    print(f"tiny launch, other thread  {box['us']:.1f} us/launch")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            step()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))
    return 0


if __name__ == "__main__":
    sys.exit(main())
