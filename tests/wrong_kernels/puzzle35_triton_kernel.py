"""A Triton kernel where the puzzle grades a Helion one."""
import triton
import triton.language as tl

EXPECT_KIND = "signature"
EXPECT_SAYS = "not a Helion kernel"


@triton.jit
def helion_add(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
