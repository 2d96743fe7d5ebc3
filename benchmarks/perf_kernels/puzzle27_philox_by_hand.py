"""Dropout with Philox 4x32-10 written out by hand (tl.umulhi, multiplies, xors) instead of
tl.rand4x, one draw per four columns as the reference: the same arithmetic the library's
Philox compiles to, plus the learner's own conversion to floats; expect about the reference's
time, which the Philox rounds, not the memory, may set."""
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
def _uniform(word):
    x = word.to(tl.int32, bitcast=True)
    x = tl.where(x < 0, -x - 1, x)
    return x.to(tl.float32) * 4.6566127342e-10


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * B1 + tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    draws = row * tl.cdiv(T, 4) + block * (B1 // 4) + tl.arange(0, B1 // 4)
    w0, w1, w2, w3 = _philox(draws, SEED)
    r0, r1, r2, r3 = _uniform(w0), _uniform(w1), _uniform(w2), _uniform(w3)
    u = tl.reshape(tl.join(tl.join(r0, r2), tl.join(r1, r3)), [B1])
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
