"""Random inputs for one case, built from the spec's annotations.

Floats are centred on zero (so a missing relu or a sign mistake shows), scaled by the case
(so a softmax without max-subtraction overflows), and optionally rounded to fewer mantissa
bits (so TF32 ``tl.dot`` on a GPU is exact). Integers cover the full int32 range.
"""
from __future__ import annotations

import zlib

import torch

from .annotations import TensorSpec
from .puzzle import Case, Puzzle


def case_seed(puzzle: Puzzle, case: Case, secret: int = 0) -> int:
    """A seed per (puzzle, case seed): the same everywhere, unless a batch adds a secret."""
    return zlib.crc32(f"{puzzle.id}:{case.seed}:{secret}".encode())


def round_mantissa(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Round float32 values to ``bits`` explicit mantissa bits (nearest, ties away from zero)."""
    if not 0 <= bits <= 23:
        raise ValueError(f"mantissa bits must be 0..23, got {bits}")
    drop = 23 - bits
    if drop == 0:
        return x
    as_int = x.contiguous().view(torch.int32)
    rounded = (as_int + (1 << (drop - 1))) & ~((1 << drop) - 1)
    return rounded.view(torch.float32)


def make_input(spec: TensorSpec, shape: tuple[int, ...], gen: torch.Generator, case: Case,
               mantissa_bits: int | None) -> torch.Tensor:
    if spec.dtype.startswith(("float", "bfloat")):
        x = torch.randn(shape, generator=gen, dtype=torch.float32) * case.scale
        if mantissa_bits is not None:
            x = round_mantissa(x, mantissa_bits)
        return x.to(getattr(torch, spec.dtype))
    if spec.dtype == "bool":
        return torch.randint(0, 2, shape, generator=gen).bool()
    info = torch.iinfo(getattr(torch, spec.dtype))
    wide = torch.randint(info.min, info.max, shape, generator=gen, dtype=torch.int64)
    return wide.to(getattr(torch, spec.dtype))


def make_inputs(puzzle: Puzzle, specs: tuple[TensorSpec, ...], case: Case, secret: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(case_seed(puzzle, case, secret))
    dims = {**puzzle.sizes(case), **case.blocks}
    return [make_input(s, s.shape(dims), gen, case, puzzle.mantissa_bits.get(s.name)) for s in specs]
