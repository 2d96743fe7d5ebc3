"""Which program last stored each element of each output, for two findings no result shows in the
interpreter (which runs programs one at a time, in order):

* two programs storing different values to one element without an atomic: a race (an overlap);
* a program loading an output element nobody has stored yet: reading uninitialised memory. An
  atomic reads the element it updates, so an atomic on an element nobody has stored yet reads
  nothing too (``tl.atomic_add(z, 0.0)`` returns the grader's NaN fill, and garbage on a GPU);
  the judge excuses the outputs a puzzle starts as zeros (``Puzzle.zeroed``: a histogram);
* a program loading what another program of the launch stored, or storing what another loaded (a
  crossing): without atomics to order them, a race on a GPU, whatever the values.

A batched run (:mod:`grader.sandbox.batched`) makes one operation for many programs. Each finding
then gets the key the serial run would have met it at (the launch, the program's rank, the
operation's index in the program) and the earliest keys are kept, so the findings are the serial
run's: the first read of nothing, the first ``SHOWN`` overlaps. Within one store, a program sees
what the lower-ranked programs of that store wrote, as if they had run first. Every change is
kept in the launch's undo log, for a group that runs again.
"""
from __future__ import annotations

import numpy as np

from grader.sandbox.batched.lanes import launch_index

ATOMIC = -2  # an element last written by an atomic: atomics may meet from any program
SHOWN = 3     # overlapping stores reported per run


def _same(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    same = old == new
    if old.dtype.kind == "f":
        same |= np.isnan(old) & np.isnan(new)
    return same


class WriteLog:
    def __init__(self, regions, data: dict[int, np.ndarray | None]) -> None:
        self.regions = regions
        self.data = data  # region index -> the output's elements as numpy (the live memory), or None
        self.writer = {i: np.full(regions[i].nbytes // regions[i].itemsize, -1, dtype=np.int64) for i in data}
        self.reader = {i: np.full(regions[i].nbytes // regions[i].itemsize, -1, dtype=np.int64) for i in data}
        self.reader_rank: dict[int, np.ndarray] = {}  # a batched run's: the highest rank that loaded each element
        self.overlaps: list[dict] = []
        self.early_reads: list[dict] = []
        self.crossings: list[dict] = []
        self.atomics = False  # any program updated an output atomically: programs may have ordered themselves
        self._keys: dict[int, list] = {id(self.overlaps): [], id(self.early_reads): [], id(self.crossings): []}
        # Whether any program loaded an output or updated one atomically: only then can the
        # order programs run in change what is stored (inputs are read-only, checked apart).
        self.outputs_read = False
        self.decode = lambda program: (program, 0, 0)  # the checker knows the grid

    def _lanes(self, addresses: np.ndarray, mask: np.ndarray):
        flat, active = addresses.reshape(-1), mask.reshape(-1)
        for i in self.writer:
            r = self.regions[i]
            inside = active & (flat >= r.start) & (flat < r.start + r.nbytes)
            if inside.any():
                yield i, r, inside, ((flat[inside] - r.start) // r.itemsize).astype(np.int64)

    # ---- the serial interpreter: one program ----------------------------------------------------
    def store(self, program: int, addresses, values, mask, atomic: bool, where) -> None:
        values = None if values is None else np.broadcast_to(values, addresses.shape).reshape(-1)
        for i, r, inside, index in self._lanes(addresses, mask):
            self.outputs_read |= atomic
            self.atomics |= atomic
            before = self.writer[i][index]
            never = before == -1
            if atomic and not self.early_reads and never.any():  # it read what it updates: nothing yet
                self._append(self.early_reads, self._early(r, int(index[never][0]), program, where))
            if not atomic and not self.crossings:
                read_by = self.reader[i][index]
                theirs = np.flatnonzero((read_by >= 0) & (read_by != program))
                if theirs.size:
                    k = theirs[0]
                    self._append(self.crossings, self._crossing(r, int(index[k]), program, int(read_by[k]), False,
                                                                where))
            if not atomic and values is not None and self.data.get(i) is not None and len(self.overlaps) < SHOWN:
                other = (before >= 0) & (before != program)
                if other.any():
                    differ = np.flatnonzero(~_same(self.data[i][index[other]], values[inside][other]))
                    if differ.size:
                        k = differ[0]
                        self._append(self.overlaps, self._overlap(r, int(index[other][k]), int(before[other][k]),
                                                                  program, where))
            self.writer[i][index] = ATOMIC if atomic else program

    def load(self, program: int, addresses, mask, where) -> None:
        early = bool(self.early_reads)
        for i, r, inside, index in self._lanes(addresses, mask):
            self.outputs_read = True
            written = self.writer[i][index]
            if not self.crossings:
                theirs = np.flatnonzero((written != -1) & (written != program))
                if theirs.size:
                    k = theirs[0]
                    self._append(self.crossings, self._crossing(r, int(index[k]), program, int(written[k]), True,
                                                                where))
            self.reader[i][index] = program
            if not early:
                never = written == -1
                if never.any():
                    self._append(self.early_reads, self._early(r, int(index[never][0]), program, where))
                    early = True

    def _append(self, kept: list, finding: dict) -> None:
        """A finding of the serial interpreter, met in its order: after every earlier launch's."""
        keys = self._keys[id(kept)]
        keys.append((launch_index(), len(keys), 0, 0))
        kept.append(finding)

    def _overlap(self, r, index: int, before: int, program: int, where) -> dict:
        line, source = where()
        return {"tensor": r.name, "shape": list(r.shape), "index": index,
                "programs": [self.decode(before), self.decode(program)], "line": line, "source": source}

    def _crossing(self, r, index: int, program: int, other: int, loaded: bool, where) -> dict:
        line, source = where()
        return {"tensor": r.name, "index": index, "shape": list(r.shape), "program": self.decode(program),
                "other": self.decode(other) if other >= 0 else [], "loaded": loaded, "line": line, "source": source}

    def _early(self, r, index: int, program: int, where) -> dict:
        line, source = where()
        return {"tensor": r.name, "index": index, "program": self.decode(program), "shape": list(r.shape),
                "line": line, "source": source}

    # ---- a batched run: every lane of a group ------------------------------------------------
    def store_lanes(self, group, programs: np.ndarray, addresses, values, mask, atomic: bool, where) -> None:
        """A store (or atomic) of every lane: ``addresses``, ``values`` and ``mask`` of shape
        ``(lanes, *block)``; ``programs`` each lane's program number."""
        block = int(np.prod(addresses.shape[1:], dtype=np.int64))
        lane_of = np.repeat(np.arange(group.size), block)
        flat_values = None if values is None else values.reshape(-1)
        found = []
        crossed = []
        early: list = []
        for i, r, inside, index in self._lanes(addresses, mask):
            self.outputs_read |= atomic
            self.atomics |= atomic
            lane = lane_of[inside]
            if atomic:  # an atomic reads the element it updates: one nobody stored yet is a read of nothing
                early += self._never(group, programs, i, r, index, lane, self.writer[i][index] == -1, where,
                                     {e[0][1] for e in early})
            if not atomic:
                read_by = self.reader[i][index]
                crossed += self._crossing_lanes(group, programs, i, r, index, lane,
                                                (read_by >= 0) & (read_by != programs[lane]), read_by, False, where)
            if not atomic and flat_values is not None and self.data.get(i) is not None:
                found += self._overlapping(group, programs, i, r, index, lane, flat_values[inside], where)
            group.memory.keep(self.writer[i], index)
            self.writer[i][index] = ATOMIC if atomic else programs[lane]  # a repeated element: the last lane's
        self._merge(self.overlaps, found, SHOWN, group)
        self._merge(self.crossings, crossed, 1, group)
        self._merge(self.early_reads, early, 1, group)

    def _never(self, group, programs, i, r, index, lane, never, where, ranks_seen: set) -> list:
        """Each lane's first element of region ``i`` where ``never`` (nobody stored it yet), keyed as
        the serial run meets it; lanes whose rank is in ``ranks_seen`` already have one."""
        found = []
        if not never.any():
            return found
        lanes = lane[never]
        for first in np.flatnonzero(np.r_[True, lanes[1:] != lanes[:-1]]):
            this = int(lanes[first])
            key = (group.launch, int(group.ranks[this]), group.steps, i)
            if key[1] in ranks_seen:
                continue
            element = int(index[never][first])
            found.append((key, lambda e=element, p=int(programs[this]): self._early(r, e, p, where)))
        return found

    def _crossing_lanes(self, group, programs, i, r, index, lane, hits, other, loaded: bool, where) -> list:
        """Each lane's first element where ``hits`` (another program's), keyed as the serial run meets it."""
        found = []
        if not hits.any():
            return found
        at = np.flatnonzero(hits)
        lanes = lane[at]
        for first in np.flatnonzero(np.r_[True, lanes[1:] != lanes[:-1]]):
            k, this = at[first], int(lanes[first])
            key = (group.launch, int(group.ranks[this]), group.steps, i)
            found.append((key, lambda k=k, p=int(programs[this]): self._crossing(r, int(index[k]), p, int(other[k]),
                                                                                loaded, where)))
        return found

    def _overlapping(self, group, programs, i, r, index, lane, values, where) -> list:
        """Overlaps this store makes, one per program at most (its first element), with their keys.
        Each lane's "before" is what the lower-ranked lanes of this store left, else the memory."""
        order = np.lexsort((group.ranks[lane], index))  # by element, then rank; stable
        element, rank = index[order], group.ranks[lane][order]
        new_element = np.r_[True, element[1:] != element[:-1]]
        new_run = new_element | np.r_[True, rank[1:] != rank[:-1]]
        run = np.cumsum(new_run) - 1
        run_last = np.flatnonzero(np.r_[new_run[1:], True])
        run_starts_element = new_element[np.flatnonzero(new_run)]
        before_at = np.where(run_starts_element[run], -1, run_last[np.maximum(run - 1, 0)])
        mine = programs[lane][order]
        had = np.where(before_at >= 0, mine[before_at], self.writer[i][element])
        old = np.where(before_at >= 0, values[order][before_at], self.data[i][element])
        differ = (had >= 0) & (had != mine) & ~_same(old, values[order])
        found = []
        for k in np.flatnonzero(differ)[np.argsort(order[differ], kind="stable")]:
            rank_k = int(rank[k])
            if found and found[-1][0][1] == rank_k:
                continue  # a program's first differing element only, as the serial check takes
            key = (group.launch, rank_k, group.steps, i)
            found.append((key, lambda k=k: self._overlap(r, int(element[k]), int(had[k]), int(mine[k]), where)))
        return found

    def load_lanes(self, group, programs: np.ndarray, addresses, mask, where) -> None:
        block = int(np.prod(addresses.shape[1:], dtype=np.int64))
        lane_of = np.repeat(np.arange(group.size), block)
        found, seen, crossed = [], set(), []
        for i, r, inside, index in self._lanes(addresses, mask):
            self.outputs_read = True
            written = self.writer[i][index]
            lane = lane_of[inside]
            crossed += self._crossing_lanes(group, programs, i, r, index, lane,
                                            (written != -1) & (written != programs[lane]), written, True, where)
            self._read_by(group, programs, i, index, lane)
            never = written == -1
            if not never.any():
                continue
            lanes = lane_of[inside][never]
            firsts = np.flatnonzero(np.r_[True, lanes[1:] != lanes[:-1]])
            for first in firsts:
                lane = int(lanes[first])
                if lane in seen:  # a program's first region with such an element, as the serial check returns
                    continue
                seen.add(lane)
                key = (group.launch, int(group.ranks[lane]), group.steps, i)
                element = int(index[never][first])
                found.append((key, lambda e=element, p=int(programs[lane]): self._early(r, e, p, where)))
        self._merge(self.early_reads, found, 1, group)
        self._merge(self.crossings, crossed, 1, group)

    def _read_by(self, group, programs, i, index, lane) -> None:
        """Each element's last reader in the serial order: the highest rank that loaded it."""
        ranks = group.ranks[lane]
        seen = self.reader_rank.setdefault(i, np.full(self.reader[i].shape, -1, dtype=np.int64))
        later = ranks >= seen[index]
        group.memory.keep(seen, index)
        group.memory.keep(self.reader[i], index)
        self.reader[i][index[later]] = programs[lane[later]]  # lanes in rank order: a repeated element keeps the last
        seen[index] = np.maximum(seen[index], ranks)

    def _merge(self, kept: list, found: list, most: int, group) -> None:
        """Keep the ``most`` findings of lowest key among ``kept`` and ``found`` (made only if kept)."""
        if not found:
            return
        keys = self._keys[id(kept)]
        pairs = sorted(list(zip(keys, kept)) + found, key=lambda pair: pair[0])[:most]
        before = (list(keys), list(kept))

        def restore():
            keys[:], kept[:] = before
        group.memory.undo.append(restore)
        keys[:] = [key for key, _ in pairs]
        kept[:] = [item if isinstance(item, dict) else item() for _, item in pairs]
