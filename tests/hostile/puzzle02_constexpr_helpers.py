# Correct: compile-time helpers as kernel libraries write them. FlagGems decorates a plain
# function with @tl.constexpr and calls it from the kernel on a dtype; newer code writes
# @triton.constexpr_function. Both run as Python while the kernel compiles (and in the
# interpreter), so the grader keeps them and reads them first.
import triton
import triton.language as tl
from triton.language.core import _unwrap_if_constexpr

EXPECT_STATUS = "pass"
OFFSET = 10.0


@tl.constexpr
def accumulator_type(dtype):
    if dtype.is_fp16() or dtype.is_bf16():
        return tl.float32
    return dtype


@triton.constexpr_function
def lanes(block):
    return max(16, block)


@tl.constexpr
def added(block):
    block = _unwrap_if_constexpr(block)
    return OFFSET + (block - block)


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, lanes(B0))
    mask = (offsets < N0) & (tl.arange(0, lanes(B0)) < B0)
    x = tl.load(x_ptr + offsets, mask=mask).to(accumulator_type(x_ptr.dtype.element_ty))
    tl.store(z_ptr + offsets, x + added(B0), mask=mask)
