# Correct: the block size comes from @triton.autotune, so the grader must not pass B0 itself.
# In the interpreter every config is graded; on a GPU Triton picks one.
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.autotune(configs=[triton.Config({"B0": 16}, num_warps=2), triton.Config({"B0": 64}, num_warps=4)],
                 key=["N0"])
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
