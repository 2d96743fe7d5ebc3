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

from grader.sandbox.batched.lanes import current
from grader.sandbox.interpreter.hooks import restore
from grader.sandbox.write_log import WriteLog
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


class BoundsChecker:
    """Every access checked against the tensors before memory is touched, and written down (the
    write log, the access trace). In a batched run each access is every lane's: the first lane
    out of bounds in the serial order is the one reported, with its rank for the engine."""

    def __init__(self, regions: list[Region], filename: str, builder, trace: AccessTrace | None = None,
                 enforce: bool = True, outputs: dict[int, np.ndarray] | None = None) -> None:
        self.regions = regions
        self.filename = filename
        self.builder = builder
        self.trace = trace
        self.enforce = enforce
        self.log = WriteLog(regions, outputs or {})
        self.log.decode = self._decode
        self._saved: dict[str, object] = {}

    @property
    def overlaps(self) -> list[dict]:
        return self.log.overlaps

    @property
    def early_reads(self) -> list[dict]:
        return self.log.early_reads

    def findings(self) -> tuple:
        """What the check has found so far (the batched engine's differential check compares it)."""
        return list(self.log.overlaps), list(self.log.early_reads), list(self.log.crossings)

    def program(self) -> int:
        """The running program as one number, x + gx * (y + gy * z)."""
        x, y, z = self.builder.grid_idx or (0, 0, 0)
        gx, gy, _ = getattr(self.builder, "grid_dim", None) or (1, 1, 1)
        return int(x + gx * (y + gy * z))

    def programs(self, group) -> np.ndarray:
        """Each lane's program as one number."""
        gx, gy, _ = getattr(self.builder, "grid_dim", None) or (1, 1, 1)
        return (group.x + gx * (group.y + gy * group.z)).astype(np.int64)

    def _decode(self, program: int) -> list[int]:
        gx, gy, _ = getattr(self.builder, "grid_dim", None) or (1, 1, 1)
        return [program % gx, (program // gx) % gy, program // (gx * gy)]

    def _where(self):
        return kernel_line(self.filename, depth=5)

    def check(self, op: str, addresses: np.ndarray, mask, program=None) -> None:
        addresses = np.asarray(addresses).astype(np.uint64, copy=False)
        full_mask = np.ones(addresses.shape, dtype=bool) if mask is None else \
            np.broadcast_to(np.asarray(mask, dtype=bool), addresses.shape)
        program = list(self.builder.grid_idx or (0, 0, 0)) if program is None else program
        if self.trace is not None:
            self.trace.record(op, tuple(program), addresses, full_mask)
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
        line, source = kernel_line(self.filename, depth=3)
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
            "program": list(program),
            "line": line,
            "source": source,
        })

    def check_lanes(self, group, op: str, addresses: np.ndarray, mask: np.ndarray) -> None:
        """``check`` for every lane of a batched access (arrays of shape ``(lanes, *block)``):
        where any is out of bounds, the lowest-ranked such lane's access is checked and raised."""
        if not self.enforce:
            return
        inside = np.zeros(addresses.shape, dtype=bool)
        for r in self.regions:
            inside |= (addresses >= r.start) & (addresses < r.start + r.nbytes)
        bad = (mask & ~inside).reshape(group.size, -1).any(axis=1)
        if not bad.any():
            return
        lane = int(np.flatnonzero(bad)[0])  # lanes are in rank order
        try:
            self.check(op, addresses[lane], mask[lane], list(group.coords(lane)))
        except OutOfBounds as exc:
            exc.batched_rank = int(group.ranks[lane])
            raise

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

    def _access(self, op: str, ptrs, mask, values=None, atomic: bool = False) -> None:
        """Check one access and write it down, before the builder's own method touches memory."""
        group = current()
        if group is None:
            addresses = np.asarray(ptrs.data).astype(np.uint64, copy=False)
            full = np.ones(addresses.shape, dtype=bool) if mask is None else \
                np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
            self.check(op, addresses, None if mask is None else mask.data)
            if op == "load":
                self.log.load(self.program(), addresses, full, self._where)
            else:
                self.log.store(self.program(), addresses, None if values is None else np.asarray(values.data),
                               full, atomic, self._where)
            return
        datas = [np.asarray(ptrs.data), np.ones((1,), bool) if mask is None else np.asarray(mask.data, dtype=bool)]
        if values is not None:
            datas.append(np.asarray(values.data))
        shape = (group.size,) + tuple(np.broadcast_shapes(*(d.shape[1:] for d in datas)))
        addresses, full, *rest = [np.broadcast_to(d, shape) for d in datas]
        addresses = addresses.astype(np.uint64, copy=False)
        self.check_lanes(group, op, addresses, full)
        if op == "load":
            self.log.load_lanes(group, self.programs(group), addresses, full, self._where)
        else:
            self.log.store_lanes(group, self.programs(group), addresses, rest[0] if rest else None, full, atomic,
                                 self._where)

    def install(self) -> None:
        b = self.builder
        self._saved = {name: getattr(b, name) for name in
                       ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas")}
        load, store = self._saved["create_masked_load"], self._saved["create_masked_store"]
        rmw, cas = self._saved["create_atomic_rmw"], self._saved["create_atomic_cas"]

        def masked_load(ptrs, mask, other, *rest, **kw):
            self._access("load", ptrs, mask)
            return load(ptrs, mask, other, *rest, **kw)

        def masked_store(ptrs, value, mask, *rest, **kw):
            self._access("store", ptrs, mask, value)
            return store(ptrs, value, mask, *rest, **kw)

        def atomic_rmw(op, ptr, val, mask, *rest, **kw):
            self._access("atomic", ptr, mask, atomic=True)
            return rmw(op, ptr, val, mask, *rest, **kw)

        def atomic_cas(ptr, cmp, val, *rest, **kw):
            self._access("atomic", ptr, None, atomic=True)
            return cas(ptr, cmp, val, *rest, **kw)

        b.create_masked_load, b.create_masked_store = masked_load, masked_store
        b.create_atomic_rmw, b.create_atomic_cas = atomic_rmw, atomic_cas

    def uninstall(self) -> None:
        restore(self.builder, self._saved)
        self._saved = {}
