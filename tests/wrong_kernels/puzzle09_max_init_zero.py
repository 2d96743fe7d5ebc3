# Flash attention whose running maximum starts at 0 instead of -inf. Harmless while a query
# has a positive score; when all of a query's scores are large and negative, the maximum
# stays 0, every exp underflows to 0 and z = 0 / 0 = nan.
import triton
import triton.language as tl

EXPECT_KIND = "nonfinite"
EXPECT_CASE = "all_negative_scores"


@triton.jit
def flashatt_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    qi = tl.program_id(0) * B0 + tl.arange(0, B0)
    q_mask = qi < N0
    q = tl.load(q_ptr + qi, mask=q_mask, other=0.0)

    # Mistake: 0 is not below every score.
    m = tl.zeros([B0], dtype=tl.float32)
    s = tl.zeros([B0], dtype=tl.float32)
    a = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        kj = start + tl.arange(0, B1)
        k_mask = kj < T
        k = tl.load(k_ptr + kj, mask=k_mask, other=0.0)
        v = tl.load(v_ptr + kj, mask=k_mask, other=0.0)
        scores = tl.where(k_mask[None, :], q[:, None] * k[None, :], float("-inf"))
        m_new = tl.maximum(m, tl.max(scores, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(scores - m_new[:, None])
        s = s * alpha + tl.sum(p, axis=1)
        a = a * alpha + tl.sum(p * v[None, :], axis=1)
        m = m_new
    tl.store(z_ptr + qi, a / s, mask=q_mask)
