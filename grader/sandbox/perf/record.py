"""Counting what a kernel does, for ``--perf`` (runs inside an interpreter worker).

Each launch interprets a spread sample of its programs (:mod:`.sample`: a few along each
axis of the grid, the first and the last included) and counts, per line of the kernel and
tensor: the lanes each load, store and atomic asks for, the lanes its mask lets through, the
32-byte sectors they touch, and which sectors each program and the sample as a whole touch;
the ``tl.dot`` FLOPs by precision; the lane operations, and how many are the slow ones
(exp, log, sqrt, sin, cos: the SFU's). Programs of one launch do the same work on other data in
nearly every kernel, so the judge scales the sample to the grid (:mod:`grader.judge.perf.run`).

Nothing here decides anything: the counts go to the grader as :class:`grader.channel.wire_measure.LaunchProfile`.
The hooks wrap the interpreter's builder, as the bounds check does (:mod:`.bounds`), whose
walk to the learner's line they share.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from grader.sandbox.bounds import kernel_line
from grader.sandbox.interpreter.hooks import restore
from grader.sandbox.perf.sectors import SECTOR, precision_of, warp_sectors  # noqa: F401 (warp_sectors: tests)

SLOW = {np.exp, np.exp2, np.log, np.log2, np.sqrt, np.sin, np.cos}  # the SFU's: one per 8 lanes a clock
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                  "launch_pdl")


@dataclass
class _Access:  # floats: a sampled loop's iterations weigh for the ones it skipped
    requests: float = 0
    lanes: float = 0
    active: float = 0
    bytes: float = 0
    sectors: float = 0
    conflicts: float = 0
    fresh: float = 0         # requests that touched a sector new to their program: a trip to memory
    source: str = ""


@dataclass
class Region:
    name: str
    start: int
    nbytes: int
    itemsize: int


class LaunchCounts:
    """What one launch's interpreted programs did."""

    def __init__(self, num_warps: int) -> None:
        self.num_warps = num_warps
        self.regions: list[Region] = []
        self.accesses: dict[tuple, _Access] = {}
        self.dots: dict[str, list] = {}
        self.alu = 0.0
        self.sfu = 0.0
        # what one iteration of the loops now running stands for: 1, or inside a sampled loop
        # (:meth:`grader.sandbox.perf.sample.Sample.loop`) the iterations it skipped per one it ran
        self.weight = 1.0
        # what a sector new to the program stands for: in a sampled loop, the new sectors of
        # the iterations its first run stands for (Sample._weighted)
        self.new_weight = 1.0
        self.seen: dict[tuple, set] = {}  # (tensor, op) -> the sectors this program touched
        self.loops_sampled = 0   # loops of which a sample of iterations ran
        self.reductions = 0.0    # reductions and scans (tl.sum, tl.max, tl.cumsum...): each a tree across lanes
        self.program_parts: dict[tuple, list] = defaultdict(list)  # (tensor, op) -> this program's (sectors, weight)
        self.program_unique: dict[tuple, float] = defaultdict(float)  # summed over the programs
        self.union_parts: dict[tuple, list] = defaultdict(list)     # every program's (sectors, weights)
        self.atomic_hits: dict[tuple, dict[int, float]] = defaultdict(lambda: defaultdict(float))

    def region(self, address: int) -> Region | None:
        for r in self.regions:
            if r.start <= address < r.start + max(r.nbytes, 1):
                return r
        return None

    def lane_ops(self, numel: int, slow: bool, floor: bool = True) -> None:
        # every warp issues the instruction; not so inside a reduction or scan, which the
        # interpreter runs slice by slice and a GPU as one tree across the lanes
        lanes = (max(int(numel), 32 * self.num_warps) if floor else int(numel)) * self.weight
        self.alu += lanes
        if slow:
            self.sfu += lanes

    def access(self, op: str, program: int, addresses: np.ndarray, mask: np.ndarray | None, line, source) -> None:
        addresses = np.asarray(addresses).astype(np.uint64, copy=False)
        lanes = np.ones(addresses.shape, dtype=bool) if mask is None else \
            np.broadcast_to(np.asarray(mask, dtype=bool), addresses.shape)
        active = addresses[lanes]
        first = int(active[0]) if active.size else int(addresses[0]) if addresses.size else 0
        region = self.region(first)
        name = region.name if region else "memory your code allocated"
        itemsize = region.itemsize if region else 4
        counts = self.accesses.setdefault((name, op, line), _Access(source=source))
        w = self.weight
        counts.requests += w
        counts.lanes += int(addresses.size) * w
        counts.active += int(active.size) * w
        counts.bytes += int(active.size) * itemsize * w
        if not active.size:
            return
        counts.sectors += warp_sectors(addresses, lanes, itemsize) * w
        seen = self.seen.setdefault((name, op), set())
        new = [s for s in np.unique(active // SECTOR).tolist() if s not in seen]
        if new:
            seen.update(new)
            counts.fresh += self.new_weight
            if self.new_weight:
                self.program_parts[(name, op)].append((np.array(new, dtype=np.uint64), self.new_weight))
        if op == "atomic":
            hits = self.atomic_hits[(name, op, line)]
            values, times = np.unique(active, return_counts=True)
            counts.conflicts += int(active.size - values.size) * w
            for value, n in zip(values.tolist(), times.tolist()):
                hits[value] += n * w

    def end_program(self) -> None:
        for key, parts in self.program_parts.items():
            sectors, weights = _weighted_unique(parts)
            self.program_unique[key] += float(weights.sum())
            self.union_parts[key].append((sectors, weights))
        self.program_parts.clear()
        self.seen.clear()

    def dot(self, precision: str, shape: tuple[int, ...], flops: int) -> None:
        entry = self.dots.setdefault(precision, [0, 0, shape])
        entry[0] += self.weight
        entry[1] += flops * self.weight

    def finish(self) -> dict:
        self.end_program()
        union_of = {key: int(round(_weighted_unique(parts)[1].sum())) for key, parts in self.union_parts.items()}
        sizes = {r.name: r.nbytes for r in self.regions}
        accesses = []
        for (name, op, line), c in self.accesses.items():
            hits = self.atomic_hits.get((name, op, line))
            accesses.append({"tensor": name, "op": op, "line": line, "source": c.source[:200],
                             "requests": round(c.requests), "lanes": round(c.lanes), "active": round(c.active),
                             "bytes": round(c.bytes), "sectors": round(c.sectors), "fresh": round(c.fresh),
                             "program_unique": round(self.program_unique.get((name, op), 0)),
                             "union": union_of.get((name, op), 0),
                             "tensor_bytes": int(sizes.get(name, 0)),
                             "same_address": round(max(hits.values())) if hits else 0, "conflicts": round(c.conflicts)})
        dots = [{"precision": p, "calls": round(calls), "flops": round(flops), "shape": list(shape)}
                for p, (calls, flops, shape) in self.dots.items()]
        return {"accesses": accesses, "dots": dots, "alu": round(self.alu), "sfu": round(self.sfu),
                "loops_sampled": self.loops_sampled, "reductions": round(self.reductions)}


def _reduced(inputs: tuple, axis) -> int:
    """How many elements a reduction or scan combines into one."""
    shape = [int(n) for n in getattr(inputs[0], "shape", ())]
    return int(np.prod(shape)) if axis is None else shape[axis] if shape else 1


def _weighted_unique(parts: list) -> tuple[np.ndarray, np.ndarray]:
    """The distinct sectors of ``parts`` ((sectors, weight) pairs), each with the largest weight it
    was touched under: a sector a sampled loop touched stands for the ones its skipped iterations
    touch (a loop over K reads new tiles each step), one touched outside any such loop for itself."""
    sectors = np.concatenate([p[0] for p in parts])
    weights = np.concatenate([np.broadcast_to(np.asarray(p[1], dtype=np.float64), p[0].shape) for p in parts])
    if not weights.size or (weights == weights[0]).all():  # no sampled loop: the plain count
        distinct = np.unique(sectors)
        return distinct, np.full(distinct.size, weights[0] if weights.size else 1.0)
    order = np.lexsort((-weights, sectors))
    sectors, weights = sectors[order], weights[order]
    first = np.ones(sectors.size, dtype=bool)
    first[1:] = sectors[1:] != sectors[:-1]
    return sectors[first], weights[first]


def _half_dot(a, b, d):
    """An fp16 ``tl.dot`` into fp32 as the interpreter computes it, in fp32 (exact products: an
    fp16 fits fp32) through BLAS: numpy multiplies fp16 matrices element by element, ten times
    slower, and a FlashAttention's sample spends nine tenths of its time there. Only the sums'
    order differs; ``--perf`` throws the values away. PyTorch's matmul, on the one thread the
    profiled run gives PyTorch (perf_run): numpy's BLAS would spin threads on a busy machine."""
    import torch
    from triton.runtime.interpreter import TensorHandle
    product = torch.from_numpy(a.data.astype(np.float32)) @ torch.from_numpy(b.data.astype(np.float32))
    return TensorHandle(product.numpy() + d.data, d.dtype.scalar)


class Counter:
    """The builder's hooks: every access, dot and lane operation of the running launch counted."""

    def __init__(self, builder, filename: str) -> None:
        self.builder = builder
        self.filename = filename
        self.launch: LaunchCounts | None = None
        self.combining = 0  # inside a reduction's or scan's combine function
        self._program = None
        self._saved: dict[str, object] = {}
        self._combiners: list[tuple] = []  # (class, name, original) of the reduce and scan we wrapped

    def _number(self) -> int:
        x, y, z = self.builder.grid_idx or (0, 0, 0)
        gx, gy, _ = getattr(self.builder, "grid_dim", None) or (1, 1, 1)
        number = int(x + gx * (y + gy * z))
        if number != self._program and self.launch is not None:
            self.launch.end_program()
            self._program = number
        return number

    def _count(self, op: str, ptrs, mask) -> None:
        if self.launch is None:
            return
        line, source = kernel_line(self.filename, depth=3)
        self.launch.access(op, self._number(), ptrs.data, None if mask is None else mask.data, line, source)

    def install(self) -> None:
        b = self.builder
        names = ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas", "create_dot",
                 "binary_op", "ternary_op", "unary_op", "create_fma", "create_umulhi", "create_rsqrt")
        self._saved = {name: getattr(b, name) for name in names if hasattr(b, name)}
        saved = self._saved

        def masked_load(ptrs, mask, other, *rest, **kw):
            self._count("load", ptrs, mask)
            return saved["create_masked_load"](ptrs, mask, other, *rest, **kw)

        def masked_store(ptrs, value, mask, *rest, **kw):
            self._count("store", ptrs, mask)
            return saved["create_masked_store"](ptrs, value, mask, *rest, **kw)

        def atomic_rmw(op, ptr, val, mask, *rest, **kw):
            self._count("atomic", ptr, mask)
            return saved["create_atomic_rmw"](op, ptr, val, mask, *rest, **kw)

        def atomic_cas(ptr, cmp, val, *rest, **kw):
            self._count("atomic", ptr, None)
            return saved["create_atomic_cas"](ptr, cmp, val, *rest, **kw)

        def dot(a, b_, d, input_precision, *rest, **kw):
            if self.launch is not None:
                shape_a, shape_b = np.shape(a.data), np.shape(b_.data)
                m, k, n = shape_a[-2], shape_a[-1], shape_b[-1]
                batch = int(np.prod(shape_a[:-2])) if len(shape_a) > 2 else 1
                self.launch.dot(precision_of(a, input_precision), (m, n, k), 2 * m * n * k * batch)
                if a.data.dtype == np.float16 and b_.data.dtype == np.float16 and d.data.dtype == np.float32:
                    return _half_dot(a, b_, d)
            return saved["create_dot"](a, b_, d, input_precision, *rest, **kw)

        def counted(name, slow_of):
            original = saved[name]

            def op(*args, **kw):
                result = original(*args, **kw)
                if self.launch is not None:
                    self.launch.lane_ops(np.size(getattr(result, "data", 0)), slow_of(args), not self.combining)
                return result
            return op

        hooks = {"create_masked_load": masked_load, "create_masked_store": masked_store,
                 "create_atomic_rmw": atomic_rmw, "create_atomic_cas": atomic_cas, "create_dot": dot,
                 "binary_op": counted("binary_op", lambda args: args[-1] in SLOW),
                 "unary_op": counted("unary_op", lambda args: args[-1] in SLOW),
                 "create_rsqrt": counted("create_rsqrt", lambda args: True),
                 "ternary_op": counted("ternary_op", lambda args: False),
                 "create_fma": counted("create_fma", lambda args: False),
                 "create_umulhi": counted("create_umulhi", lambda args: False)}
        for name, hook in hooks.items():
            if name in saved:
                setattr(b, name, hook)
        from triton.runtime import interpreter
        for owner in ("ReduceOps", "ScanOps"):  # each reduction or scan of the kernel, once
            cls = getattr(interpreter, owner, None)
            original = getattr(cls, "apply", None)
            if original is None:
                continue

            def reduction(op, input, _original=original):
                # apply calls itself once with its input made a tuple: counted there; an axis of
                # one element reduces nothing (a column's tile of shape (rows, 1))
                if self.launch is not None and not self.combining and isinstance(input, tuple) \
                        and _reduced(input, op.axis) > 1:
                    self.launch.reductions += self.launch.weight
                return _original(op, input)
            self._combiners.append((cls, "apply", original))
            setattr(cls, "apply", reduction)
        for owner, name in (("ReduceOps", "generic_reduce"), ("ScanOps", "generic_scan")):
            cls = getattr(interpreter, owner, None)
            original = getattr(cls, name, None)
            if original is None:
                continue

            def combining(op, *args, _original=original, **kw):
                self.combining += 1
                try:
                    return _original(op, *args, **kw)
                finally:
                    self.combining -= 1
            self._combiners.append((cls, name, original))
            setattr(cls, name, combining)

    def uninstall(self) -> None:
        for cls, name, original in self._combiners:
            setattr(cls, name, original)
        self._combiners = []
        restore(self.builder, self._saved)
        self._saved = {}
