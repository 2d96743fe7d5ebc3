"""Reductions and scans over a block, given the program axis.

The interpreter reduces with numpy along the block's axis (``np.sum``, ``np.nanmax``,
``np.cumsum``), and a combine function of the kernel's own element after element. Batched, the
numpy axis is one further along, and numpy reduces each lane's slice as it reduced the serial
block: the same pairwise sums along a contiguous axis, the same running sums across the others.
A combine function of the kernel's own runs once per element position, for every lane at once.

Each method below replaces the interpreter's own on its class (:func:`install`), and calls it back
when no batched run is active; the grader's bf16 widening and Helion's NaN-propagating maxima,
which wrap ``apply_impl`` on the same classes, reach them as they reached Triton's.
"""
from __future__ import annotations

import numpy as np

from grader.sandbox.batched.lanes import current, lead


def _block_axes(data: np.ndarray) -> tuple[int, ...]:
    return tuple(range(1, np.ndim(data)))


def _classes(interpreter, tl):
    Handle = interpreter.TensorHandle

    def to_tensor(ret, dtype):
        ret = np.asarray(ret).astype(interpreter._get_np_dtype(dtype))
        if ret.ndim > 1:
            return tl.core.tensor(Handle(ret, dtype.scalar), tl.block_type(dtype, list(ret.shape[1:])))
        return tl.core.tensor(Handle(ret.reshape(-1), dtype.scalar), dtype)

    def combined(fn, accumulated, incoming):
        ret = fn(*accumulated, *incoming)
        return (ret,) if not isinstance(ret, tuple) else ret

    def value_of(item):
        return np.asarray(item.handle.data) if isinstance(item, tl.core.tensor) else item

    class BatchedReduce(interpreter.ReduceOps):
        def to_tensor(self, ret, dtype):
            return to_tensor(ret, dtype)

        def sum(self, input):
            data = input.handle.data
            axis = _block_axes(data) if self.axis is None else self.axis + 1
            return to_tensor(np.sum(data, axis=axis, keepdims=self.keep_dims), input.dtype)

        def min_max(self, input, val_reduce_op, idx_reduce_op=None):
            input = input[0] if isinstance(input, tuple) else input
            data = np.asarray(input.handle.data)
            keep = self.keep_dims
            if self.axis is None:
                flat = data.reshape(lead(data), -1)
                shape = (lead(data),) + (1,) * (data.ndim - 1)
                val = None if val_reduce_op is None else val_reduce_op(data, axis=_block_axes(data), keepdims=keep)
                idx = None if idx_reduce_op is None else idx_reduce_op(flat, axis=1)
                if idx is not None and keep:
                    idx = idx.reshape(shape)
            else:
                val = None if val_reduce_op is None else val_reduce_op(data, axis=self.axis + 1, keepdims=keep)
                idx = None if idx_reduce_op is None else idx_reduce_op(data, axis=self.axis + 1, keepdims=keep)
            out = [to_tensor(val, input.dtype)] if val is not None else []
            out += [to_tensor(idx, tl.int32)] if idx is not None else []
            return tuple(out) if len(out) > 1 else out[0]

        def generic_reduce(self, input):
            datas = [np.asarray(t.handle.data) for t in input]
            if self.axis is None:  # every element of the block, as the serial interpreter flattens it
                datas = [d.reshape(lead(d), -1) for d in datas]
            axis = 0 if self.axis is None else self.axis
            rows = max(lead(d) for d in datas)
            datas = [np.broadcast_to(d, (rows,) + d.shape[1:]) for d in datas]
            block = datas[0].shape[1:]
            kept = block[:axis] + block[axis + 1:]
            outs = [np.zeros((rows,) + kept, dtype=d.dtype) for d in datas]
            for i in range(int(np.prod(block, dtype=np.int64))):
                index = np.unravel_index(i, block)
                at = (slice(None),) + index[:axis] + index[axis + 1:]
                incoming = tuple(to_tensor(d[(slice(None),) + index], t.dtype) for d, t in zip(datas, input))
                if index[axis] == 0:
                    for out, item in zip(outs, incoming):
                        out[at] = value_of(item)
                    continue
                accumulated = tuple(to_tensor(o[at], t.dtype) for o, t in zip(outs, input))
                for out, item in zip(outs, combined(self.combine_fn.fn, accumulated, incoming)):
                    out[at] = value_of(item)
            ret = []
            for out, t in zip(outs, input):
                if self.keep_dims:
                    out = np.expand_dims(out, axis + 1) if self.axis is not None else \
                        out.reshape((rows,) + (1,) * len(t.shape))
                ret.append(to_tensor(out, t.dtype))
            return ret

    class BatchedScan(interpreter.ScanOps):
        """``axis`` is held one further along (see :func:`install`)."""

        def check_axis(self, shape, axis):
            if axis is not None and axis - 1 >= len(shape):
                raise ValueError(f"axis {axis - 1} out of bounds for shape {shape}")

        def to_tensor(self, ret, dtype):
            return to_tensor(ret, dtype)

        def generic_scan(self, input):
            datas = [np.asarray(t.handle.data) for t in input]
            rows = max(lead(d) for d in datas)
            datas = [np.broadcast_to(d, (rows,) + d.shape[1:]) for d in datas]
            block, axis = datas[0].shape[1:], self.axis - 1
            outs = [np.zeros((rows,) + block, dtype=d.dtype) for d in datas]
            for i in range(int(np.prod(block, dtype=np.int64))):
                index = np.unravel_index(i, block)
                at = (slice(None),) + index
                incoming = tuple(to_tensor(d[at], t.dtype) for d, t in zip(datas, input))
                if index[axis] == 0:
                    for out, item in zip(outs, incoming):
                        out[at] = value_of(item)
                    continue
                before = (slice(None),) + tuple(v - 1 if k == axis else v for k, v in enumerate(index))
                accumulated = tuple(to_tensor(o[before], t.dtype) for o, t in zip(outs, input))
                for out, item in zip(outs, combined(self.combine_fn.fn, accumulated, incoming)):
                    out[at] = value_of(item)
            return [to_tensor(out, t.dtype) for out, t in zip(outs, input)]

    return BatchedReduce, BatchedScan


def install(interpreter, tl) -> None:
    """The interpreter's reduce and scan classes made to reduce each lane's block in a batched run.
    A batched scan holds its axis one further along from the start (its numpy calls use it as it
    is), and takes it back where it is checked against the block's own shape."""
    batched_reduce, batched_scan = _classes(interpreter, tl)
    for cls, batched, names in (
            (interpreter.ReduceOps, batched_reduce, ("to_tensor", "sum", "min_max", "generic_reduce")),
            (interpreter.ScanOps, batched_scan, ("to_tensor", "generic_scan", "check_axis"))):
        for name in names:
            setattr(cls, name, _either(getattr(cls, name), getattr(batched, name)))
    scan_init = interpreter.ScanOps.__init__

    def init(self, axis, combine_fn, reverse):
        scan_init(self, axis + 1 if current() is not None else axis, combine_fn, reverse)
    interpreter.ScanOps.__init__ = init


def _either(serial, batched):
    def method(self, *args, **kwargs):
        return (serial if current() is None else batched)(self, *args, **kwargs)
    method.__name__ = serial.__name__
    return method
