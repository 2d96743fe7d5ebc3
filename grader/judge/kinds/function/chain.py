"""Whether a sampled replay of an autograd puzzle's large case stands for every program of its
launches (the worker's side: :mod:`grader.sandbox.kinds.function.chain_sampling`): per tensor the
wrapper returned, which elements the sample gives, read as a kernel's sampled launch is
(:mod:`grader.judge.sampled`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from grader.channel.kinds import function as function_wire
from grader.judge.sampled import Stands, lattice_gap, run_offsets, stored_boxes, writers


@dataclass(frozen=True)
class _Returned:
    """A tensor an autograd wrapper returned, laid out as its elements came back (row-major)."""

    name: str
    shape: tuple[int, ...]

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(int(np.prod(self.shape[d + 1:])) for d in range(len(self.shape)))


def chain_stands(names: Sequence[str], shapes: Sequence[tuple[int, ...]], chain: function_wire.SampledChain) -> Stands | str:
    """A sampled replay (grader.sandbox.kinds.function.chain_sampling): per tensor returned (``names``, ``shapes``;
    an empty name for what is not a tensor), the elements whose values the sample gives; or why
    it does not stand. Every launch's stores to a tensor returned must be cells of one lattice,
    as many as its programs that store there (``writers``), and each tensor must have some."""
    masks = {}
    for index, (name, shape) in enumerate(zip(names, shapes)):
        if not name:
            continue
        tensor = _Returned(name, tuple(shape))
        size = int(np.prod(shape))
        for launch in chain.launches:
            writes = [w for w in launch.writes if w.buffer == index]
            if not writes or not shape:
                continue
            found = stored_boxes(writes, tensor, size)
            if isinstance(found, str):
                return found
            why = lattice_gap(found[0], tensor.shape, writers(launch.grid, launch.along, {tuple(w.program) for w in writes}))
            if why is not None:
                return f"`{name}` as `{launch.kernel}` stores it: {why}"
        known = torch.zeros(size, dtype=torch.bool)
        known[torch.from_numpy(run_offsets(chain.known[index] if index < len(chain.known) else ()))] = True
        if size and not known.any():
            return f"no element of `{name}` is known from the programs that ran"
        masks[name] = known.reshape(shape)
    return Stands(masks, chain.ran, chain.programs)
