"""The reference with 16 x 16 x 16 tiles (a heuristic overrides the blocks), launched with the
bench's 8 warps: 262144 programs of 512 steps, each tl.dot the smallest tensor-core product,
a and b re-read from L2 by every tile of their row and column; expect tens of times slower
than the reference at 8192^3."""
import triton
import triton.language as tl


@triton.heuristics({"BLOCK_M": lambda args: 16, "BLOCK_N": lambda args: 16, "BLOCK_K": lambda args: 16})
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Grouped numbering: bands of GROUP_M tile-rows, each walked column by column, so that
    # the programs running together share a few panels of a and b in L2.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_band = GROUP_M * tiles_n
    first_m = (pid // per_band) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)  # the last band may be shorter
    pid_m = first_m + (pid % per_band) % rows
    pid_n = (pid % per_band) // rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # Rows and columns past the edge are wrapped back into range for the loads (their results
    # are never stored), so the loop only masks K: cheaper than a 2-D mask at every chunk.
    rows_a = offs_m % M
    cols_b = offs_n % N
    a_ptrs = a_ptr + rows_a[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + cols_b[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        # Lanes past K load 0 in both tiles: they add 0 to every sum.
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)  # fp16 x fp16 on tensor cores, accumulated in fp32
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
