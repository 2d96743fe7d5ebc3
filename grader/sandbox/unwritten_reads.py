"""Which outputs a run read before any store of the run had reached the element: in the interpreter,
in every run (with the bounds hooks or without, batched or serial), so that the judge knows which
passing results may depend on what an output held before the kernel wrote it.

An element counts as written once any program of any launch of the run stored to it or updated it
atomically; a load of an element not yet written, or an atomic on one (an atomic reads what it
updates), is an unwritten read. Only the first such read of each output is kept, with its program
and the learner's line: a boolean per output is all the judge needs to decide, and one read is
enough to name. Only the output buffers are watched (inputs are read-only, and checked apart).

In a batched run (:mod:`grader.sandbox.batched`) an operation is every lane's at once. The engine
finishes a launch only where every pair of accesses to one element by two programs came in the
serial order, so "stored before this read" is the serial run's answer too; what a group that is
undone had marked or found is undone with it (the launch memory's undo log).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from grader.sandbox.batched.lanes import call_stack, current
from grader.sandbox.interpreter.hooks import restore

_HOOKED = ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas")


@dataclass(frozen=True)
class Watched:
    """An output buffer's data: its name, first byte, size in bytes, element size and shape."""

    name: str
    start: int
    nbytes: int
    itemsize: int
    shape: tuple[int, ...]


class UnwrittenReads:
    """Hooks on the interpreter's builder that mark each output element stored and note the first
    read of one not yet stored, per output. ``lines``: a stack of (file, line), innermost first ->
    the learner's (line, source) in it."""

    def __init__(self, outputs: list[Watched], builder, lines: Callable) -> None:
        self.outputs = outputs
        self.builder = builder
        self.lines = lines
        self.written = [np.zeros(max(o.nbytes // max(o.itemsize, 1), 0), dtype=bool) for o in outputs]
        self.found: dict[str, dict] = {}  # output name -> its first unwritten read
        self._saved: dict[str, object] = {}

    def reads(self) -> list[dict]:
        """The first unwritten read of each output that had one, in the outputs' order."""
        return [self.found[o.name] for o in self.outputs if o.name in self.found]

    # ---- hooks --------------------------------------------------------------------------------
    def install(self) -> None:
        b = self.builder
        self._saved = {name: getattr(b, name) for name in _HOOKED}
        load, store, rmw, cas = (self._saved[name] for name in _HOOKED)

        def masked_load(ptrs, mask, other, *rest, **kw):
            self._access(ptrs, mask, read=True, write=False)
            return load(ptrs, mask, other, *rest, **kw)

        def masked_store(ptrs, value, mask, *rest, **kw):
            self._access(ptrs, mask, read=False, write=True)
            return store(ptrs, value, mask, *rest, **kw)

        def atomic_rmw(op, ptr, val, mask, *rest, **kw):
            self._access(ptr, mask, read=True, write=True)
            return rmw(op, ptr, val, mask, *rest, **kw)

        def atomic_cas(ptr, cmp, val, *rest, **kw):
            self._access(ptr, None, read=True, write=True)
            return cas(ptr, cmp, val, *rest, **kw)

        b.create_masked_load, b.create_masked_store = masked_load, masked_store
        b.create_atomic_rmw, b.create_atomic_cas = atomic_rmw, atomic_cas

    def uninstall(self) -> None:
        # (the bounds check's own uninstall, where it was installed first, has removed these already)
        restore(self.builder, self._saved)
        self._saved = {}

    # ---- one access ---------------------------------------------------------------------------
    def _access(self, ptrs, mask, read: bool, write: bool) -> None:
        if not write and len(self.found) == len(self.outputs):
            return  # a load, with every output's first read already found: nothing it could add
        group = current()
        datas = [np.asarray(ptrs.data)]
        if mask is not None:
            datas.append(np.asarray(mask.data, dtype=bool))
        if group is None:
            shape = datas[0].shape
        else:  # arrays of shape (lanes, *block), a lane per program of the group
            shape = (group.size,) + tuple(np.broadcast_shapes(*(d.shape[1:] for d in datas)))
        addresses = np.broadcast_to(datas[0], shape).reshape(-1).astype(np.uint64, copy=False)
        active = np.ones(addresses.shape, dtype=bool) if mask is None else \
            np.broadcast_to(datas[1], shape).reshape(-1)
        if mask is None:
            low, high = int(addresses.min(initial=np.iinfo(np.uint64).max)), int(addresses.max(initial=0))
        else:
            low = int(addresses.min(where=active, initial=np.iinfo(np.uint64).max))
            high = int(addresses.max(where=active, initial=0))
        for k, out in enumerate(self.outputs):
            if high < out.start or low >= out.start + out.nbytes or (not write and out.name in self.found):
                continue  # the usual access: an input's, or another output's
            inside = active & (addresses >= out.start) & (addresses < out.start + out.nbytes)
            if not inside.any():
                continue
            index = ((addresses[inside] - np.uint64(out.start)) // np.uint64(out.itemsize)).astype(np.int64)
            if read and out.name not in self.found:
                never = np.flatnonzero(~self.written[k][index])
                if never.size:
                    block = int(np.prod(shape[1:], dtype=np.int64)) if group is not None else 1
                    self._note(group, out, int(index[never[0]]), int(np.flatnonzero(inside)[never[0]]) // max(block, 1))
            if write:
                if group is not None:
                    group.memory.keep(self.written[k], index)
                self.written[k][index] = True

    def _note(self, group, out: Watched, element: int, lane: int) -> None:
        program = list(group.coords(lane)) if group is not None else list(self.builder.grid_idx or (0, 0, 0))
        line, source = self.lines(call_stack())
        self.found[out.name] = {"tensor": out.name, "index": element, "program": program, "shape": list(out.shape),
                                "line": line, "source": source}
        if group is not None:  # undone with the group, which runs again (or serially)
            group.memory.undo.append(lambda: self.found.pop(out.name, None))
