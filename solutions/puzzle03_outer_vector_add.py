import triton
import triton.language as tl


@triton.jit
def add_vec_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    cols = tl.arange(0, B0)
    rows = tl.arange(0, B1)
    x = tl.load(x_ptr + cols)
    y = tl.load(y_ptr + rows)
    z = x[None, :] + y[:, None]
    tl.store(z_ptr + rows[:, None] * N0 + cols[None, :], z)
