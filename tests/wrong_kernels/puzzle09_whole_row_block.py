"""The old statement's block of 200 keys: not a power of two."""
import triton
import triton.language as tl

EXPECT_KIND = "compile"  # caught by the GPU compile check, which runs first
EXPECT_CHECK = "gpu_compile"


@triton.jit
def flashatt_kernel(q_ptr, k_ptr, v_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    keys = tl.arange(0, 200)
    q = tl.load(q_ptr + rows, mask=rows < N0, other=0.0)
    k = tl.load(k_ptr + keys, mask=keys < T, other=0.0)
    v = tl.load(v_ptr + keys, mask=keys < T, other=0.0)
    s = tl.where((keys < T)[None, :], q[:, None] * k[None, :], float("-inf"))
    e = tl.exp(s - tl.max(s, axis=1)[:, None])
    tl.store(z_ptr + rows, tl.sum(e * v[None, :], axis=1) / tl.sum(e, axis=1), mask=rows < N0)
