# Correct: each column draws with its flat index as the counter and keeps word j % 4. Every element has
# a draw of its own (four columns could share one, numbered j // 4 in the row): a note beside the pass.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"
EXPECT_SAYS = "Note: your output looks like word j % 4 of draw i * T + j"


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * B1 + tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    r0, r1, r2, r3 = tl.rand4x(SEED, row * T + cols)
    word = cols % 4
    u = tl.where(word == 0, r0, tl.where(word == 1, r1, tl.where(word == 2, r2, r3)))
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
