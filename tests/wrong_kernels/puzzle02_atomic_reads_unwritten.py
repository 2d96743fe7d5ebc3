# Adds its result into the output with `tl.atomic_add`, as though the output started at zero: the
# atomic reads the element before it writes it, and nothing has been stored there yet (the grader's
# NaN fill; garbage on a GPU). The early read is named, atomics included.
import triton
import triton.language as tl

EXPECT_KIND = "unwritten"
EXPECT_SAYS = "and an atomic reads the element it updates, which no program had stored yet"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.program_id(0) * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.atomic_add(z_ptr + offsets, x + 10.0, mask=mask)
