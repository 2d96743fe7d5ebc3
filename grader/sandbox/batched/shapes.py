"""The interpreter's operations that read or make a block's shape, given the program axis.

Elementwise operations need nothing: numpy broadcasts a value of one lane against one of ``P``,
and each lane computes what the serial interpreter computes for its program, in the same numpy
operation. The operations here take an axis or a shape, so each is the serial one with the axis
shifted past the program axis, or its shape prefixed by the lanes. Each patch runs the serial
method unchanged when no batched run is active, and is installed on the builder's class once
(:func:`install`), beneath the bounds check, which patches the builder instance.

A method of the builder that is neither elementwise nor patched here (a new one in another
Triton) raises :class:`Unbatchable` in a batched run: the launch runs serially, and says so.
"""
from __future__ import annotations

import numpy as np

from grader.sandbox.batched.lanes import Unbatchable, budget, current, lead

# Builder methods whose meaning is elementwise (or that make uniform scalars): batched as they are.
ELEMENTWISE = {
    "binary_op", "unary_op", "ternary_op", "cast_impl", "create_fp_to_fp", "create_bitcast", "create_idiv",
    "create_ashr", "create_umulhi", "create_fma", "create_fabs", "create_erf", "create_rsqrt", "create_select",
    "create_clampf", "create_addptr", "create_int_to_ptr", "create_ptr_to_int", "create_split", "create_dot",
    "create_extern_elementwise", "create_inline_asm", "create_load", "create_store", "create_barrier",
    "create_tensor_pointer_load", "create_tensor_pointer_store", "create_descriptor_load",
    "create_descriptor_store", "create_get_num_programs", "create_assume", "create_int_cast", "create_fneg",
    "create_approx_divf", "create_precise_divf", "create_precise_sqrt", "create_sqrt", "create_iabs",
}
ELEMENTWISE_PREFIXES = ("create_f", "create_icmp", "create_min", "create_max", "create_s", "create_u",
                        "create_cos", "create_sin", "create_exp", "create_log", "create_floor", "create_ceil",
                        "create_add", "create_sub", "create_mul", "create_and", "create_or", "create_xor",
                        "create_shl", "create_lshr", "create_udiv", "create_urem", "get_")
# Patched elsewhere in this package (memory, pointers, reductions, printing).
ELSEWHERE = {"create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas",
             "create_make_block_ptr", "create_advance", "create_make_tensor_descriptor", "create_print",
             "create_assert"}
UNBATCHED = {"create_dot_scaled", "create_atomic_load", "create_atomic_store", "create_atomic_poll",
             "create_descriptor_gather", "create_descriptor_scatter"}


def _program_id(interpreter, tl):
    def create_get_program_id(self, axis):
        group = current()
        if group is None:
            return original(self, axis)
        return interpreter.TensorHandle((group.x, group.y, group.z)[axis].astype(np.int32), tl.int32)
    original = interpreter.InterpreterBuilder.create_get_program_id
    return create_get_program_id


def _np(interpreter, dtype):
    return interpreter._get_np_dtype(dtype)


def _patches(interpreter, tl) -> dict:
    Handle, builder = interpreter.TensorHandle, interpreter.InterpreterBuilder
    serial = {name: getattr(builder, name) for name in (
        "create_make_range", "create_splat", "create_broadcast", "create_expand_dims", "create_reshape",
        "create_trans", "create_cat", "create_join", "create_histogram", "create_gather", "create_unsplat")
        if hasattr(builder, name)}

    def batched(name):
        def decorate(fn):
            original = serial[name]

            def method(self, *args, **kwargs):
                return original(self, *args, **kwargs) if current() is None else fn(self, *args, **kwargs)
            method.__name__ = name
            return method
        return decorate

    @batched("create_make_range")
    def make_range(self, ret_ty, start, stop):
        return Handle(np.arange(start, stop, dtype=np.int32)[None], tl.int32)

    @batched("create_splat")
    def splat(self, ret_ty, arg):
        shape = tuple(ret_ty.shape)
        data = np.asarray(arg.data)
        rows = lead(data)
        budget((rows,) + shape, data.itemsize)
        if data.ndim > 1:  # a block of one element, made a block of ret_ty's shape
            data = data.reshape(rows, -1)[:, 0]
        out = np.empty((rows,) + shape, dtype=_np(interpreter, arg.dtype))
        out[...] = data.reshape((rows,) + (1,) * len(shape))
        return Handle(out, arg.dtype.scalar)

    @batched("create_unsplat")
    def unsplat(self, arg):
        data = np.asarray(arg.data)
        return Handle(np.ascontiguousarray(data.reshape(lead(data), -1)[:, 0]).astype(_np(interpreter, arg.dtype)),
                      arg.dtype.scalar)

    @batched("create_broadcast")
    def broadcast(self, arg, shape):
        data = np.asarray(arg.data)
        return Handle(np.broadcast_to(data, (lead(data),) + tuple(shape)), arg.dtype.scalar)

    @batched("create_expand_dims")
    def expand_dims(self, arg, axis):
        data = np.asarray(arg.data)
        axis = axis if axis >= 0 else axis + data.ndim  # -1 appends: the last of the new dims
        return Handle(np.expand_dims(data, axis + 1), arg.dtype.scalar)

    @batched("create_reshape")
    def reshape(self, arg, shape, allow_reorder):
        data = np.asarray(arg.data)
        return Handle(data.reshape((lead(data),) + tuple(shape)), arg.dtype.scalar)

    @batched("create_trans")
    def trans(self, arg, perm):
        return Handle(np.transpose(arg.data, (0,) + tuple(p + 1 for p in perm)), arg.dtype.scalar)

    @batched("create_cat")
    def cat(self, lhs, rhs):
        a, b = _same_lanes(lhs.data, rhs.data)
        return Handle(np.concatenate([a, b], axis=1), lhs.dtype.scalar)

    @batched("create_join")
    def join(self, lhs, rhs):
        a, b = _same_lanes(lhs.data, rhs.data)
        return Handle(np.stack([a, b], axis=-1), lhs.dtype.scalar)

    @batched("create_gather")
    def gather(self, src, indices, axis):
        a, b = _same_lanes(src.data, indices.data)
        return Handle(np.take_along_axis(a, b, axis=axis + 1), src.dtype.scalar)

    @batched("create_histogram")
    def histogram(self, data, bins, mask=None, *rest):
        values = np.asarray(data.data)
        keep = np.ones(values.shape, dtype=bool) if mask is None else \
            np.broadcast_to(np.asarray(mask.data, dtype=bool), values.shape)
        per_lane = []
        for lane in range(lead(values)):  # the serial method on each lane's block, as it would run
            one = serial["create_histogram"](self, Handle(values[lane], data.dtype), bins,
                                             *(() if mask is None else (Handle(keep[lane], tl.int1),)), *rest)
            per_lane.append(np.asarray(one.data))
        return Handle(np.stack(per_lane), tl.int32)

    out = {"create_get_program_id": _program_id(interpreter, tl), "create_make_range": make_range,
           "create_splat": splat, "create_broadcast": broadcast, "create_expand_dims": expand_dims,
           "create_reshape": reshape, "create_trans": trans, "create_cat": cat, "create_join": join,
           "create_gather": gather, "create_histogram": histogram}
    if "create_unsplat" in serial:
        out["create_unsplat"] = unsplat
    return out


def _same_lanes(a, b):
    """Two batched values with the same number of lanes (one of 1 broadcast to the other's)."""
    a, b = np.asarray(a), np.asarray(b)
    rows = max(lead(a), lead(b))
    return (np.broadcast_to(a, (rows,) + a.shape[1:]) if lead(a) != rows else a,
            np.broadcast_to(b, (rows,) + b.shape[1:]) if lead(b) != rows else b)


def _refused(name: str, original):
    def method(self, *args, **kwargs):
        if current() is not None and current().size > 1:
            raise Unbatchable(f"`{name}`, which the batched engine does not run")
        return original(self, *args, **kwargs)
    method.__name__ = name
    return method


def install(interpreter, tl) -> None:
    """Patch the builder's class: the shape operations batched, and every method the engine does
    not know refused in a batched run."""
    builder = interpreter.InterpreterBuilder
    patched = _patches(interpreter, tl)
    for name, method in patched.items():
        setattr(builder, name, method)
    for name in dir(builder):
        if not name.startswith("create_") or name in patched or name in ELSEWHERE or name in ELEMENTWISE:
            continue
        if name in UNBATCHED or not name.startswith(ELEMENTWISE_PREFIXES):
            setattr(builder, name, _refused(name, getattr(builder, name)))
