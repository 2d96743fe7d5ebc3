"""CPU cost of launching the weighted-sum kernels: which path is slow?

    python benchmarks/launch_overhead.py

Tiny problems, so the GPU time is negligible and the wall time per call is the launch cost.
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "solutions"))

from puzzle13_weighted_sum_forward import weighted_sum_fwd  # noqa: E402
from puzzle15_weighted_sum_autograd import FWD, WeightedSumFunc  # noqa: E402


def per_call_us(fn, n=300) -> float:
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n * 1e6


def main() -> int:
    x = torch.randn(64, 1024, device="cuda", requires_grad=True)
    w = torch.randn(1024, device="cuda", requires_grad=True)
    g = torch.randn(64, device="cuda")
    y = torch.empty(64, device="cuda")
    args = (x, w, y, x.stride(0), x.stride(1), w.stride(0), y.stride(0), 64, 1024)

    def jit_launch():
        weighted_sum_fwd[(4,)](*args, **FWD)

    def plain_launch():
        weighted_sum_fwd[(4,)](*args, ROWS_TILE_SIZE=16, D_TILE_SIZE=1024)

    def step():
        WeightedSumFunc.apply(x, w).backward(g)
        x.grad = None
        w.grad = None

    def torch_step():
        (x @ w).backward(g)
        x.grad = None
        w.grad = None

    rows = [("JIT launch, tuned kwargs (num_warps, num_stages)", jit_launch),
            ("JIT launch, tiles only", plain_launch),
            ("WeightedSumFunc forward + backward", step),
            ("PyTorch autograd forward + backward", torch_step)]
    for name, fn in rows:
        print(f"{name:45s} main thread {per_call_us(fn):8.1f} us/call")
    box = {}
    thread = threading.Thread(target=lambda: box.update(us=per_call_us(jit_launch)))
    thread.start()
    thread.join()
    print(f"{'JIT launch, tuned kwargs':45s} other thread {box['us']:7.1f} us/call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
