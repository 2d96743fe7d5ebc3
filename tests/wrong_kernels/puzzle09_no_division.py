# Puzzle 9 with a correct online softmax whose last step stores the running weighted sum of
# values `a` without dividing it by the running sum of weights `s`.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"
EXPECT_SAYS = "It looks like the weighted sum of values without the division"


@triton.jit
def flashatt_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    qi = pid * B0 + tl.arange(0, B0)
    q_mask = qi < N0
    q = tl.load(q_ptr + qi, mask=q_mask, other=0.0)
    m = tl.full([B0], float("-inf"), tl.float32)
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
    # Mistake: `a` where `a / s` was meant.
    tl.store(z_ptr + qi, a, mask=q_mask)
