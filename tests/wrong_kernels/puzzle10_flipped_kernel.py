# A textbook convolution: the filter is flipped (k[KH-1-a, KW-1-c] multiplies x[b, i+a, j+c])
# instead of being applied as the cross-correlation the statement asks for.
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"


@triton.jit
def conv2d_kernel(x_ptr, k_ptr, z_ptr, N0, H, W, KH: tl.constexpr, KW: tl.constexpr, B0: tl.constexpr):
    pid = tl.program_id(0)
    b = pid * B0 + tl.arange(0, B0)
    b_mask = b < N0
    t = tl.arange(0, KH * KW)
    a = t // KW
    c = t % KW
    # Mistake: the filter is read upside down and back to front.
    filt = tl.load(k_ptr + (KH - 1 - a) * KW + (KW - 1 - c))
    x_win = x_ptr + b[:, None] * H * W + (a * W + c)[None, :]
    z_img = z_ptr + b * H * W
    for i in range(0, H):
        row_ok = b_mask[:, None] & (i + a < H)[None, :]
        for j in range(0, W):
            mask = row_ok & (j + c < W)[None, :]
            pixel = i * W + j
            window = tl.load(x_win + pixel, mask=mask, other=0.0)
            tl.store(z_img + pixel, tl.sum(window * filt[None, :], axis=1), mask=b_mask)
