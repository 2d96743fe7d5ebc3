"""Runs, but adds 11 instead of 10: it fails grading, and --perf says its figures are a wrong kernel's."""
import triton
import triton.language as tl


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    x = tl.load(x_ptr + offsets, mask=offsets < N0)
    tl.store(z_ptr + offsets, x + 11.0, mask=offsets < N0)
