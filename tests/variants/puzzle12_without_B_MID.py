import triton
import triton.language as tl

FPINT = tl.constexpr(8)
GROUP = tl.constexpr(16)


@triton.jit
def quant_dot_kernel(scale_ptr, offset_ptr, weight_ptr, activation_ptr, z_ptr, N0, N1, MID,
                     B0: tl.constexpr, B1: tl.constexpr):
    # The original notebook had no B_MID: this one steps through MID one group at a time.
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    cols = tl.program_id(1) * B1 + tl.arange(0, B1)
    row_ok = rows < N0
    words_per_row = MID // FPINT
    groups_per_row = MID // GROUP
    offsets = tl.load(offset_ptr + rows, mask=row_ok, other=0)
    acc = tl.zeros([B0, B1], dtype=tl.float32)
    for g in range(0, groups_per_row):
        word = g * (GROUP // FPINT) + tl.arange(0, GROUP // FPINT)
        packed = tl.load(weight_ptr + rows[:, None] * words_per_row + word[None, :], mask=row_ok[:, None], other=0)
        q = tl.reshape((packed[:, :, None] >> (tl.arange(0, FPINT) * 4)[None, None, :]) & 0xF, (B0, GROUP))
        s = tl.load(scale_ptr + rows * groups_per_row + g, mask=row_ok, other=0.0)
        o = (offsets >> (g * 4)) & 0xF
        w = s[:, None] * (q - o[:, None]).to(tl.float32)
        ks = g * GROUP + tl.arange(0, GROUP)
        a = tl.load(activation_ptr + ks[:, None] * N1 + cols[None, :], mask=cols[None, :] < N1, other=0.0)
        acc += tl.dot(w, a)
    tl.store(z_ptr + rows[:, None] * N1 + cols[None, :], acc, mask=row_ok[:, None] & (cols[None, :] < N1))
