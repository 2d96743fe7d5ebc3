"""Out-of-bounds detection for the Triton interpreter (runs inside the worker).

Every load and store in the interpreter, masked or not, block pointer or plain, goes through
the interpreter builder's masked load/store primitives. We wrap those on the builder
instance, so each access is checked against the kernel's argument tensors *before* memory
is touched: an out-of-bounds store cannot corrupt the heap, it becomes a report instead.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from grader.sandbox.interpreter.hooks import restore
from grader.source.source_lines import pointer_names


@dataclass(frozen=True)
class Region:
    name: str
    start: int  # address of the first data byte
    nbytes: int
    fence_start: int
    fence_end: int
    itemsize: int
    shape: tuple[int, ...]
    param: str = ""  # the kernel parameter that received this tensor
    role: str = ""   # "input" or "output" (tensors a wrapper allocates have none)


class OutOfBounds(Exception):
    """Raised inside the kernel run; the worker turns it into a structured report."""

    def __init__(self, info: dict) -> None:
        super().__init__(f"{info['op']} out of bounds of {info['tensor']}")
        self.info = info


def kernel_line(filename: str, depth: int = 2) -> tuple[int | None, str]:
    """The innermost stack frame in the learner's file: the line doing the access."""
    frame = sys._getframe(depth)
    while frame is not None:
        if frame.f_code.co_filename == filename:
            import linecache

            return frame.f_lineno, linecache.getline(filename, frame.f_lineno).strip()
        frame = frame.f_back
    return None, ""


def _access_path() -> str | None:
    """Whether the access came through a block pointer or a tensor descriptor."""
    frame = sys._getframe(2)
    for _ in range(6):
        if frame is None:
            break
        name = frame.f_code.co_name
        if name.startswith("create_tensor_pointer_"):
            return "block_ptr"
        if name.startswith("create_descriptor_"):
            return "descriptor"
        frame = frame.f_back
    return None


class AccessTrace:
    """Which elements each program touched, per tensor: for the memory-access pictures."""

    MAX_INDICES = 4_000_000

    def __init__(self, regions: list[Region]) -> None:
        self.regions = regions
        self.parts: dict[tuple, list[np.ndarray]] = {}
        self.size = 0
        self.truncated = False

    def record(self, op: str, program: tuple[int, int, int], addresses: np.ndarray, mask: np.ndarray) -> None:
        if self.size > self.MAX_INDICES:
            self.truncated = True
            return
        addresses, mask = addresses.reshape(-1), mask.reshape(-1)
        for i, r in enumerate(self.regions):
            near = (addresses >= r.fence_start) & (addresses < r.fence_end)
            if not near.any():
                continue
            index = (addresses[near].astype(np.int64) - r.start) // r.itemsize
            active = mask[near]
            inside = (index >= 0) & (index < r.nbytes // r.itemsize)
            for kind, chosen in (("ok", active & inside), ("oob", active & ~inside), ("masked", ~active)):
                if chosen.any():
                    self.parts.setdefault((program, i, op, kind), []).append(index[chosen])
                    self.size += int(chosen.sum())

    def to_json(self) -> dict:
        records = [{"program": list(program), "tensor": self.regions[i].name, "op": op, "kind": kind,
                    "numel": self.regions[i].nbytes // self.regions[i].itemsize,
                    "indices": np.unique(np.concatenate(arrays)).tolist()}
                   for (program, i, op, kind), arrays in self.parts.items()]
        return {"records": records, "truncated": self.truncated}


ATOMIC = -2  # an element last written by an atomic: atomics may meet from any program
SHOWN = 3     # overlapping stores reported per run


class WriteLog:
    """Which program last stored each element of each output, for two findings no result shows
    in the interpreter (which runs programs one at a time, in order):

    * two programs storing different values to one element without an atomic: a race;
    * a program loading an output element nobody has stored yet: reading uninitialised memory.

    When only a sample of the programs runs (:mod:`.sampling`), every store is also handed to
    ``on_store``, and a load of an output element this program did not store itself is a
    ``foreign_read``: what another program writes, which a program may never read.
    """

    def __init__(self, regions: list[Region], data: dict[int, np.ndarray | None]) -> None:
        self.regions = regions
        self.data = data  # region index -> the output's elements as numpy (the live memory), or None
        self.writer = {i: np.full(regions[i].nbytes // regions[i].itemsize, -1, dtype=np.int64) for i in data}
        self.overlaps: list[dict] = []
        self.early_reads: list[dict] = []
        self.sampled = False
        self.on_store = None  # (program, region index, element indices) -> None
        self.foreign_reads: list[dict] = []
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

    def store(self, program: int, addresses, values, mask, atomic: bool, where) -> None:
        values = None if values is None else np.broadcast_to(values, addresses.shape).reshape(-1)
        for i, r, inside, index in self._lanes(addresses, mask):
            self.outputs_read |= atomic
            before = self.writer[i][index]
            if self.on_store is not None:
                self.on_store(program, i, index)
            if not atomic and values is not None and self.data.get(i) is not None and len(self.overlaps) < SHOWN:
                other = (before >= 0) & (before != program)
                if other.any():
                    old, new = self.data[i][index[other]], values[inside][other]
                    same = old == new
                    if old.dtype.kind == "f":
                        same |= np.isnan(old) & np.isnan(new)
                    differ = np.flatnonzero(~same)
                    if differ.size:
                        k = differ[0]
                        line, source = where()
                        self.overlaps.append({"tensor": r.name, "shape": list(r.shape),
                                              "index": int(index[other][k]),
                                              "programs": [self.decode(int(before[other][k])), self.decode(program)],
                                              "line": line, "source": source})
            self.writer[i][index] = ATOMIC if atomic else program

    def load(self, program: int, addresses, mask, where) -> None:
        for i, r, inside, index in self._lanes(addresses, mask):
            self.outputs_read = True
            if self.sampled and not self.foreign_reads:
                theirs = self.writer[i][index] != program
                if theirs.any():
                    line, source = where()
                    k = int(np.flatnonzero(theirs)[0])
                    self.foreign_reads.append({"tensor": r.name, "index": int(index[k]), "shape": list(r.shape),
                                               "program": self.decode(program), "written": int(self.writer[i][index[k]]) != -1,
                                               "line": line, "source": source})
            if self.early_reads:
                return
            never = self.writer[i][index] == -1
            if never.any():
                line, source = where()
                self.early_reads.append({"tensor": r.name, "index": int(index[never][0]),
                                         "program": self.decode(program),
                                         "shape": list(r.shape), "line": line, "source": source})
                return


class BoundsChecker:
    def __init__(self, regions: list[Region], filename: str, builder, trace: AccessTrace | None = None,
                 enforce: bool = True, outputs: dict[int, np.ndarray] | None = None) -> None:
        self.regions = regions
        self.filename = filename
        self.builder = builder
        self.trace = trace
        self.enforce = enforce
        self.log = WriteLog(regions, outputs or {})
        self.log.decode = self._decode
        self.chain = None  # a sampled replay's log of known memory (grader.sandbox.kinds.function.chain_sampling)
        self._saved: dict[str, object] = {}

    @property
    def overlaps(self) -> list[dict]:
        return self.log.overlaps

    @property
    def early_reads(self) -> list[dict]:
        return self.log.early_reads

    def program(self) -> int:
        """The running program as one number, x + gx * (y + gy * z)."""
        x, y, z = self.builder.grid_idx or (0, 0, 0)
        gx, gy, _ = getattr(self.builder, "grid_dim", None) or (1, 1, 1)
        return int(x + gx * (y + gy * z))

    def _decode(self, program: int) -> list[int]:
        gx, gy, _ = getattr(self.builder, "grid_dim", None) or (1, 1, 1)
        return [program % gx, (program // gx) % gy, program // (gx * gy)]

    def _where(self):
        return kernel_line(self.filename, depth=4)

    def check(self, op: str, addresses: np.ndarray, mask) -> None:
        addresses = np.asarray(addresses).astype(np.uint64, copy=False)
        full_mask = np.ones(addresses.shape, dtype=bool) if mask is None else \
            np.broadcast_to(np.asarray(mask, dtype=bool), addresses.shape)
        if self.trace is not None:
            self.trace.record(op, tuple(self.builder.grid_idx or (0, 0, 0)), addresses, full_mask)
        if not self.enforce:
            return
        active = addresses[full_mask]
        if active.size == 0:
            return
        inside = np.zeros(active.shape, dtype=bool)
        for r in self.regions:
            inside |= (active >= r.start) & (active < r.start + r.nbytes)
        if inside.all():
            return
        bad = active[~inside]
        first = int(bad[0])
        line, source = kernel_line(self.filename)
        region = self._owner(first, op, source)
        # Counted against the tensor the access was meant for: a stray lane may land inside
        # another tensor, depending on where the allocator put it, and the message must not.
        bad = active[(active < region.start) | (active >= region.start + region.nbytes)]
        first = int(bad[0])
        raise OutOfBounds({
            "via": _access_path(),
            "op": op,
            "tensor": region.name,
            "shape": list(region.shape),
            "numel": region.nbytes // region.itemsize,
            "first_index": (first - region.start) // region.itemsize,
            "bad_lanes": int(bad.size),
            "lanes": int(active.size),
            "program": list(self.builder.grid_idx or (0, 0, 0)),
            "line": line,
            "source": source,
        })

    def allow(self, tensor) -> None:
        """A tensor the learner's wrapper allocated: accesses to it are in bounds."""
        start, itemsize = tensor.data_ptr(), tensor.element_size()
        nbytes = tensor.numel() * itemsize
        self.regions.append(Region(f"a tensor of shape {tuple(tensor.shape)} allocated by your code", start, nbytes,
                                   start, start + nbytes, itemsize, tuple(tensor.shape)))

    def _owner(self, address: int, op: str, source: str) -> Region:
        """Which tensor the bad pointer was meant for.

        Within a fence it is certain. Farther out, the interpreter's pointers carry no origin,
        so we read the line: a single pointer parameter named there decides; a store with no
        name there most likely targets the output; else the nearest tensor below the address.
        """
        for r in self.regions:
            if r.fence_start <= address < r.fence_end:
                return r
        words = pointer_names(source, op)
        named = [r for r in self.regions if r.param and r.param in words]
        if len(named) == 1:
            return named[0]
        if op != "load" and not named:
            return self.regions[-1]
        below = [r for r in self.regions if r.start <= address]
        return max(below, key=lambda r: r.start) if below else min(self.regions, key=lambda r: r.start)

    def install(self) -> None:
        b = self.builder
        self._saved = {name: getattr(b, name) for name in
                       ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas")}
        load, store = self._saved["create_masked_load"], self._saved["create_masked_store"]
        rmw, cas = self._saved["create_atomic_rmw"], self._saved["create_atomic_cas"]

        def lanes(ptrs, mask):
            addresses = np.asarray(ptrs.data).astype(np.uint64, copy=False)
            full = np.ones(addresses.shape, dtype=bool) if mask is None else \
                np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
            return addresses, full

        def width(ptrs) -> int:
            return max(getattr(ptrs.get_element_ty(), "primitive_bitwidth", 8) // 8, 1)

        def chained(ptrs, mask, atomic=None):  # atomic None: a load
            if self.chain is not None:
                if atomic is None:
                    self.chain.load(self.program(), *lanes(ptrs, mask), width(ptrs), self._where)
                else:
                    self.chain.store(self.program(), *lanes(ptrs, mask), width(ptrs), atomic)

        def masked_load(ptrs, mask, other, *rest, **kw):
            self.check("load", ptrs.data, mask.data)
            self.log.load(self.program(), *lanes(ptrs, mask), self._where)
            chained(ptrs, mask)
            return load(ptrs, mask, other, *rest, **kw)

        def masked_store(ptrs, value, mask, *rest, **kw):
            self.check("store", ptrs.data, mask.data)
            addresses, full = lanes(ptrs, mask)
            self.log.store(self.program(), addresses, np.asarray(value.data), full, False, self._where)
            chained(ptrs, mask, False)
            return store(ptrs, value, mask, *rest, **kw)

        def atomic_rmw(op, ptr, val, mask, *rest, **kw):
            self.check("atomic", ptr.data, mask.data)
            self.log.store(self.program(), *lanes(ptr, mask)[:1], None, lanes(ptr, mask)[1], True, self._where)
            chained(ptr, mask, True)
            return rmw(op, ptr, val, mask, *rest, **kw)

        def atomic_cas(ptr, cmp, val, *rest, **kw):
            self.check("atomic", ptr.data, None)
            self.log.store(self.program(), *lanes(ptr, None)[:1], None, lanes(ptr, None)[1], True, self._where)
            chained(ptr, None, True)
            return cas(ptr, cmp, val, *rest, **kw)

        b.create_masked_load, b.create_masked_store = masked_load, masked_store
        b.create_atomic_rmw, b.create_atomic_cas = atomic_rmw, atomic_cas

    def uninstall(self) -> None:
        restore(self.builder, self._saved)
        self._saved = {}
