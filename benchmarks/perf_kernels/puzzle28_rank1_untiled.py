"""No K tiles and no tensor cores: each program builds a 64 x 128 tile of c (a heuristic sets the
blocks) from K rank-1 updates, one column of a (strided loads, a row apart) times one row of b per
step, in fp32 FMAs; expect tens of milliseconds at 8192^3, one to two orders of magnitude slower."""
import triton
import triton.language as tl


@triton.heuristics({"BLOCK_M": lambda args: 64, "BLOCK_N": lambda args: 128})
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
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
    a_ptrs = a_ptr + (offs_m % M) * stride_am
    b_ptrs = b_ptr + (offs_n % N) * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptrs + k * stride_ak).to(tl.float32)
        b = tl.load(b_ptrs + k * stride_bk).to(tl.float32)
        acc += a[:, None] * b[None, :]

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
