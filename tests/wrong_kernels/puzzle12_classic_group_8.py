"""Puzzle 12 as the classic Triton-Puzzles set it: groups of 8 columns share a scale and an
offset. This course uses groups of 16; the verdict must say so, and why."""
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"  # 8 groups per row read past the 4 scales a row has
EXPECT_SAYS = "This course uses `GROUP = 16`"

FPINT = tl.constexpr(8)
GROUP = tl.constexpr(8)


@triton.jit
def quant_dot_kernel(
    scale_ptr, offset_ptr, weight_ptr, activation_ptr, z_ptr, N0, N1, MID,
    B0: tl.constexpr, B1: tl.constexpr, B_MID: tl.constexpr,
):
    off_i = tl.program_id(0) * B0 + tl.arange(0, B0)
    off_j = tl.program_id(1) * B1 + tl.arange(0, B1)
    mask_i = off_i < N0
    mask_j = off_j < N1
    NW = MID // FPINT  # int32 words per weight row
    NG = MID // GROUP  # groups (scales, offsets) per row

    # Each row's offsets: one word, group g in bits 4g .. 4g+3.
    offset_words = tl.load(offset_ptr + off_i, mask=mask_i, other=0)
    shifts = tl.arange(0, FPINT) * 4

    acc = tl.zeros([B0, B1], dtype=tl.float32)
    for k0 in range(0, MID, B_MID):
        # Weight words for columns k0 .. k0 + B_MID, unpacked into (B0, B_MID) nibbles.
        off_w = k0 // FPINT + tl.arange(0, B_MID // FPINT)
        w_mask = mask_i[:, None] & (off_w < NW)[None, :]
        words = tl.load(weight_ptr + off_i[:, None] * NW + off_w[None, :], mask=w_mask, other=0)
        nibbles = (words[:, :, None] >> shifts[None, None, :]) & 0xF
        w = tl.reshape(nibbles, (B0, B_MID // GROUP, GROUP))

        # Scale and offset of each group in the chunk.
        off_g = k0 // GROUP + tl.arange(0, B_MID // GROUP)
        g_mask = mask_i[:, None] & (off_g < NG)[None, :]
        scale = tl.load(scale_ptr + off_i[:, None] * NG + off_g[None, :], mask=g_mask, other=0.0)
        offset = (offset_words[:, None] >> (off_g * 4)[None, :]) & 0xF

        deq = scale[:, :, None] * (w - offset[:, :, None]).to(tl.float32)
        deq = tl.where(g_mask[:, :, None], deq, 0.0)
        deq = tl.reshape(deq, (B0, B_MID))

        off_k = k0 + tl.arange(0, B_MID)
        a_mask = (off_k < MID)[:, None] & mask_j[None, :]
        a = tl.load(activation_ptr + off_k[:, None] * N1 + off_j[None, :], mask=a_mask, other=0.0)
        acc += tl.dot(deq, a)

    tl.store(z_ptr + off_i[:, None] * N1 + off_j[None, :], acc, mask=mask_i[:, None] & mask_j[None, :])
