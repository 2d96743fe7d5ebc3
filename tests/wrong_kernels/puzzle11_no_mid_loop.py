"""Puzzle 11: multiplies only the first B_MID columns of x by the first B_MID rows of y,
as if MID always fit in one chunk. Right only where B_MID >= MID."""
import triton
import triton.language as tl

EXPECT_KIND = "mismatch"
EXPECT_CASE = "classic"


@triton.jit
def dot_kernel(
    x_ptr, y_ptr, z_ptr, N0, N1, N2, MID,
    B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr, B_MID: tl.constexpr,
):
    off_b = tl.program_id(2) * B2 + tl.arange(0, B2)
    off_i = tl.program_id(0) * B0 + tl.arange(0, B0)
    off_j = tl.program_id(1) * B1 + tl.arange(0, B1)
    off_k = tl.arange(0, B_MID)
    mask_b = off_b < N2
    mask_i = off_i < N0
    mask_j = off_j < N1
    mask_k = off_k < MID
    x_off = off_b[:, None, None] * N0 * MID + off_i[None, :, None] * MID + off_k[None, None, :]
    x_mask = mask_b[:, None, None] & mask_i[None, :, None] & mask_k[None, None, :]
    x = tl.load(x_ptr + x_off, mask=x_mask, other=0.0)
    y_off = off_b[:, None, None] * MID * N1 + off_k[None, :, None] * N1 + off_j[None, None, :]
    y_mask = mask_b[:, None, None] & mask_k[None, :, None] & mask_j[None, None, :]
    y = tl.load(y_ptr + y_off, mask=y_mask, other=0.0)
    acc = tl.dot(x, y)
    z_off = off_b[:, None, None] * N0 * N1 + off_i[None, :, None] * N1 + off_j[None, None, :]
    z_mask = mask_b[:, None, None] & mask_i[None, :, None] & mask_j[None, None, :]
    tl.store(z_ptr + z_off, acc, mask=z_mask)
