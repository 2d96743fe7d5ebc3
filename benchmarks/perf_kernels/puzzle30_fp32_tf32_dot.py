"""Upcasts both fp16 tiles to fp32 before tl.dot: the product runs as TF32 on the tensor cores, half
the fp16 rate (exact here: fp16 fits TF32); the epilogue is unchanged; expect ~2x the reference."""
import triton
import triton.language as tl


@triton.jit
def matmul_bias_gelu_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Grouped numbering, as in puzzle 28.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_band = GROUP_M * tiles_n
    first_m = (pid // per_band) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_band) % rows
    pid_n = (pid % per_band) // rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m % M)[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + (offs_n % N)[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # The epilogue, once the sum is complete, on the fp32 tile still in registers:
    # bias per column, then GELU(x) = 0.5 x (1 + tanh(u)) = x * sigmoid(2u).
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    x = acc + bias[None, :]
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)  # sqrt(2 / pi) * (x + 0.044715 x^3)
    # exp(-2u) overflows to inf for x below about -9 (giving the right limit, -0.0); capping it
    # at exp(80) gives the same fp16 result without the interpreter's overflow warning.
    y = x / (1.0 + tl.exp(tl.minimum(-2.0 * u, 80.0)))

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, y.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
