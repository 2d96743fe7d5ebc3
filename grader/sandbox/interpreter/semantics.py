"""The interpreter made to compute what a compiled kernel computes on an sm_90 GPU.

Triton's interpreter runs a kernel's operations with numpy, and numpy's meaning is not always
the GPU's. A kernel built on such a difference would get one verdict here and another on a
GPU, so each known difference is patched to the GPU's meaning (docs/interpreter-vs-gpu.md
lists them all, with what is left and why):

* ``tl.maximum``/``tl.minimum`` without ``propagate_nan``: PTX ``max.f32`` returns the other
  operand when one is NaN (numpy's ``maximum`` returns NaN). Reductions built on them follow.
* float arguments of a kernel are fp32 scalars, as a launch passes them, so ``eps.to(...)``
  and the fp32 promotion of ``x_fp16 * eps`` work as compiled.
* ``tl.clamp`` without ``propagate_nan`` is maxnum then minnum: a NaN becomes ``lo``.
* float -> integer casts truncate as ``cvt.rzi`` does on an H100: 32-bit ones saturate (NaN -> 0),
  8- and 16-bit ones keep the 32-bit result's low bits, 64-bit ones saturate (NaN -> the minimum).
* bf16, which the interpreter keeps as raw 16-bit patterns: arithmetic is done in fp32 and
  rounded to nearest-even, conversions round to nearest-even (``cvt.rn.bf16.f32``), bf16
  constants (``tl.full``, ``tl.zeros``) exist, atomic add works.
* ``tl.dot`` of fp32 inputs at the default precision multiplies TF32 values (the tensor
  cores read 10 bits of mantissa).
* integer ``//`` and ``%`` by zero, and ``and``/``or`` on blocks: :mod:`rules`.
* inline PTX cannot run: an honest :class:`InterpreterLimit`, unless the outputs do not depend on
  it (:mod:`filling`, two stand-ins compared).

Installed once in a ``cpu`` zygote (:func:`install`), before any worker is forked.
"""
from __future__ import annotations

import numpy as np

from grader.sandbox.interpreter import filling, halves
from grader.sandbox.interpreter.limits import InterpreterLimit

_installed = False


# ---- bf16: 16-bit patterns <-> fp32 -------------------------------------------------------------
def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """Round to nearest-even, as ``cvt.rn.bf16.f32``; NaN stays a quiet NaN of the same sign."""
    f = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    quiet = ((u >> 16) | 0x40).astype(np.uint16)
    return np.where(np.isnan(f), quiet, rounded)


def to_tf32(values: np.ndarray) -> np.ndarray:
    """fp32 as the tensor cores read it for a TF32 product: the low 13 mantissa bits dropped."""
    f = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    return (f.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def float_to_int(data: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """Truncate toward zero, as ``cvt.rzi`` does. Measured on an H100 (triton 3.6): 32-bit casts
    saturate and send NaN to 0; 8- and 16-bit ones go through the 32-bit cast and keep its low bits
    (300.0 -> int8 is 44); 64-bit ones saturate and send NaN to the minimum."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.itemsize < 4:  # through the 32-bit cast, then its low bits
        wide = np.int32 if np_dtype.kind == "i" else np.uint32
        return float_to_int(data, wide).astype(np_dtype)
    info = np.iinfo(np_dtype)
    t = np.trunc(np.asarray(data, dtype=np.float64))
    nan = np.isnan(t)
    low, high = t <= info.min, t >= info.max  # compared as floats: 2**63 itself is not an int64
    if np_dtype.itemsize == 8:
        low = low | nan
    safe = np.where(nan | low | high, 0, t).astype(np_dtype)
    return np.where(low, np.array(info.min, np_dtype), np.where(high, np.array(info.max, np_dtype), safe))


# ---- the patches ------------------------------------------------------------------------------
def _is_bf16(handle, tl) -> bool:
    return getattr(getattr(handle, "dtype", None), "scalar", None) == tl.bfloat16


_PATTERNS = np.dtype(np.uint16)  # how the interpreter holds bf16; no float operation sees it otherwise


def _bf16_compute(interpreter, tl, method):
    """``method`` with bf16 operands widened to fp32, and a floating result rounded back."""
    def patched(self, *args):
        for a in args:  # the common case (no bf16) first and cheap: every float operation comes here
            if getattr(getattr(a, "data", None), "dtype", None) is _PATTERNS and _is_bf16(a, tl):
                break
        else:
            return method(self, *args)
        widened = [interpreter.TensorHandle(bf16_to_f32(a.data), tl.float32) if _is_bf16(a, tl) else a
                   for a in args]
        out = method(self, *widened)
        floating = isinstance(out, interpreter.TensorHandle) and out.data.dtype == np.float32  # not a compare
        if floating and out.dtype.scalar == tl.float32:
            return interpreter.TensorHandle(f32_to_bf16(out.data), tl.bfloat16)
        return out
    return patched


_BF16_OPS = ("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem", "create_precise_divf",
             "create_minimumf", "create_minnumf", "create_maximumf", "create_maxnumf", "create_fma",
             "create_exp", "create_exp2", "create_log", "create_log2", "create_sin", "create_cos",
             "create_sqrt", "create_precise_sqrt", "create_rsqrt", "create_erf", "create_floor", "create_ceil",
             "create_clampf") + tuple(f"create_fcmp{p}{c}" for p in "OU" for c in ("LT", "GT", "LE", "GE", "EQ", "NE"))


def _patch_builder(interpreter, tl) -> None:
    builder = interpreter.InterpreterBuilder
    builder.create_maxnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmax)
    builder.create_minnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmin)

    def create_clampf(self, arg, lo, hi, propagate_nans):
        if propagate_nans == tl.PropagateNan.ALL:
            return self.ternary_op(arg, lo, hi, np.clip)
        return self.ternary_op(arg, lo, hi, _clamp_numbers)
    builder.create_clampf = create_clampf
    # `tl.full(..., tl.bfloat16)` and `tl.zeros` ask for a bf16 constant, which the builder lacks
    builder.get_bf16 = lambda self, value: interpreter.TensorHandle(f32_to_bf16(np.array([value])), tl.bfloat16)
    for name in _BF16_OPS:
        setattr(builder, name, _bf16_compute(interpreter, tl, getattr(builder, name)))

    original_cast = builder.cast_impl

    def cast_impl(self, src, dst_type):
        dst_ty = dst_type.scalar
        src_bf16 = src.data.dtype is _PATTERNS and _is_bf16(src, tl)
        to_int = dst_ty.name[0] in "iu" and dst_ty.name != "int1"  # int8..int64, uint8..uint64
        if src.data.dtype == np.float32 and dst_ty.name == "fp16":  # numpy's bits, at the hardware's speed
            return interpreter.TensorHandle(halves.to_half(src.data), dst_ty)
        if src.data.dtype == np.float16 and dst_ty.name == "fp32":
            return interpreter.TensorHandle(halves.from_half(src.data), dst_ty)
        if not src_bf16 and dst_ty.name != "bf16" and not (to_int and src.data.dtype.kind == "f"):
            return original_cast(self, src, dst_type)  # the usual casts, as cheap as before
        data = bf16_to_f32(src.data) if src_bf16 else src.data
        if dst_ty.name == "bf16":
            return interpreter.TensorHandle(f32_to_bf16(data.astype(np.float32)), tl.bfloat16)
        if to_int:
            return interpreter.TensorHandle(float_to_int(data, interpreter._get_np_dtype(dst_ty)), dst_ty)
        return original_cast(self, interpreter.TensorHandle(data, tl.float32), dst_type)
    builder.cast_impl = cast_impl
    for name in ("create_si_to_fp", "create_ui_to_fp", "create_fp_to_si", "create_fp_to_ui", "create_fp_ext",
                 "create_fp_trunc"):
        setattr(builder, name, lambda self, src, dst_type: self.cast_impl(src, dst_type))

    original_dot = builder.create_dot
    widened = halves.Widened()

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        a_ty, b_ty = a.dtype.scalar, b.dtype.scalar
        if a_ty == tl.bfloat16 or b_ty == tl.bfloat16:
            a = interpreter.TensorHandle(bf16_to_f32(a.data), tl.float32) if a_ty == tl.bfloat16 else a
            b = interpreter.TensorHandle(bf16_to_f32(b.data), tl.float32) if b_ty == tl.bfloat16 else b
        elif a_ty == tl.float32 and b_ty == tl.float32 and _is_tf32(interpreter, input_precision):
            a = interpreter.TensorHandle(to_tf32(a.data), tl.float32)
            b = interpreter.TensorHandle(to_tf32(b.data), tl.float32)
        elif a.data.dtype == b.data.dtype == np.float16 and d.data.dtype == np.float32:
            # fp16 products are exact in fp32, which accumulates either way; numpy's matmul of fp16
            # with an fp32 result runs a plain loop, 50 times slower than BLAS on fp32 copies.
            a = interpreter.TensorHandle(widened(a.data), tl.float32)
            b = interpreter.TensorHandle(widened(b.data), tl.float32)
        if d.dtype.scalar == tl.bfloat16:
            acc = interpreter.TensorHandle(bf16_to_f32(d.data), tl.float32)
            out = original_dot(self, a, b, acc, input_precision, max_num_imprecise_acc)
            return interpreter.TensorHandle(f32_to_bf16(out.data), tl.bfloat16)
        return original_dot(self, a, b, d, input_precision, max_num_imprecise_acc)
    builder.create_dot = create_dot

    original_rmw = builder.create_atomic_rmw

    def create_atomic_rmw(self, op, ptr, val, mask, sem, scope):
        if not _is_bf16(val, tl):
            return original_rmw(self, op, ptr, val, mask, sem, scope)
        return _bf16_atomic(interpreter, op, ptr, val, mask)
    builder.create_atomic_rmw = create_atomic_rmw

    def create_inline_asm(self, asm, constraints, values, type, is_pure, pack):
        text = " ".join(str(asm).split())
        what = f"`tl.inline_asm_elementwise` (\"{text[:60]}\") runs PTX, which the interpreter cannot execute"
        stand = filling.current()
        if stand is None or not is_pure:  # no second run to compare, or a side effect no stand-in has
            raise InterpreterLimit(what)
        return filling.stand_in(interpreter, tl, what, values, type, stand, f32_to_bf16)
    builder.create_inline_asm = create_inline_asm


def _clamp_numbers(x, lo, hi):
    """``tl.clamp`` without NaN propagation: maxnum then minnum, so NaN -> lo; sm_90 lowers a
    symmetric clamp (lo = -hi) to ``min.xorsign.abs``, which gives hi with the NaN's sign."""
    out = np.fmin(np.fmax(x, lo), hi)
    symmetric_nan = np.isnan(x) & (lo == -hi)
    return np.where(symmetric_nan, np.copysign(hi, x), out).astype(out.dtype, copy=False)


def _is_tf32(interpreter, precision) -> bool:
    try:
        return precision == interpreter._ir.INPUT_PRECISION.TF32
    except AttributeError:  # another Triton's enum: keep the interpreter's exact product
        return False


def _bf16_atomic(interpreter, op, ptr, val, mask):
    """bf16 atomics (sm_90 has ``atom.add.bf16``), which the interpreter's C++ refuses: lane by
    lane, in order, as its programs run one at a time anyway."""
    import triton.language as tl
    ops = interpreter._ir.ATOMIC_OP
    if op not in (ops.FADD, ops.XCHG):
        raise InterpreterLimit(f"a bf16 atomic other than add or exchange ({op})")
    addresses = np.atleast_1d(ptr.data).ravel()
    values = np.broadcast_to(val.data, np.shape(ptr.data)).ravel()
    active = np.broadcast_to(mask.data, np.shape(ptr.data)).ravel()
    old = np.zeros(addresses.shape, dtype=np.uint16)
    one, load, store = np.ones(1, bool), interpreter._interpreter.load, interpreter._interpreter.store
    for i in np.flatnonzero(active):
        lane = addresses[i:i + 1]
        old[i] = load(lane, one, np.zeros(1, np.uint16), _PATTERNS)[0]
        value = values[i:i + 1]
        store(lane, value if op == ops.XCHG else f32_to_bf16(bf16_to_f32(old[i:i + 1]) + bf16_to_f32(value)), one)
    return interpreter.TensorHandle(old.reshape(np.shape(ptr.data)), tl.bfloat16)


def _patch_reductions(interpreter, tl) -> None:
    """``tl.sum``/``tl.cumsum`` of bf16 run on the raw patterns: widen them, round the result."""
    def widened(cls):
        original = cls.apply_impl

        def apply_impl(self, input):
            if not any(t.dtype == tl.bfloat16 for t in input) or self.combine_fn not in (
                    tl.standard._sum_combine, getattr(tl.standard, "_prod_combine", None)):
                return original(self, input)
            as_f32 = tuple(tl.core.tensor(interpreter.TensorHandle(bf16_to_f32(t.handle.data), tl.float32),
                                          t.type.with_element_ty(tl.float32)) for t in input)
            out = original(self, as_f32)
            single = not isinstance(out, (list, tuple))
            rounded = [tl.core.tensor(interpreter.TensorHandle(f32_to_bf16(o.handle.data), tl.bfloat16),
                                      o.type.with_element_ty(tl.bfloat16) if o.type.is_block() else tl.bfloat16)
                       for o in ([out] if single else out)]
            return rounded[0] if single else rounded
        cls.apply_impl = apply_impl
    widened(interpreter.ReduceOps)
    widened(interpreter.ScanOps)


def _patch_arguments(interpreter, tl) -> None:
    """A float argument reaches a compiled kernel as an fp32 scalar, not a Python constant; an
    int in [2**31, 2**32) as an int64 (Triton types it so; the interpreter held it as uint32)."""
    original = interpreter._implicit_cvt

    def scalar(value, np_dtype, tl_dtype):
        return tl.tensor(interpreter.TensorHandle(np.array([value], dtype=np_dtype), tl_dtype), tl_dtype)

    def implicit_cvt(arg):
        if isinstance(arg, float):
            return scalar(arg, np.float32, tl.float32)
        if isinstance(arg, int) and not isinstance(arg, bool) and 2 ** 31 <= arg < 2 ** 32:
            return scalar(arg, np.int64, tl.int64)
        return original(arg)
    interpreter._implicit_cvt = implicit_cvt


def install() -> None:
    """Patch this process's interpreter to the GPU's semantics (once; only under TRITON_INTERPRET)."""
    global _installed
    if _installed:
        return
    import triton.language as tl
    from triton.runtime import interpreter

    from grader.sandbox.interpreter import libdevice, rules
    _patch_builder(interpreter, tl)
    _patch_reductions(interpreter, tl)
    _patch_arguments(interpreter, tl)
    libdevice.install(interpreter)
    rules.install(interpreter)  # integer division by zero, the truth of a block
    _installed = True
