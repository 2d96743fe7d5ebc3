"""Loads, stores and atomics of a batched run, as the serial interpreter makes them.

Each is the interpreter's own primitive called once for every lane: its pointers, mask and values
broadcast to one shape with a lane per program of the group (a value the same in every program
is still stored by each), flattened program after program, so that a repeated address is
written last by the highest-ranked program and atomics apply in program order. Before it runs,
the launch's memory (:mod:`.memory`) checks the serial order and keeps what a store overwrites.
"""
from __future__ import annotations

import numpy as np

from grader.sandbox.batched.lanes import budget, current


def _full(group, *datas) -> list[np.ndarray]:
    """``datas`` broadcast to one shape whose program axis holds every lane of ``group``."""
    datas = [np.asarray(d) for d in datas]
    block = np.broadcast_shapes(*(d.shape[1:] for d in datas))
    shape = (group.size,) + tuple(block)
    budget(shape, 8)
    return [np.require(d if d.shape == shape else np.broadcast_to(d, shape), requirements=("C", "W")) for d in datas]


def _lane_ranks(group, shape):
    """Each element's rank, made only where asked (a region that keeps ranks)."""
    return lambda: np.repeat(group.ranks, int(np.prod(shape[1:], dtype=np.int64)))


def _width(interpreter, handle) -> int:
    return max(interpreter._get_np_dtype(handle.get_element_ty()).itemsize, 1)


def install(interpreter, tl) -> None:
    Handle, builder = interpreter.TensorHandle, interpreter.InterpreterBuilder
    load, store = builder.create_masked_load, builder.create_masked_store
    rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas
    ops = interpreter._ir.ATOMIC_OP
    commuting_ops = {ops.ADD, ops.AND, ops.OR, ops.XOR, ops.MIN, ops.MAX, ops.UMIN, ops.UMAX}

    class AtomicResult(Handle):
        """What a commuting atomic returned: reading it makes the order of atomics matter."""

        memory = None

        @property
        def data(self):
            if self.memory is not None:
                self.memory.results_read = True
            return self._data

        @data.setter
        def data(self, value):
            self._data = value

    def masked_load(self, ptrs, mask, other, *rest, **kw):
        group = current()
        if group is None:
            return load(self, ptrs, mask, other, *rest, **kw)
        datas = _full(group, ptrs.data, mask.data, *(() if other is None else (other.data,)))
        addresses, active = datas[0], datas[1].astype(bool, copy=False)
        group.memory.access("read", addresses.reshape(-1), active.reshape(-1), _lane_ranks(group, addresses.shape),
                            _width(interpreter, ptrs))
        group.step()
        element = ptrs.get_element_ty()
        np_dtype = interpreter._get_np_dtype(element)
        fill = datas[2] if other is not None else np.zeros(addresses.shape, dtype=np_dtype)
        values = group.memory.gather(addresses, active, fill, np_dtype)
        if values is not None:
            return Handle(values, element)
        other = None if other is None else Handle(datas[2], other.dtype)
        return load(self, Handle(addresses, ptrs.dtype), Handle(active, tl.int1), other, *rest, **kw)

    def masked_store(self, ptrs, value, mask, *rest, **kw):
        group = current()
        if group is None:
            return store(self, ptrs, value, mask, *rest, **kw)
        addresses, values, active = _full(group, ptrs.data, value.data, mask.data)
        active = active.astype(bool, copy=False)
        flat, on = addresses.reshape(-1), active.reshape(-1)
        group.memory.access("write", flat, on, _lane_ranks(group, addresses.shape), values.itemsize)
        group.memory.saved(interpreter, flat, on, values.dtype)
        group.step()
        return store(self, Handle(addresses, ptrs.dtype), Handle(values, value.dtype), Handle(active, tl.int1),
                     *rest, **kw)

    def atomic_rmw(self, op, ptr, val, mask, *rest, **kw):
        group = current()
        if group is None:
            return rmw(self, op, ptr, val, mask, *rest, **kw)
        addresses, values, active = _full(group, ptr.data, val.data, mask.data)
        active = active.astype(bool, copy=False)
        flat, on = addresses.reshape(-1), active.reshape(-1)
        commuting = op in commuting_ops and values.dtype.kind in "iub"
        group.memory.access("atomic", flat, on, _lane_ranks(group, addresses.shape), values.itemsize, commuting)
        group.memory.saved(interpreter, flat, on, values.dtype)
        group.step()
        out = rmw(self, op, Handle(addresses, ptr.dtype), Handle(values, val.dtype), Handle(active, tl.int1),
                  *rest, **kw)
        if not commuting:
            return out
        result = AtomicResult(out.data, out.dtype)
        result.memory = group.memory
        return result

    def atomic_cas(self, ptr, cmp, val, *rest, **kw):
        group = current()
        if group is None:
            return cas(self, ptr, cmp, val, *rest, **kw)
        addresses, compared, values = _full(group, ptr.data, cmp.data, val.data)
        flat = addresses.reshape(-1)
        on = np.ones(flat.shape, dtype=bool)
        group.memory.access("atomic", flat, on, _lane_ranks(group, addresses.shape), values.itemsize)
        group.memory.saved(interpreter, flat, on, values.dtype)
        group.step()
        return cas(self, Handle(addresses, ptr.dtype), Handle(compared, cmp.dtype), Handle(values, val.dtype),
                   *rest, **kw)

    builder.create_masked_load, builder.create_masked_store = masked_load, masked_store
    builder.create_atomic_rmw, builder.create_atomic_cas = atomic_rmw, atomic_cas
