"""The blocked constant add, its block chosen by the autotuner from two configs."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"B0": 64}, num_warps=1), triton.Config({"B0": 1024}, num_warps=4)],
                 key=["N0"])
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
