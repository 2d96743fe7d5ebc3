"""Measures tile sizes and warps of the weighted-sum reference kernels (puzzles 13, 14, 16, 17)
on a GPU, 720 configurations, roughly 15 minutes: a finished tuning record, which chose the
ones the puzzles' --bench uses; its figures are in docs/benchmarks.md ("Weighted sum"). Prints
GB/s and the share of the device's copy bandwidth at ROWS=65536, D=1024, fp32.

    python benchmarks/tuning/weighted_sum_tiles.py
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "solutions"))
sys.path.insert(0, str(ROOT))

from puzzle13_weighted_sum_forward import weighted_sum_fwd  # noqa: E402
from puzzle14_weighted_sum_backward import weighted_sum_bwd  # noqa: E402
from puzzle16_weighted_sum_forward_descriptors import weighted_sum_fwd_desc  # noqa: E402
from puzzle17_weighted_sum_backward_descriptors import weighted_sum_bwd_desc  # noqa: E402

from grader.sandbox.bench.run import copy_bandwidth  # noqa: E402

ROWS, D = 65536, 1024


def main() -> int:
    if hasattr(triton, "set_allocator"):
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    copy = copy_bandwidth()["gb_per_s"]
    x = torch.randn(ROWS, D, device="cuda")
    w = torch.randn(D, device="cuda")
    g = torch.randn(ROWS, device="cuda")
    y = torch.empty(ROWS, device="cuda")
    gx = torch.empty_like(x)
    print(f"{torch.cuda.get_device_name()}, copy {copy:.0f} GB/s, triton {triton.__version__}")
    print("| kernel | ROWS_TILE | D_TILE | warps | stages | ms | GB/s | of copy |\n|---|---|---|---|---|---|---|---|")
    fwd_bytes = 4 * (ROWS * D + D + ROWS)
    bwd_bytes = 4 * (2 * ROWS * D + 2 * ROWS + D)
    for kernel, backward in ((weighted_sum_fwd, False), (weighted_sum_fwd_desc, False),
                             (weighted_sum_bwd, True), (weighted_sum_bwd_desc, True)):
        best = None
        grid_of = itertools.product((4, 8, 16, 32, 64), (128, 256, 512, 1024), (4, 8, 16), (2, 3, 4))
        for rt, dt, warps, stages in grid_of:
            tiles = triton.cdiv(ROWS, rt)
            try:
                if backward:
                    part = torch.empty(tiles, D, device="cuda")
                    args = (x, w, g, gx, part, x.stride(0), x.stride(1), w.stride(0), g.stride(0),
                            gx.stride(0), gx.stride(1), part.stride(0), part.stride(1), ROWS, D)
                else:
                    args = (x, w, y, x.stride(0), x.stride(1), w.stride(0), y.stride(0), ROWS, D)
                run = lambda: kernel[(tiles,)](*args, ROWS_TILE_SIZE=rt, D_TILE_SIZE=dt,  # noqa: E731
                                               num_warps=warps, num_stages=stages)
                ms = triton.testing.do_bench(run)
            except Exception:  # some tiles do not fit (shared memory, TMA box limits)
                continue  # too big for shared memory or a TMA box
            gbs = (bwd_bytes if backward else fwd_bytes) / (ms * 1e-3) / 1e9
            if best is None or ms < best[0]:
                best = (ms, rt, dt, warps, stages, gbs)
        ms, rt, dt, warps, stages, gbs = best
        print(f"| {kernel.__name__} | {rt} | {dt} | {warps} | {stages} | {ms:.4f} | {gbs:.0f} | "
              f"{100 * gbs / copy:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
