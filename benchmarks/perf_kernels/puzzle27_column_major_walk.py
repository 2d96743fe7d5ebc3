"""Hands out the elements in column-major order: lane k of a program takes element (r, c) with
r = idx % N0 and c = idx // N0, so neighbouring lanes are a row (16 KiB) apart and every load and
store of a warp touches 32 sectors for 64 useful bytes, and each lane draws for itself; expect
several times slower than the reference."""
import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    # The grid has N0 * cdiv(T, B1) programs: enough blocks of B1 to cover all N0 * T elements.
    program = tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)
    idx = program * B1 + tl.arange(0, B1)
    mask = idx < N0 * T
    row = idx % N0
    cols = idx // N0
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=0.0).to(tl.float32)
    word = cols % 4
    r0, r1, r2, r3 = tl.rand4x(SEED, row * tl.cdiv(T, 4) + cols // 4)
    u = tl.where(word == 0, r0, tl.where(word == 1, r1, tl.where(word == 2, r2, r3)))
    p = P_PERCENT / 100
    tl.store(z_ptr + row * T + cols, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
