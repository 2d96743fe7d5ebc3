# Row i's draws start at i * (T // 4): where T is not a multiple of 4, a row's last columns take the
# words of the next row's first draw, so a few pairs of elements share their mask. Each element is still
# kept with probability 1 - p, as a function of the seed and the element: it passes, with a note.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"
EXPECT_SAYS = "Note: your output looks like rows T // 4 draws apart"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * B1 + tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    draws = row * (T // 4) + block * (B1 // 4) + tl.arange(0, B1 // 4)
    r0, r1, r2, r3 = tl.rand4x(SEED, draws)
    u = tl.reshape(tl.join(tl.join(r0, r2), tl.join(r1, r3)), [B1])
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
