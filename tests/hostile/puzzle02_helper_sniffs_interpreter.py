# A compile-time helper that tells the interpreter from the compiler: interpreted it is given
# a plain int, compiled a tl.constexpr, so it adds 10 on a laptop and 11 on a GPU. The grader
# reads helpers before they run and refuses it with the line.
import triton
import triton.language as tl

EXPECT_STATUS = "fail"
EXPECT_KIND = "sniffing"
EXPECT_SAYS = "`isinstance` is not one of its arguments"


@tl.constexpr
def offset(block):
    return 10.0 if isinstance(block, int) else 11.0


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + offset(B0), mask=mask)
