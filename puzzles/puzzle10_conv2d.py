r"""
# Puzzle 10: Convolution (2D)

Slide a small `KH x KW` filter over each image of a batch.

$$z_{b,i,j} = \sum_{a=0}^{K_H-1} \sum_{c=0}^{K_W-1} k_{a,c}\; x_{b,\,i+a,\,j+c}$$

for $b < N_0$, $i < H$, $j < W$, where $x_{b,r,s}$ is taken as **0** when $r \ge H$ or
$s \ge W$.

Read the formula literally, on two points:

* it is a **cross-correlation**, as in deep-learning libraries: $k_{0,0}$ multiplies the
  pixel at $(i, j)$ itself; the filter is **not** flipped as in the textbook convolution;
* the padding with zeros is **only at the bottom and on the right**: the window of
  output pixel $(i, j)$ starts at $(i, j)$ and extends down and right, so the output has
  the same size `H x W` as the input.

`x` and `z` have shape `(N0, H, W)`, stored image by image and row by row (element
`(b, r, s)` is at offset `b * H * W + r * W + s`); `k` has shape `(KH, KW)`. `KH` and `KW`
are compile-time constants and powers of two; `H` and `W` are run-time values. The grid
has `cdiv(N0, B0)` programs; program `p` handles images `p * B0` up to `p * B0 + B0 - 1`
(the last program's images may run past `N0`).

The new idea is a **window as a block**: for one output pixel, the `KH x KW` windows of
all `B0` images form one tile. Flatten the filter taps into a single axis
`t = tl.arange(0, KH * KW)`, with filter row `t // KW` and column `t % KW`, to get a
`(B0, KH * KW)` tile (a 3-D `(B0, KH, KW)` tile works too); multiply it by the filter and
sum along the taps. Since `H` and `W` are not constants, loop over the output pixels.

**Sizes.** One case is a batch of 2100 images: offsets pass 16 bits, and a batch draws its
sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Puzzle, cdiv, seeds


def spec(x: Float32[Tensor, "N0 H W"], k: Float32[Tensor, "KH KW"]) -> Float32[Tensor, "N0 H W"]:
    N0, H, W = x.shape
    KH, KW = k.shape
    padded = torch.nn.functional.pad(x, (0, KW - 1, 0, KH - 1))  # zeros right and bottom only
    z = torch.zeros_like(x)
    for a in range(KH):
        for c in range(KW):
            z += k[a, c] * padded[:, a:a + H, c:c + W]
    return z


# ---- your part: finish the kernel ------------------------------------------------
@triton.jit
def conv2d_kernel(x_ptr, k_ptr, z_ptr, N0, H, W, KH: tl.constexpr, KW: tl.constexpr, B0: tl.constexpr):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


PUZZLE = Puzzle(
    id="puzzle10",
    title="Convolution (2D)",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="conv2d_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]),),
    cases=(
        *seeds(Case("classic", sizes={"N0": 4, "H": 8, "W": 8}, blocks={"KH": 4, "KW": 4, "B0": 1}), 1, 2),
        Case("batch_block_with_tail", sizes={"N0": 5, "H": 5, "W": 6}, blocks={"KH": 2, "KW": 4, "B0": 2}, seed=3),
        Case("rectangular", sizes={"N0": 2, "H": 6, "W": 4}, blocks={"KH": 4, "KW": 2, "B0": 1}, seed=4),
        Case("filter_larger_than_image", sizes={"N0": 3, "H": 3, "W": 2}, blocks={"KH": 4, "KW": 4, "B0": 4}, seed=5),
        Case("one_by_one_filter", sizes={"N0": 2, "H": 3, "W": 5}, blocks={"KH": 1, "KW": 1, "B0": 2}, seed=6),
        # Past anything a kernel could hard-code: a batch whose offsets pass 16 bits.
        Case("past_16_bit_offsets", sizes={"N0": 2100, "H": 4, "W": 4}, blocks={"KH": 4, "KW": 4, "B0": 1024},
             seed=7, large=True, vary={"N0": (2050, 2600)}),
    ),
    # fp32 sums of at most 16 products, in a different order than torch.
    atol=1e-5,
    rtol=1e-4,
    hints=(
        "Each output pixel is a `KH` by `KW` window of the image times the filter, summed: load a whole "
        "window as one block per image, and let the loads past the image's edge read 0, which is the padding.",
        "With `t = tl.arange(0, KH * KW)`, `a = t // KW` and `c = t % KW`, the window of "
        "pixel `(i, j)` in image `b` is at offsets `b * H * W + (i + a) * W + (j + c)`; mask "
        "it with `b < N0`, `i + a < H` and `j + c < W`, and load with `other=0.0`, which is "
        "exactly the padding. Load the filter once, before any loop: `filt = tl.load(k_ptr + t)`.",
        "Loop `for i in range(0, H):` and `for j in range(0, W):`; with `window` the loaded "
        "`(B0, KH * KW)` tile, `tl.sum(window * filt[None, :], axis=1)` gives one value per "
        "image, to store at offset `b * H * W + i * W + j` with the mask `b < N0`.",
    ),
    look_alikes=(
        LookAlike("a convolution with the filter flipped", lambda x, k: spec(x, k.flip(0, 1)),
                  "this puzzle's convolution is a cross-correlation, as in deep learning: `k[a, c]` "
                  "multiplies `x[b, i + a, j + c]`; load the filter as `tl.load(k_ptr + a * KW + c)`"),
    ),
)
