import triton
import triton.language as tl


@triton.jit
def flashatt_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr):
    # The original notebook had no B1: keys are walked in blocks of B0 as well.
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    q = tl.load(q_ptr + rows, mask=rows < N0, other=0.0)
    best = tl.full([B0], float("-inf"), tl.float32)
    total = tl.zeros([B0], dtype=tl.float32)
    weighted = tl.zeros([B0], dtype=tl.float32)
    for j in range(0, T, B0):
        keys = j + tl.arange(0, B0)
        valid = keys < T
        k = tl.load(k_ptr + keys, mask=valid, other=0.0)
        v = tl.load(v_ptr + keys, mask=valid, other=0.0)
        score = tl.where(valid[None, :], q[:, None] * k[None, :], float("-inf"))
        new_best = tl.maximum(best, tl.max(score, axis=1))
        rescale = tl.exp(best - new_best)
        e = tl.exp(score - new_best[:, None])
        total = total * rescale + tl.sum(e, axis=1)
        weighted = weighted * rescale + tl.sum(e * v[None, :], axis=1)
        best = new_best
    tl.store(z_ptr + rows, weighted / total, mask=rows < N0)
