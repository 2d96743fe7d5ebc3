r"""
# Puzzle 11: Batched matrix multiplication

Multiply a stack of $N_2$ matrices $x_b$ (shape $N_0 \times MID$) by a stack of $N_2$
matrices $y_b$ (shape $MID \times N_1$), one product per batch index $b$:

$$z_{b,i,j} = \sum_{k=0}^{MID-1} x_{b,i,k} \, y_{b,k,j}$$

Shapes: `x` is `N2 N0 MID`, `y` is `N2 MID N1`, `z` is `N2 N0 N1`, all row-major float32.

The grid is `(cdiv(N0, B0), cdiv(N1, B1), cdiv(N2, B2))`: program `(p0, p1, p2)` owns the
output tile of rows `p0*B0 ...`, columns `p1*B1 ...`, for the batch indices `p2*B2 ...`.
No size need be a multiple of its block. `B2` is 1 in every case, as in the classic
puzzle, so kernels that give each program one batch index grade as they are; a kernel
written with 3-D blocks that works for any `B2` is just as welcome.

The new idea is `tl.dot`, which multiplies two blocks as matrices: an `(M, K)` block by a
`(K, N)` block gives an `(M, N)` block. Given two 3-D blocks `(B, M, K)` and `(B, K, N)` it
does `B` independent products at once. A tile of `z` needs a full row of `x` and a full
column of `y`, which may be too long for one block: walk along `MID` in chunks of `B_MID`,
and add each chunk's product into a float32 accumulator made with `tl.zeros` before the loop.
Masked-out elements loaded as `0` add nothing to the sum.

On a GPU, `tl.dot` needs every dimension of its tiles (`B0`, `B1`, `B_MID`) to be at least
16, and on float32 inputs it computes in TF32 (about 10 bits of mantissa) unless told
otherwise. The grader's inputs are rounded so that TF32 loses nothing: you need not pass
any precision option.

**Sizes.** One case has `MID` of 288, 18 chunks, and a batch draws its sizes within a range,
so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, cdiv, seeds


def spec(x: Float32[Tensor, "N2 N0 MID"], y: Float32[Tensor, "N2 MID N1"]) -> Float32[Tensor, "N2 N0 N1"]:
    return x @ y


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def dot_kernel(
    x_ptr, y_ptr, z_ptr, N0, N1, N2, MID,
    B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr, B_MID: tl.constexpr,
):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle11",
    title="Batched matrix multiplication",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="dot_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]), cdiv(s["N1"], s["B1"]), cdiv(s["N2"], s["B2"])),
    cases=(
        *seeds(
            Case("classic", sizes={"N2": 4, "N0": 32, "N1": 32, "MID": 32},
                 blocks={"B0": 16, "B1": 16, "B2": 1, "B_MID": 16}),
            1,
        ),
        # N0, N1 and MID differ; none is a multiple of its block; two MID chunks, the last partial.
        *seeds(
            Case("tails", sizes={"N2": 2, "N0": 40, "N1": 24, "MID": 48},
                 blocks={"B0": 16, "B1": 16, "B2": 1, "B_MID": 32}),
            2, 3,
        ),
        # An odd number of batches, tiles wider than tall, four MID chunks.
        Case("odd_batches", sizes={"N2": 3, "N0": 16, "N1": 32, "MID": 64},
             blocks={"B0": 16, "B1": 32, "B2": 1, "B_MID": 16}, seed=4),
        # Past anything a kernel could hard-code: 18 or more chunks of MID, offsets past 16 bits.
        Case("many_chunks", sizes={"N2": 4, "N0": 32, "N1": 32, "MID": 288},
             blocks={"B0": 32, "B1": 32, "B2": 1, "B_MID": 16}, seed=5, large=True,
             vary={"N0": (32, 40), "MID": (272, 400)}),
    ),
    atol=1e-4,
    rtol=1e-4,
    # Inputs exact in TF32, so a GPU's default tl.dot precision matches the fp32 reference.
    mantissa_bits={"x": 10, "y": 10},
    hints=(
        "Puzzle 7's accumulation with `tl.dot`: a 3-D block of `z` per program (batch, rows, columns), and a "
        "loop over `MID` in chunks of `B_MID`.",
        "Build offsets for all three output dimensions, e.g. a batch block "
        "`tl.program_id(2) * B2 + tl.arange(0, B2)`, and broadcast them as `[:, None, None]`, "
        "`[None, :, None]`, `[None, None, :]` into 3-D pointer blocks.",
        "Loop `for k in range(0, MID, B_MID):`, load a `(B2, B0, B_MID)` block of `x` and a "
        "`(B2, B_MID, B1)` block of `y`, both masked with `other=0`, and do "
        "`acc += tl.dot(x_block, y_block)`.",
        "The element `[b, i, k]` of `x` is at `b * N0 * MID + i * MID + k`; the element `[b, k, j]` "
        "of `y` is at `b * MID * N1 + k * N1 + j`.",
    ),
    look_alikes=(
        LookAlike("a product of the first MID chunk only (no loop over MID)",
                  lambda x, y, *, sizes: x[:, :, :sizes["B_MID"]] @ y[:, :sizes["B_MID"], :],
                  "loop `for k in range(0, MID, B_MID):`, loading the next `B_MID` columns of `x` and rows "
                  "of `y` each time, and accumulate `acc += tl.dot(x_block, y_block)`"),
        LookAlike("every batch computed from batch 0 (the batch offset missing from the loads)",
                  lambda x, y: (x[0] @ y[0]).expand(x.shape[0], -1, -1),
                  "add the batch term to the loads too: `b * N0 * MID` for `x`, `b * MID * N1` for `y`"),
    ),
)
