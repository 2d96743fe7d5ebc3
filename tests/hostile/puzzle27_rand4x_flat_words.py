# Correct: tl.rand4x on the flat index // 4, word flat index % 4: draws numbered across the
# rows, so a row's last draw may give the next row its first words, each element its own.
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
    r0, r1, r2, r3 = tl.rand4x(SEED, offsets // 4)
    word = offsets % 4
    u = tl.where(word == 0, r0, tl.where(word == 1, r1, tl.where(word == 2, r2, r3)))
    p = P_PERCENT / 100
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
