# Correct: a heuristic the puzzle does not know about (EVEN: no mask needed when B0 divides N0).
import triton
import triton.language as tl

EXPECT_STATUS = "pass"


@triton.heuristics({"EVEN": lambda args: args["N0"] % args["B0"] == 0})
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    if EVEN:
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 10.0)
    else:
        mask = offsets < N0
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)
