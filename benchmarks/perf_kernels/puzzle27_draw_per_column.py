"""Correct dropout that draws for every column: each column runs tl.rand4x on its own draw's
counter and keeps word j % 4, so every draw is made four times; the Philox arithmetic bounds
it, expect clearly slower than the reference."""
import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    word = cols % 4
    r0, r1, r2, r3 = tl.rand4x(SEED, row * tl.cdiv(T, 4) + cols // 4)
    u = tl.where(word == 0, r0, tl.where(word == 1, r1, tl.where(word == 2, r2, r3)))
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
