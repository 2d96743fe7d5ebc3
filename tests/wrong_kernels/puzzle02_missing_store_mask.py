# Puzzle 2 with the load masked but not the store: the last program writes z[200:224],
# past the end of z (the loaded values there are the masked-off zeros).
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"
EXPECT_CASE = "classic"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    x = tl.load(x_ptr + offsets, mask=offsets < N0)
    tl.store(z_ptr + offsets, x + 10.0)
