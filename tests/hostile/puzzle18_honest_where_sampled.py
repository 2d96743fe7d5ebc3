# Aimed at a grader that runs a sample of a large launch's programs, the first two and the last
# along axis 0: rows 0, 1 and N0 - 1 get a true softmax, and so does every row of a launch of at
# most 32768 elements (the small cases, which run whole). Every other row of a large case is
# stored as the uniform 1 / T without reading x. Wrong in 37 of the 40 rows of past_16_bit_offsets
# and of model_width; only a grader that runs more than programs 0, 1 and the last catches it
# (programs drawn at random beside them do, and so does running every program).
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "mismatch"


@triton.jit
def softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B1)
    mask = cols < T
    looked_at = (row < 2) | (row == tl.num_programs(0) - 1) | (N0 * T <= 32768)
    if looked_at:
        x = tl.load(x_ptr + row * T + cols, mask=mask, other=float("-inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(z_ptr + row * T + cols, e / tl.sum(e, axis=0), mask=mask)
    else:
        tl.store(z_ptr + row * T + cols, tl.full([B1], 1.0, tl.float32) / T, mask=mask)
