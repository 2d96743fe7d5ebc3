"""Hands out the elements in column-major order: lane k of a program takes element (r, c) with
r = idx % N0 and c = idx // N0, so neighbouring lanes are a row (16 KiB) apart and every load and
store of a warp touches 32 sectors for 64 useful bytes; expect several times slower than the reference."""
import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, z_ptr, N0, T, SEED, P_PERCENT, B1: tl.constexpr):
    # The grid has N0 * cdiv(T, B1) programs: enough blocks of B1 to cover all N0 * T elements.
    program = tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)
    idx = program * B1 + tl.arange(0, B1)
    mask = idx < N0 * T
    r = idx % N0
    c = idx // N0
    # The element's own flat index names its random number, as the spec requires.
    offsets = r * T + c
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    p = P_PERCENT / 100
    u = tl.rand(SEED, offsets)
    tl.store(z_ptr + offsets, tl.where(u > p, x / (1 - p), 0.0), mask=mask)
