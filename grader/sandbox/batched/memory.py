"""A batched launch's memory: what its loads, stores and atomics did, so that it can be undone, and
whether the batch met the serial order.

The serial interpreter runs program 0 to its end, then program 1. A batched run interleaves
them, an operation at a time. Both leave the same memory, and every load sees the same values,
exactly when every pair of accesses to one element by two programs, at least one a write, comes
in the same order in both: the lower-ranked program's first (conflict equivalence). Each
tracked element keeps the highest rank that wrote, read and updated it atomically so far; an
access by a lower rank after a higher one's conflicting access is a :class:`Conflict`, and the
launch runs serially instead. Programs that touch only their own elements never conflict.

Atomics of one integer operation that commutes (add, and, or, xor, min, max) meet in any order
with the same result, as long as no program reads what they return: such meetings are noted,
and count as a conflict only where a result was read.

Every store and atomic keeps the bytes it overwrote, and every update of the ranks its old
values: a group that must run again (its lanes disagreed on a branch) is undone first, so no
store is made twice. Regions the caller names read-only (a case's inputs) keep no ranks; a store
into one sends the launch to the serial interpreter, whose checks report it.
"""
from __future__ import annotations

import numpy as np

from grader.sandbox.batched.lanes import Unbatchable, call_stack


class Conflict(Unbatchable):
    """Two programs' accesses to one element came in the other order than the serial run's."""


class Crossed(Conflict):
    """A Conflict of a plain load and a plain store, in a launch that had made no atomic: nothing
    could order those programs, so on a GPU the value loaded depends on timing, a race whatever
    the serial order gives. ``address``: the element; ``rank``, ``other``: the program whose access
    met it and the one that had come first in the batch; ``loaded``: whether the first was the load."""

    def __init__(self, address: int, rank: int, other: int, loaded: bool) -> None:
        super().__init__("programs of one launch loaded and stored one element, with no atomic to order them")
        self.address, self.rank, self.other, self.loaded = address, rank, other, loaded
        self.stack = call_stack()  # (file, line) innermost first: the caller finds the learner's line in it


def _crosses(book: "_Ranks", kind: str, index: np.ndarray, ranks: np.ndarray):
    """Where a plain access meets another program's at an element: a read of what another stored,
    a store over what another read or stored (in this operation too). In the serial order (no
    Conflict), so the others came first. (lane, the other's rank, whether this access loads), or None."""
    wrote = book.wrote[index]
    met = np.flatnonzero((wrote >= 0) & (wrote != ranks))
    if met.size:
        return int(met[0]), int(wrote[met[0]]), kind == "read"
    if kind == "read":
        return None
    read = book.read[index]
    met = np.flatnonzero((read >= 0) & (read != ranks))
    if met.size:
        return int(met[0]), int(read[met[0]]), False
    order = np.lexsort((ranks, index))
    same = np.flatnonzero((index[order][1:] == index[order][:-1]) & (ranks[order][1:] != ranks[order][:-1]))
    if same.size:
        return int(order[same[0] + 1]), int(ranks[order[same[0]]]), False
    return None


class _Ranks:
    """Per element of a region: the highest rank that wrote, read and updated it atomically."""

    def __init__(self, count: int) -> None:
        self.wrote = np.full(count, -1, dtype=np.int64)
        self.read = np.full(count, -1, dtype=np.int64)
        self.atomic = np.full(count, -1, dtype=np.int64)


class LaunchMemory:
    def __init__(self, regions: list[tuple[int, int, int]], readonly: list[tuple[int, int]] = ()) -> None:
        """``regions``: (start address, bytes, element size) of the storages the launch was given."""
        regions = sorted(regions)
        self.starts = np.array([r[0] for r in regions], dtype=np.uint64)
        self.ends = np.array([r[0] + r[1] for r in regions], dtype=np.uint64)
        self.grain = [max(int(r[2]), 1) for r in regions]
        self.readonly = [any(lo <= r[0] and r[0] + r[1] <= hi for lo, hi in readonly) for r in regions]
        self.ranks: dict[int, _Ranks] = {}
        self.views: dict = {}  # (region, dtype) -> the region's memory as numpy, for loads
        self.undo: list = []
        self.commuted = False       # commuting atomics met out of the serial order
        self.results_read = False   # and a program read what an atomic returned
        self.crossed = False        # a program read or wrote, not atomically, an element another one wrote or read
        self.atomics = False        # an atomic was made: programs may order themselves through it
        self.first_crossing: Crossed | None = None  # the first meeting of programs at an element, as the batch met it

    # ---- undoing -----------------------------------------------------------------------------
    def mark(self) -> int:
        return len(self.undo)

    def rollback(self, mark: int) -> None:
        while len(self.undo) > mark:
            self.undo.pop()()

    def keep(self, array: np.ndarray, index: np.ndarray) -> None:
        """Remember ``array[index]`` (a check's own record) so that a rollback restores it."""
        old = array[index].copy()
        self.undo.append(lambda: array.__setitem__(index, old))

    def saved(self, interpreter, addresses: np.ndarray, active: np.ndarray, dtype: np.dtype) -> None:
        """Remember the bytes a store or an atomic is about to overwrite."""
        where = addresses[active]
        if where.size == 0:
            return
        old = interpreter._interpreter.load(where, np.ones(where.shape, bool), np.zeros(where.shape, dtype), dtype)
        store = interpreter._interpreter.store
        self.undo.append(lambda: store(where, old, np.ones(where.shape, bool)))

    # ---- the serial order ---------------------------------------------------------------------
    def access(self, kind: str, addresses: np.ndarray, active: np.ndarray, ranks, width: int,
               commuting: bool = False) -> None:
        """Note an access (``kind``: "read", "write" or "atomic") of each active lane, ``ranks``
        giving each lane's rank (a callable, asked only where a region keeps ranks); Conflict
        where one comes out of the serial order."""
        everywhere = bool(active.all())
        if not everywhere and not active.any():
            return
        for region, lanes in self._regions(addresses, None if everywhere else active):
            if self.readonly[region]:
                if kind != "read":
                    raise Unbatchable("a store into one of the case's inputs")
                continue
            grain = self.grain[region]
            picked = addresses if lanes is None else addresses[lanes]
            index = (picked.view(np.int64) - np.int64(self.starts[region])) // grain
            lane_ranks = ranks() if lanes is None else ranks()[lanes]
            count = int((self.ends[region] - self.starts[region]) // np.uint64(grain))
            book = self.ranks.get(region)
            if book is None:
                book = self.ranks[region] = _Ranks(count)
            span = max(1, -(-width // grain))  # elements of the region one access covers
            if span > 1:
                index = (index[:, None] + np.arange(span)).reshape(-1)
                lane_ranks = np.repeat(lane_ranks, span)
                inside = index < count
                index, lane_ranks = index[inside], lane_ranks[inside]
            self._order(book, kind, index, lane_ranks, commuting, region)

    def _order(self, book: _Ranks, kind: str, index, ranks, commuting: bool, region: int) -> None:
        later = lambda seen: bool(np.any(seen[index] > ranks))  # noqa: E731
        self.atomics |= kind == "atomic"
        if not self.atomics and (kind == "read" and later(book.wrote) or kind == "write" and later(book.read)):
            seen = book.wrote if kind == "read" else book.read
            k = int(np.flatnonzero(seen[index] > ranks)[0])
            address = int(self.starts[region]) + int(index[k]) * self.grain[region]
            raise self.first_crossing or Crossed(address, int(ranks[k]), int(seen[index[k]]), kind == "read")
        if later(book.wrote) or (kind != "read" and later(book.read)):
            raise Conflict("programs of one launch read or wrote each other's elements out of the serial order")
        if later(book.atomic):
            if kind != "atomic" or not commuting:
                raise Conflict("programs of one launch met at an element updated atomically, out of the serial order")
            self.commuted = True
        if kind != "atomic" and not self.crossed:
            met = _crosses(book, kind, index, ranks)
            if met is not None:
                lane, other, loaded = met
                self.crossed = True
                self.first_crossing = Crossed(int(self.starts[region]) + int(index[lane]) * self.grain[region],
                                              int(ranks[lane]), other, loaded)
        mine = {"read": book.read, "write": book.wrote, "atomic": book.atomic}[kind]
        self.keep(mine, index)
        mine[index] = np.maximum(mine[index], ranks)  # lanes in rank order: a repeated element keeps the last

    def _regions(self, addresses: np.ndarray, active: np.ndarray | None):
        """(region, lanes) for each region the active lanes reach: ``lanes`` a boolean selection,
        or None for every lane. Lanes outside every region are the bounds check's to report."""
        if self.starts.size == 0:
            return
        if active is None:
            low, high = addresses.min(), addresses.max()
        else:
            low = addresses.min(where=active, initial=np.iinfo(np.uint64).max)
            high = addresses.max(where=active, initial=0)
        first = int(np.searchsorted(self.starts, low, side="right")) - 1
        if first >= 0 and high < self.ends[first]:  # the usual access: one tensor
            yield first, active
            return
        which = np.searchsorted(self.starts, addresses, side="right").astype(np.int64) - 1
        inside = (which >= 0) & (addresses < self.ends[np.maximum(which, 0)])
        if active is not None:
            inside &= active
        for region in np.unique(which[inside]):
            yield int(region), inside & (which == region)

    def gather(self, addresses: np.ndarray, active: np.ndarray, other: np.ndarray, dtype: np.dtype):
        """A load of one region by numpy, where every active lane lies inside it on an element of
        ``dtype``: what the interpreter's load reads, byte for byte, in a fraction of its time.
        None where it does not apply (the interpreter's own load then runs)."""
        dtype = np.dtype(dtype)
        everywhere = bool(active.all())
        regions = list(self._regions(addresses, None if everywhere else active)) if active.any() else []
        if len(regions) != 1 or regions[0][1] is not None and not everywhere and \
                not np.array_equal(regions[0][1], active):
            return None
        region = regions[0][0]
        start, size = int(self.starts[region]), int(dtype.itemsize)
        if start % size or size & (size - 1):
            return None
        offset = addresses.view(np.int64) - np.int64(start)
        if not everywhere:
            offset = np.where(active, offset, 0)
        if np.bitwise_and(offset, size - 1).any():
            return None
        index = offset >> (size.bit_length() - 1)
        view = self._view(region, dtype)
        if int(index.max(initial=0)) >= view.size:
            return None
        values = view[index]
        return values if everywhere else np.where(active, values, other)

    def _view(self, region: int, dtype: np.dtype) -> np.ndarray:
        import ctypes
        key = (region, dtype.str)
        if key not in self.views:
            start, end = int(self.starts[region]), int(self.ends[region])
            raw = (ctypes.c_char * (end - start)).from_address(start)
            self.views[key] = np.frombuffer(raw, dtype=np.uint8)[: (end - start) // dtype.itemsize * dtype.itemsize] \
                .view(dtype)
        return self.views[key]

    def settle(self) -> None:
        """At the launch's end: commuting atomics that met out of order, whose results were read."""
        if self.commuted and self.results_read:
            raise Conflict("atomics met out of the serial order, and a program read what one returned")
