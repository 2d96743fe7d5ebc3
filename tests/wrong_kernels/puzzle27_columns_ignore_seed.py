# One column in 16 draws with a seed of its own, 0: those columns drop the same elements at
# every step, and the rest of the mask hides them from a single pair of masks.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "many_seeds"
EXPECT_SAYS = "related masks: part of the tensor ignores SEED"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    u = tl.where(cols % 16 == 0, tl.rand(0, offsets), tl.rand(SEED, offsets))
    p = P_PERCENT / 100
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
