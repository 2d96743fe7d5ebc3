# Masks each window by the image bounds but never by the batch index: with B0 > 1 and N0
# not a multiple of B0, the last program reads and writes images past N0.
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"
EXPECT_CASE = "batch_block_with_tail"


@triton.jit
def conv2d_kernel(x_ptr, k_ptr, z_ptr, N0, H, W, KH: tl.constexpr, KW: tl.constexpr, B0: tl.constexpr):
    pid = tl.program_id(0)
    b = pid * B0 + tl.arange(0, B0)
    t = tl.arange(0, KH * KW)
    a = t // KW
    c = t % KW
    filt = tl.load(k_ptr + t)
    x_win = x_ptr + b[:, None] * H * W + (a * W + c)[None, :]
    z_img = z_ptr + b * H * W
    for i in range(0, H):
        for j in range(0, W):
            # Mistake: no `b < N0`, neither here nor on the store.
            mask = ((i + a < H) & (j + c < W))[None, :]
            pixel = i * W + j
            window = tl.load(x_win + pixel, mask=mask, other=0.0)
            tl.store(z_img + pixel, tl.sum(window * filt[None, :], axis=1))
