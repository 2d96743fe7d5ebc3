# Autotuned: each config runs as its own run of a case. One config (64 x 64 tiles) starts its
# accumulator from the output where that holds a number (the grader's NaN fill reads as "nothing
# yet"); a GPU's stale memory reads as a product already begun.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "mismatch"
EXPECT_SAYS = "with config {BLOCK_M=64,"


@triton.autotune(
    configs=[
        # Large tiles for large products on an H100: 128 x 256 x 64 in fp16 is 48 KiB of
        # shared memory a stage, so 3 stages fit, 4 for 128 x 128.
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=4),
        # Smaller tiles keep every multiprocessor busy when the product has few large tiles.
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Grouped numbering: bands of GROUP_M tile-rows, each walked column by column.
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
    # Rows and columns past the edge wrap back into range for the loads (never stored);
    # nothing here assumes that a config's block divides a size.
    a_ptrs = a_ptr + (offs_m % M)[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + (offs_n % N)[None, :] * stride_bn

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if BLOCK_M == 64:
        old = tl.load(c_ptrs, mask=c_mask, other=0.0).to(tl.float32)
        acc = tl.where(old == old, old, acc)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
