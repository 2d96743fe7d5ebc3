"""The reference's 128 x 256 output tile computed as four 64-wide sub-tiles: b loaded as four
(BLOCK_K, 64) pieces, four tl.dot and four accumulators a step, stored piece by piece. The same
FLOPs and bytes; each dot a quarter of the width, so less work per tensor-core instruction and
more registers; expect slower than the reference."""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    SUB: tl.constexpr = BLOCK_N // 4
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_band = GROUP_M * tiles_n
    first_m = (pid // per_band) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_band) % rows
    pid_n = (pid % per_band) // rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_s = tl.arange(0, SUB)
    offs_k = tl.arange(0, BLOCK_K)
    rows_a = offs_m % M
    n0 = pid_n * BLOCK_N
    a_ptrs = a_ptr + rows_a[:, None] * stride_am + offs_k[None, :] * stride_ak
    b0 = b_ptr + offs_k[:, None] * stride_bk + ((n0 + offs_s) % N)[None, :] * stride_bn
    b1 = b_ptr + offs_k[:, None] * stride_bk + ((n0 + SUB + offs_s) % N)[None, :] * stride_bn
    b2 = b_ptr + offs_k[:, None] * stride_bk + ((n0 + 2 * SUB + offs_s) % N)[None, :] * stride_bn
    b3 = b_ptr + offs_k[:, None] * stride_bk + ((n0 + 3 * SUB + offs_s) % N)[None, :] * stride_bn

    acc0 = tl.zeros((BLOCK_M, SUB), dtype=tl.float32)
    acc1 = tl.zeros((BLOCK_M, SUB), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK_M, SUB), dtype=tl.float32)
    acc3 = tl.zeros((BLOCK_M, SUB), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        in_k = offs_k[:, None] < k_left
        acc0 = tl.dot(a, tl.load(b0, mask=in_k, other=0.0), acc0)
        acc1 = tl.dot(a, tl.load(b1, mask=in_k, other=0.0), acc1)
        acc2 = tl.dot(a, tl.load(b2, mask=in_k, other=0.0), acc2)
        acc3 = tl.dot(a, tl.load(b3, mask=in_k, other=0.0), acc3)
        a_ptrs += BLOCK_K * stride_ak
        b0 += BLOCK_K * stride_bk
        b1 += BLOCK_K * stride_bk
        b2 += BLOCK_K * stride_bk
        b3 += BLOCK_K * stride_bk

    row_ok = offs_m[:, None] < M
    c_rows = c_ptr + offs_m[:, None] * stride_cm
    cols = n0 + offs_s
    tl.store(c_rows + cols[None, :] * stride_cn, acc0.to(tl.float16), mask=row_ok & (cols[None, :] < N))
    cols = n0 + SUB + offs_s
    tl.store(c_rows + cols[None, :] * stride_cn, acc1.to(tl.float16), mask=row_ok & (cols[None, :] < N))
    cols = n0 + 2 * SUB + offs_s
    tl.store(c_rows + cols[None, :] * stride_cn, acc2.to(tl.float16), mask=row_ok & (cols[None, :] < N))
    cols = n0 + 3 * SUB + offs_s
    tl.store(c_rows + cols[None, :] * stride_cn, acc3.to(tl.float16), mask=row_ok & (cols[None, :] < N))
