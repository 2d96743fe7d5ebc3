"""A correct outer add that visits its columns in a scrambled order (33 is odd, so ``cols * 33 %
B0`` is a permutation when B0 is a power of two): neighbouring lanes are 33 columns apart, and no
axis of the tile is contiguous in memory."""
import triton
import triton.language as tl


@triton.jit
def add_vec_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = (tl.arange(0, B0) * 33) % B0
    rows = tl.arange(0, B1)
    x = tl.load(x_ptr + cols)
    y = tl.load(y_ptr + rows)
    tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], x[None, :] + y[:, None])
