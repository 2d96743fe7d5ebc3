"""Fails at run time: a shape mismatch the interpreter reports."""
import triton
import triton.language as tl


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    x = tl.load(x_ptr + offsets, mask=offsets < N0)
    tl.store(z_ptr + offsets, x + tl.arange(0, 2 * B0), mask=offsets < N0)
