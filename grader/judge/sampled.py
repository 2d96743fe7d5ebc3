"""Whether a sampled run stands for its launch, and which elements it decides.

A large case runs only a sample of its launch's programs (:mod:`grader.sandbox.sampling`); the
worker sends what each of them stored. The sample stands for the launch when every program
that ran stored, in every output, exactly one cell of one lattice: a box of the same extents
(cut short only at the output's end), at a multiple of those extents, no two programs the
same cell, and as many cells as the launch has programs. Then the programs that did not run
have a cell each left to store, and the elements compared are those the sample stored. A
kernel whose programs store otherwise (a loop over several tiles, a row in pieces) is run
whole instead: the sample could not say which elements the others owe.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from grader.channel import wire
from grader.judge.fence import Buffer


@dataclass(frozen=True)
class Stands:
    """The sample stands: per output name, the elements the programs that ran stored."""

    masks: dict[str, torch.Tensor]
    ran: int
    programs: int


@dataclass(frozen=True)
class Unstood:
    """Why a large case's sample does not stand for its launch, and how many programs the launch has:
    the case then runs whole (grader.judge.sampled)."""

    why: str
    programs: int


def run_offsets(runs: Sequence[int]) -> np.ndarray:
    pairs = np.asarray(runs, dtype=np.int64).reshape(-1, 2)
    return np.concatenate([np.arange(start, start + length) for start, length in pairs]) if len(pairs) else \
        np.zeros(0, dtype=np.int64)


def _coordinates(offsets: np.ndarray, buffer: Buffer) -> np.ndarray:
    """Storage offsets as indices of the buffer's dims (its strides do not overlap)."""
    coords = np.zeros((offsets.size, len(buffer.shape)), dtype=np.int64)
    left = offsets.copy()
    for dim in sorted(range(len(buffer.shape)), key=lambda d: -buffer.strides[d]):
        coords[:, dim], left = np.divmod(left, max(buffer.strides[dim], 1))
    return coords


def lattice_gap(boxes: list[tuple[np.ndarray, np.ndarray]], shape: tuple[int, ...], writers) -> str | None:
    """Why these boxes (lowest and highest index per dim) are not one cell each of a lattice
    covering ``shape`` with as many cells as ``writers`` allows; None if they are."""
    cell = np.max([high - low + 1 for low, high in boxes], axis=0)
    starts = set()
    for low, high in boxes:
        want = np.minimum(cell, np.asarray(shape) - low)
        if (low % cell).any() or ((high - low + 1) != want).any():
            return f"a program stored the box {low.tolist()}..{high.tolist()}, not one cell of {cell.tolist()}"
        starts.add(tuple(low.tolist()))
    if len(starts) != len(boxes):
        return "two programs stored the same cell"
    cells = int(np.prod([-(-n // c) for n, c in zip(shape, cell)]))
    return writers(cells, cell.tolist())


def writers(grid: Sequence[int], along: Sequence[Sequence[int]], wrote: set[tuple[int, ...]]):
    """How many of the launch's programs store to an output, as a check of a count of cells: all
    of them where every program that ran did; else, in a split grid (FlashAttention's backward:
    key blocks first, then query blocks, along axis 0), the programs before a cut along one axis,
    or after it, where the sample places the cut between the last index that stored and the first
    that did not. Returns ``check(cells, cell) -> why not, or None``."""
    grid = [int(n) for n in grid] + [1] * (3 - len(grid))
    along = [list(a) for a in along] + [[0]] * (3 - len(along))
    ran = {(x, y, z) for x in along[0] for y in along[1] for z in along[2]}
    wrote = {tuple(list(p) + [0] * (3 - len(p))) for p in wrote}
    programs = int(np.prod(grid))
    if wrote == ran:
        return _every(programs)
    spans = []  # (programs per index along the axis, fewest indices, most indices)
    for axis, indices in enumerate(along):
        mine = sorted({p[axis] for p in wrote})
        if {p for p in ran if p[axis] in mine} != wrote:
            continue
        others = [i for i in indices if i not in mine]
        per = programs // grid[axis]
        if others and max(mine) < min(others):  # before the cut
            spans.append((per, max(mine) + 1, min(others)))
        elif others and min(mine) > max(others):  # after it
            spans.append((per, grid[axis] - min(mine), grid[axis] - max(others) - 1))

    def check(cells: int, cell) -> str | None:
        if any(cells % per == 0 and low <= cells // per <= high for per, low, high in spans):
            return None
        return f"{cells} cells of {cell} for the {len(wrote)} of {len(ran)} programs run that stored"
    return check


def _every(programs: int):
    return lambda cells, cell: None if cells == programs else f"{cells} cells of {cell} for {programs} programs"


def stored_boxes(writes, buffer: Buffer, size: int) -> tuple[list, np.ndarray] | str:
    """Each program's box of ``buffer`` (its elements' lowest and highest index per dim), and the
    elements stored, as a flat mask of ``size``; or why they are not boxes."""
    flat = np.zeros(size, dtype=bool)
    boxes = []
    for w in writes:
        offsets = run_offsets(w.runs)
        if offsets.size != w.count or (offsets >= size).any():
            return f"the stores to `{buffer.name}` came back garbled"
        coords = _coordinates(offsets, buffer)
        low, high = coords.min(axis=0), coords.max(axis=0)
        if int(np.prod(high - low + 1)) != w.count:
            return f"program {tuple(w.program)} stored `{buffer.name}` in more than one box"
        boxes.append((low, high))
        flat[offsets] = True
    return boxes, flat


def stands(buffers: Sequence[Buffer], n_inputs: int, sampled: wire.SampledRun) -> Stands | str:
    """The elements to compare, or why the sample does not stand for the launch."""
    masks = {}
    for index, buffer in enumerate(buffers):
        if index < n_inputs:
            continue
        writes = [w for w in sampled.writes if w.buffer == index]
        wrote = {tuple(w.program) for w in writes}
        if not wrote or not sampled.along and len(wrote) != sampled.ran:
            return f"not every program that ran stored to `{buffer.name}`"
        found = stored_boxes(writes, buffer, buffer.nbytes // buffer.itemsize)
        if isinstance(found, str):
            return found
        boxes, flat = found
        if buffer.shape:
            # (launches the worker did not tell apart: every program that ran stored, checked above)
            check = writers(sampled.grid, sampled.along, wrote) if sampled.along else _every(sampled.programs)
            why = lattice_gap(boxes, tuple(buffer.shape), check)
            if why is not None:
                return f"`{buffer.name}`: {why}"
        elif sampled.programs != 1:
            return f"`{buffer.name}` is one element for {sampled.programs} programs"
        masks[buffer.name] = torch.from_numpy(flat).as_strided(tuple(buffer.shape), tuple(buffer.strides)).clone()
    return Stands(masks, sampled.ran, sampled.programs)
