# Puzzle 2 with its offsets held in 16 bits, as a kernel tuned for small vectors might keep
# them: past element 32767 they wrap round to negative offsets and load before the vector.
# Right on every case below 32768 elements; the case past 16-bit offsets finds it.
import triton
import triton.language as tl

EXPECT_KIND = "out_of_bounds"
EXPECT_CASE = "past_16_bit_offsets"
EXPECT_SAYS = "before its start"


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = (pid * B0 + tl.arange(0, B0)).to(tl.int16)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, x + 10.0, mask=mask)
