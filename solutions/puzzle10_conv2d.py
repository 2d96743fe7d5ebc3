import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(x_ptr, k_ptr, z_ptr, N0, H, W, KH: tl.constexpr, KW: tl.constexpr, B0: tl.constexpr):
    pid = tl.program_id(0)
    b = pid * B0 + tl.arange(0, B0)
    b_mask = b < N0
    # The KH * KW filter taps as one flat axis: tap t is filter row t // KW, column t % KW.
    t = tl.arange(0, KH * KW)
    a = t // KW
    c = t % KW
    filt = tl.load(k_ptr + t)  # k is contiguous, so tap t is at offset t
    # Pointers to each image's window for output pixel (0, 0), shape (B0, KH * KW);
    # the window of pixel (i, j) is the same shifted by i * W + j.
    x_win = x_ptr + b[:, None] * H * W + (a * W + c)[None, :]
    z_img = z_ptr + b * H * W
    for i in range(0, H):
        row_ok = b_mask[:, None] & (i + a < H)[None, :]
        for j in range(0, W):
            # Taps outside the image (and images past N0) load as 0: that is the padding.
            mask = row_ok & (j + c < W)[None, :]
            pixel = i * W + j
            window = tl.load(x_win + pixel, mask=mask, other=0.0)
            tl.store(z_img + pixel, tl.sum(window * filt[None, :], axis=1), mask=b_mask)
