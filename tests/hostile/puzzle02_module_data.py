# Correct: what a kernel's decorators use, named at module level as libraries name it. The configs
# are a list written out, extended with `+=` by a comprehension over literals; the constant added
# is a `tl.constexpr` computed from another constant (a kernel reads only constexpr globals); a
# heuristic reads the launch's size `N0` (on a GPU, and in the sm_90 compile check, it gets every
# argument by name).
import triton
import triton.language as tl

EXPECT_STATUS = "pass"

BLOCKS = [16, 64]
TEN = tl.constexpr(float(BLOCKS[0] - 6))
configs = [triton.Config({"B0": 32}, num_warps=1)]
configs += [triton.Config({"B0": b}, num_warps=w) for b in BLOCKS for w in (2, 4) if b * w <= 128]
KEYS = ["N0"]


@triton.autotune(configs=configs, key=KEYS)
@triton.heuristics({"EVEN": lambda args: args["N0"] % args["B0"] == 0})
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    if EVEN:
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + TEN)
    else:
        mask = offsets < N0
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + TEN, mask=mask)
