import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * B1 + tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    # One Philox draw gives four words: a quarter as many draws as elements. Ten rounds of 32-bit
    # multiplies per draw would cost more than moving the element, so none of its words is wasted.
    # The counter (SEED, draw) alone decides them: the backward draws the same mask, nothing is stored.
    draws = row * tl.cdiv(T, 4) + block * (B1 // 4) + tl.arange(0, B1 // 4)
    r0, r1, r2, r3 = tl.rand4x(SEED, draws)
    # Column 4q + k of the block takes word k of draw q: pair (r0, r2) and (r1, r3), then the
    # pairs, so that the flattened [B1 // 4, 2, 2] reads r0, r1, r2, r3 for each q.
    u = tl.reshape(tl.join(tl.join(r0, r2), tl.join(r1, r3)), [B1])
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
