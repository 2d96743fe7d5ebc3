"""Two masks joined with `and`: in the interpreter a block counts as True, so only the second
mask would be kept (and the rows past N1 stored out of bounds); compiled, Triton joins them
elementwise. Either way it is not what `&` says plainly: refused on both devices, naming `&`."""
import triton
import triton.language as tl

EXPECT_KIND = "exception"
EXPECT_SAYS = "Combine masks with `&`, `|` and `~`"


@triton.jit
def add_vec_block_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.program_id(0) * B0 + tl.arange(0, B0)
    rows = tl.program_id(1) * B1 + tl.arange(0, B1)
    x = tl.load(x_ptr + cols, mask=cols < N0)
    y = tl.load(y_ptr + rows, mask=rows < N1)
    z = x[None, :] + y[:, None]
    tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], z,
             mask=(rows[:, None] < N1) and (cols[None, :] < N0))
