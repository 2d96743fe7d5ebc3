# Correct: dropout as attorch writes it: the flat offsets as Philox counters of `tl.rand`, an element
# dropped where its number is below p, the survivors multiplied by 1 / (1 - p). Another stream than the
# statement's: graded by its properties, it passes.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    offsets = row * T + cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    p = P_PERCENT / 100
    random = tl.rand(SEED, offsets)
    z = tl.where(random < p, 0.0, x * (1 / (1 - p)))
    tl.store(z_ptr + offsets, z, mask=mask)
