r"""
# Puzzle 12: Matrix multiplication with 4-bit weights

A weight matrix $W$ ($N_0 \times MID$) is stored compressed: every entry is a 4-bit
integer $q$ (0 to 15), and each run of `GROUP` consecutive columns of a row shares one float
scale $s$ and one 4-bit offset $o$. Rebuild $W$ on the fly and multiply it by a float
matrix $a$ (`activation`, $MID \times N_1$):

$$W_{r,c} = s_{r,\lfloor c/G \rfloor}\,\bigl(q_{r,c} - o_{r,\lfloor c/G \rfloor}\bigr), \qquad
z_{r,j} = \sum_{c=0}^{MID-1} W_{r,c}\, a_{c,j}$$

with $G$ = `GROUP` = 16. Two module constants name the two different "how many" numbers:

* `FPINT = 8`: 4-bit values packed in one int32 word. A weight row has `NW = MID // 8` words.
* `GROUP = 16`: columns sharing one scale and offset. A row has `NG = MID // 16` groups.

(The classic version of this puzzle used 8 for both, which hid which one is meant where.)

**Packing.** Values fill a word from its least significant bits up: value `k` of a word
sits in bits `4k .. 4k+3`, so column `c` of row `r` is
`(weight[r, c // 8] >> (4 * (c % 8))) & 0xF`.
Example: if `weight[r, 0]` is `0x0000_00A3`, columns 0..7 of row `r` hold
`3, 0xA (= 10), 0, 0, 0, 0, 0, 0`; column 8 is the low nibble of `weight[r, 1]`.
The words are random 32-bit patterns, negative ones included; shifting right and then
masking with `0xF` reads the right nibble whatever the sign.

Shapes:

* `scale`: float32 `N0 NG`, scale of group `g` of row `r` at `scale[r, g]`.
* `offset`: int32 `N0`, one word per row; group `g`'s offset is nibble `g` of `offset[r]`
  (packed as above). Nibbles `g >= NG` hold junk: ignore them.
* `weight`: int32 `N0 NW`; `activation`: float32 `MID N1`; `z`: float32 `N0 N1`.

`MID` is a multiple of 16 and at most 128 (one offset word holds at most 8 groups). The grid
is `(cdiv(N0, B0), cdiv(N1, B1))`: each program computes a `B0 x B1` tile of `z`, walking
along `MID` in chunks of `B_MID` columns, as in puzzle 11. `B_MID` is a multiple of `GROUP`,
so a chunk holds `B_MID // 8` words and `B_MID // 16` whole groups; `MID` need not be a
multiple of `B_MID`, nor `N0`, `N1` of their blocks.

The new idea is unpacking inside the kernel: shift a block of words against
`tl.arange(0, FPINT) * 4` with an extra axis, mask, and `tl.reshape` the result back into
columns; `tl.reshape` likewise gives each group its own axis so a scale can broadcast over
its `GROUP` columns. As in puzzle 11, `tl.dot` on a GPU uses TF32, and the inputs are chosen
so that the dequantised weights and the activations are exact in TF32.

**Sizes.** One case has an output of 192 by 192: offsets pass 16 bits, and a batch draws its
sizes within a range, so fit nothing to the sizes you see.
"""
import torch
import triton
import triton.language as tl
from jaxtyping import Float32, Int32
from torch import Tensor

from grader.puzzle import Case, LookAlike, Mistake, Puzzle, Variant, cdiv, seeds

# The group size: each student of a class graded with a secret gets their own, never FPINT = 8 (so
# that the two numbers stay apart). The learner's file holds it, as the stub's GROUP constant, and
# the cases' widths follow it (MID a multiple of GROUP, at most 8 groups a row).
GROUP_SIZE = Variant("GROUP", choices=(16, 32, 64), default=16, what="GROUP", code="GROUP",
                     also={"MID_MAX": lambda group: str(8 * group)},
                     stated=("`GROUP` = {{GROUP}}. Two", "* `GROUP = {{GROUP}}`: columns", "`NG = MID // {{GROUP}}` groups",
                             "a multiple of {{GROUP}} and at most {{MID_MAX}} (one", "`B_MID // {{GROUP}}` whole groups"))

def spec(
    scale: Float32[Tensor, "N0 NG"],
    offset: Int32[Tensor, "N0"],
    weight: Int32[Tensor, "N0 NW"],
    activation: Float32[Tensor, "MID N1"],
    *, GROUP: int,
) -> Float32[Tensor, "N0 N1"]:
    fpint, group = FPINT.value, GROUP
    n0, ng = scale.shape
    shifts = 4 * torch.arange(fpint, dtype=torch.int32)
    q = ((weight[:, :, None] >> shifts) & 0xF).reshape(n0, -1)   # N0 MID
    o = ((offset[:, None] >> shifts) & 0xF)[:, :ng]             # N0 NG
    w = scale.repeat_interleave(group, dim=1) * (q - o.repeat_interleave(group, dim=1)).float()
    return w @ activation


def _variant(scale, offset, weight, activation, group, top_down=False, one_offset=False):
    """The look-alikes' dequantisation: the spec's with one detail changed. Groups past NG
    (column c in group c // group) are masked to zero, as a kernel masking `off_g < NG` does."""
    n0, ng = scale.shape
    shifts = 4 * torch.arange(8, dtype=torch.int32)
    q = ((weight[:, :, None] >> (shifts.flip(0) if top_down else shifts)) & 0xF).reshape(n0, -1)
    g = torch.arange(q.shape[1]) // group
    o = (offset[:, None] >> (0 if one_offset else 4 * (g % 8))) & 0xF
    w = torch.where(g < ng, scale[:, g.clamp(max=ng - 1)] * (q - o).float(), 0.0)
    return w @ activation


# ---- your part: finish the kernel ------------------------------------------------
FPINT = tl.constexpr(8)   # 4-bit values per int32 word


GROUP = tl.constexpr(16)  # weight columns sharing one scale and one offset


@triton.jit
def quant_dot_kernel(
    scale_ptr, offset_ptr, weight_ptr, activation_ptr, z_ptr, N0, N1, MID,
    B0: tl.constexpr, B1: tl.constexpr, B_MID: tl.constexpr,
):
    # Your code here.
    pass
# ----------------------------------------------------------------------------------


def _cases(group: int) -> tuple[Case, ...]:
    """The cases for a group size: the widths (MID, B_MID) of GROUP = 16's, times group / 16."""
    k = group // 16
    return (
        # 4 groups per row (8 words at GROUP = 16), one chunk.
        *seeds(
            Case("classic", sizes={"N0": 32, "N1": 32, "MID": 64 * k},
                 blocks={"B0": 16, "B1": 16, "B_MID": 64 * k}),
            1,
        ),
        # 2 groups per row; chunks of one group each.
        Case("short_rows", sizes={"N0": 16, "N1": 32, "MID": 32 * k},
             blocks={"B0": 16, "B1": 16, "B_MID": 16 * k}, seed=2),
        # 8 groups per row (every offset nibble used), tails in N0 and N1.
        *seeds(
            Case("long_rows", sizes={"N0": 40, "N1": 24, "MID": 128 * k},
                 blocks={"B0": 16, "B1": 16, "B_MID": 32 * k}, seed=3),
            4,
        ),
        # 3 groups per row: the second chunk of 2 groups is half outside MID.
        Case("mid_tail", sizes={"N0": 16, "N1": 16, "MID": 48 * k},
             blocks={"B0": 16, "B1": 16, "B_MID": 32 * k}, seed=5),
        # Past anything a kernel could hard-code: an output past 16-bit offsets (MID stays within its limit, 8 groups).
        Case("past_16_bit_offsets", sizes={"N0": 192, "N1": 192, "MID": 128 * k},
             blocks={"B0": 64, "B1": 64, "B_MID": 64 * k}, seed=6, large=True, vary={"N0": (180, 220)}),
    )


WORDS = {2: "two", 4: "four", 8: "eight"}


def _mistakes(group: int) -> tuple[Mistake, ...]:
    return (
        Mistake(r"^GROUP\s*(:[^=\n]*)?=\s*(tl\.constexpr\(|triton\.language\.constexpr\()?\s*8\b",
                "your file sets `GROUP = 8`, as the classic Triton-Puzzles did. This course uses "
                f"`GROUP = {group}`: {group} columns share one scale and offset, so that the group size ({group}) and "
                "the values per word (`FPINT = 8`) differ and a kernel that mixes them up fails. "
                f"Set `GROUP = tl.constexpr({group})`."),
    )


def _look_alikes(group: int) -> tuple[LookAlike, ...]:
    return (
        LookAlike(f"groups of FPINT = 8 columns instead of GROUP = {group}",
                  lambda scale, offset, weight, activation: _variant(scale, offset, weight, activation, group=8),
                  f"a group is `GROUP = {group}` columns, {WORDS[group // 8]} words of weights: column c takes scale and offset "
                  "number `c // GROUP`, not `c // FPINT`"),
        LookAlike("the nibbles of a weight word read from the top down",
                  lambda scale, offset, weight, activation: _variant(scale, offset, weight, activation, group,
                                                                     top_down=True),
                  "column `8 * w + t` is in bits `4t .. 4t + 3` of word w, the lowest first: shift by "
                  "`tl.arange(0, FPINT) * 4`"),
        LookAlike("every group's offset taken from nibble 0 of the offset word",
                  lambda scale, offset, weight, activation: _variant(scale, offset, weight, activation, group,
                                                                     one_offset=True),
                  "group g's offset is nibble g of the row's offset word: `(offset_word >> (g * 4)) & 0xF`"),
    )


PUZZLE = Puzzle(
    id="puzzle12",
    title="Quantized matrix multiplication",
    track="classic",
    statement=__doc__,
    spec=spec,
    kernel="quant_dot_kernel",
    grid=lambda s: (cdiv(s["N0"], s["B0"]), cdiv(s["N1"], s["B1"])),
    cases=_cases(GROUP_SIZE.default),
    atol=1e-3,
    rtol=1e-4,
    derive=lambda s: {"NW": s["MID"] // 8, "NG": s["MID"] // 16},
    # Scales with 5 mantissa bits times 4-bit integer differences fit TF32's 10 bits.
    mantissa_bits={"scale": 5, "activation": 10},
    mistakes=_mistakes(GROUP_SIZE.default),
    hints=(
        "Unpack before you multiply: each 32-bit word holds `FPINT` 4-bit weights, which shifts and a mask "
        "pull apart, and each run of `GROUP` columns shares one scale and one offset. Then it is a `tl.dot`.",
        "Load a `(B0, B_MID // FPINT)` block of words, then "
        "`(words[:, :, None] >> (tl.arange(0, FPINT) * 4)[None, None, :]) & 0xF` "
        "has shape `(B0, B_MID // FPINT, FPINT)`; reshaping it to `(B0, B_MID)` puts the "
        "columns in order.",
        "For the groups of the chunk that starts at column `k0`, "
        "`off_g = k0 // GROUP + tl.arange(0, B_MID // GROUP)`: load the `(B0, B_MID // GROUP)` "
        "scales, and take nibble `off_g` of each row's offset word.",
        "Reshape the nibbles to `(B0, B_MID // GROUP, GROUP)`, so that scale and offset "
        "broadcast with `[:, :, None]`; reshape the dequantised block back to `(B0, B_MID)` "
        "for `tl.dot`.",
        "Mask the columns past `MID` (words `>= NW`, groups `>= NG`, activation rows "
        "`>= MID`) to zero, so that a partial last chunk adds nothing. `NW` and `NG` are not "
        "parameters: work them out from `MID`, `FPINT` and `GROUP` in the kernel.",
    ),
    look_alikes=_look_alikes(GROUP_SIZE.default),
    variants=(GROUP_SIZE,),
    rebuild=lambda v: {"cases": _cases(v["GROUP"]), "mistakes": _mistakes(v["GROUP"]),
                       "look_alikes": _look_alikes(v["GROUP"]),
                       "derive": lambda s: {"NW": s["MID"] // 8, "NG": s["MID"] // v["GROUP"]}},
)
