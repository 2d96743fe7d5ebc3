# Correct: a heuristic that asks whether a tensor was passed (`args["x_ptr"] is not None`), as mamba's
# kernels ask of their optional tensors. The interpreter's run, its report of what each heuristic gave, and the
# sm_90 compile check each hand it the launch's tensors by name (the report gave none: a grader error, KeyError).
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.heuristics({"HAS_X": lambda args: args["x_ptr"] is not None})
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr, HAS_X: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    if HAS_X:
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
