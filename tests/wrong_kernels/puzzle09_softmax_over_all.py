# Normalises by one softmax over the whole N0 x T score matrix (all queries and keys
# together) instead of one softmax per query.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"


@triton.jit
def flashatt_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    # Mistake: the denominator sums exp(q_l k_j) over every query l and key j.
    total = 0.0
    for qstart in range(0, N0, B0):
        ql = qstart + tl.arange(0, B0)
        q_all = tl.load(q_ptr + ql, mask=ql < N0, other=0.0)
        for start in range(0, T, B1):
            kj = start + tl.arange(0, B1)
            k = tl.load(k_ptr + kj, mask=kj < T, other=0.0)
            valid = (ql < N0)[:, None] & (kj < T)[None, :]
            total += tl.sum(tl.sum(tl.where(valid, tl.exp(q_all[:, None] * k[None, :]), 0.0), axis=1), axis=0)

    qi = pid * B0 + tl.arange(0, B0)
    q_mask = qi < N0
    q = tl.load(q_ptr + qi, mask=q_mask, other=0.0)
    a = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        kj = start + tl.arange(0, B1)
        k_mask = kj < T
        k = tl.load(k_ptr + kj, mask=k_mask, other=0.0)
        v = tl.load(v_ptr + kj, mask=k_mask, other=0.0)
        p = tl.where(k_mask[None, :], tl.exp(q[:, None] * k[None, :]), 0.0)
        a += tl.sum(p * v[None, :], axis=1)
    tl.store(z_ptr + qi, a / total, mask=q_mask)
