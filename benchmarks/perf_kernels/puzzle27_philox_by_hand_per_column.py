"""Dropout with Philox 4x32-10 written out by hand and run for every column (its draw is
column // 4, its word column % 4): four times the reference's Philox rounds, 10 rounds of two
32-bit high and low multiplies per element; expect clearly slower, bound by the integer units."""
import triton
import triton.language as tl


@triton.jit
def _philox(counter, key):
    c0 = counter.to(tl.uint32, bitcast=True)
    c1 = tl.zeros_like(c0)
    c2 = tl.zeros_like(c0)
    c3 = tl.zeros_like(c0)
    k0 = key.to(tl.uint32, bitcast=True)
    k1 = tl.zeros_like(k0)
    for _ in tl.static_range(10):
        a0, a2 = c0, c2
        c0 = tl.umulhi(a2, 0xCD9E8D57) ^ c1 ^ k0
        c2 = tl.umulhi(a0, 0xD2511F53) ^ c3 ^ k1
        c1 = a2 * 0xCD9E8D57
        c3 = a0 * 0xD2511F53
        k0 = k0 + 0x9E3779B9
        k1 = k1 + 0xBB67AE85
    return c0, c1, c2, c3


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    w0, w1, w2, w3 = _philox(row * tl.cdiv(T, 4) + cols // 4, SEED)
    word = cols % 4
    bits = tl.where(word == 0, w0, tl.where(word == 1, w1, tl.where(word == 2, w2, w3)))
    signed = bits.to(tl.int32, bitcast=True)
    u = tl.where(signed < 0, -signed - 1, signed).to(tl.float32) * 4.6566127342e-10
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
