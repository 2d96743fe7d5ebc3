import triton
import triton.language as tl

K_STEP = tl.constexpr(16)


@triton.jit
def dot_kernel(x_ptr, y_ptr, z_ptr, N0, N1, N2, MID, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    # The original notebook had no B_MID: one batch per program, its own step along MID.
    batch = tl.program_id(2)
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    acc = tl.zeros([B0, B1], dtype=tl.float32)
    for k in range(0, MID, K_STEP):
        ks = k + tl.arange(0, K_STEP)
        a = tl.load(x_ptr + batch * N0 * MID + rows[:, None] * MID + ks[None, :],
                    mask=(rows[:, None] < N0) & (ks[None, :] < MID), other=0.0)
        b = tl.load(y_ptr + batch * MID * N1 + ks[:, None] * N1 + cols[None, :],
                    mask=(ks[:, None] < MID) & (cols[None, :] < N1), other=0.0)
        acc += tl.dot(a, b)
    tl.store(z_ptr + batch * N0 * N1 + rows[:, None] * N1 + cols[None, :], acc,
             mask=(rows[:, None] < N0) & (cols[None, :] < N1))
