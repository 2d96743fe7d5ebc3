# Puzzle 2 without any mask: 200 is not a multiple of 32, so the last of the 7 programs
# loads x[200:224] and stores z[200:224], past the end of both vectors.
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"
EXPECT_CASE = "classic"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    tl.store(z_ptr + offsets, x + 10.0)
