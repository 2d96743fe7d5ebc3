# Softmax with a check left in from debugging the widest rows: at B1 = 8192 the middle row
# (N0 // 2) is stored as its raw exponentials exp(x - max), never divided by their sum. One row
# of 40 in the 8192-wide case is wrong; no other case has a block of 8192, so every other row and
# case is right. A sample of that launch's 40 programs runs rows 0, 1, 10, 25 and 39 (the course's
# seed), never row 20: only running every program of model_width finds it.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "model_width"
EXPECT_SAYS = "(20, 0): yours"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B1)
    mask = cols < T
    x = tl.load(x_ptr + row * T + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    total = tl.sum(e, axis=0)
    if B1 >= 8192:  # compile-time: the model-width launch only
        # To compare one row's exponentials with PyTorch's by hand.
        total = tl.where(row == N0 // 2, 1.0, total)
    tl.store(z_ptr + row * T + cols, e / total, mask=mask)
