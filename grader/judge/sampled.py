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


def _offsets(runs: Sequence[int]) -> np.ndarray:
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


def _lattice(boxes: list[tuple[np.ndarray, np.ndarray]], shape: tuple[int, ...], programs: int) -> str | None:
    """Why these boxes (lowest and highest index per dim) are not one cell each of a lattice
    of ``programs`` cells covering ``shape``; None if they are."""
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
    if cells != programs:
        return f"{cells} cells of {cell.tolist()} for {programs} programs"
    return None


def stands(buffers: Sequence[Buffer], n_inputs: int, sampled: wire.SampledRun) -> Stands | str:
    """The elements to compare, or why the sample does not stand for the launch."""
    masks = {}
    for index, buffer in enumerate(buffers):
        if index < n_inputs:
            continue
        writes = [w for w in sampled.writes if w.buffer == index]
        if len({tuple(w.program) for w in writes}) != sampled.ran:
            return f"not every program that ran stored to `{buffer.name}`"
        flat = torch.zeros(buffer.nbytes // buffer.itemsize, dtype=torch.bool)
        boxes = []
        for w in writes:
            offsets = _offsets(w.runs)
            if offsets.size != w.count or (offsets >= flat.numel()).any():
                return f"the stores to `{buffer.name}` came back garbled"
            coords = _coordinates(offsets, buffer)
            low, high = coords.min(axis=0), coords.max(axis=0)
            if int(np.prod(high - low + 1)) != w.count:
                return f"program {tuple(w.program)} stored `{buffer.name}` in more than one box"
            boxes.append((low, high))
            flat[torch.from_numpy(offsets)] = True
        if buffer.shape:
            why = _lattice(boxes, tuple(buffer.shape), sampled.programs)
            if why is not None:
                return f"`{buffer.name}`: {why}"
        elif sampled.programs != 1:
            return f"`{buffer.name}` is one element for {sampled.programs} programs"
        masks[buffer.name] = flat.as_strided(tuple(buffer.shape), tuple(buffer.strides)).clone()
    return Stands(masks, sampled.ran, sampled.programs)
