"""Two more places where the interpreter is made to agree with a compiled kernel.

* **Integer division and remainder by zero.** numpy gives 0 (with a warning); a GPU gives
  whatever its division sequence ends with. Measured on an H100: ``7 // 0`` is -1. The SASS
  that ptxas writes for ``div``/``rem`` ends with a fix-up for a zero divisor that sets every
  bit of the result (``LOP3.LUT r, RZ, b, RZ, 0x33`` = ``~b`` = ``~0``), so both ``//`` and
  ``%`` by zero give all bits set: -1 signed, the maximum unsigned, whatever the dividend.
  The ``%`` value is *assumed* from that sequence; ``benchmarks/interpreter_vs_gpu.py``
  ("int32 % 0") confirms it on a GPU.
* **``and`` / ``or`` / ``not`` on a block.** The interpreter holds a block's truth as True, so
  ``(a < n) and (b < m)`` keeps only the second mask; compiled, Triton applies it elementwise.
  Neither is what a learner meant to write: the interpreter refuses it (:class:`BlockTruth`),
  with the line and the operator to use. A scalar (``pid == 0 and n > 0``) keeps its truth.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from grader.sandbox.batched.lanes import one_value
from grader.sandbox.interpreter.limits import BlockTruth


def all_bits(dtype: np.dtype):
    """The value with every bit set: -1 for a signed integer, the maximum for an unsigned one."""
    dtype = np.dtype(dtype)
    return np.array(-1 if dtype.kind == "i" else np.iinfo(dtype).max, dtype=dtype)


def divide(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Integer ``//`` as compiled: truncating (the interpreter's own formula), and all bits set
    where the divisor is zero."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    zero = rhs == 0
    safe = np.where(zero, 1, rhs).astype(rhs.dtype, copy=False)
    with np.errstate(all="ignore"):
        out = (lhs - np.fmod(lhs, safe)) // safe
    return np.where(zero, all_bits(out.dtype), out).astype(out.dtype, copy=False) if zero.any() else out


def remainder(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Integer ``%`` as compiled: the sign of the dividend, and all bits set for a zero divisor."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    zero = rhs == 0
    safe = np.where(zero, 1, rhs).astype(rhs.dtype, copy=False)
    with np.errstate(all="ignore"):
        out = np.fmod(lhs, safe)
    return np.where(zero, all_bits(out.dtype), out).astype(out.dtype, copy=False) if zero.any() else out


def _patch_division(interpreter) -> None:
    builder = interpreter.InterpreterBuilder

    def create_idiv(self, lhs, rhs):
        return interpreter.TensorHandle(divide(lhs.data, rhs.data), lhs.dtype.scalar)

    def create_irem(self, lhs, rhs):
        return self.binary_op(lhs, rhs, remainder)
    builder.create_idiv = create_idiv
    for name in ("create_sdiv", "create_udiv"):
        setattr(builder, name, create_idiv)
    for name in ("create_srem", "create_urem"):
        setattr(builder, name, create_irem)


_LIBRARY: tuple[str, ...] = ()  # Triton's own folder: its code asks a block's truth (`other if other else None`)


def block_truth(tensor) -> bool:
    """``bool(tensor)`` in a kernel: a scalar's truth; a block's is refused where the kernel's
    own code asks it, and True (the interpreter's answer) where Triton's code does."""
    if tensor.type.is_block() and not sys._getframe(1).f_code.co_filename.startswith(_LIBRARY):
        shape = tuple(int(d) for d in tensor.type.shape)
        raise BlockTruth(f"the truth of a block (shape {shape}) was asked, by `and`, `or`, `not`, `if` or "
                         f"`while` on it: in the interpreter a block counts as True, so `a and b` keeps only `b`, "
                         f"while compiled it is elementwise. Combine masks with `&`, `|` and `~`: "
                         f"`(a < n) & (b < m)`")
    if tensor.type.is_block():
        return True
    return bool(one_value(tensor.handle.data,
                          "an `if`, `while`, `and` or `or` on a value that differs between programs"))


def _patch_truth(interpreter) -> None:
    """The interpreter sets ``tensor.__bool__`` at each launch (``_patch_lang_tensor``): ours
    is set right after it, in the same scope, so it is undone with the launch's patches."""
    global _LIBRARY
    import triton
    _LIBRARY = (os.path.dirname(triton.__file__) + os.sep,)
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None:  # another Triton's interpreter: its own truth stays (tests/test_semantics.py says which)
        return

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__bool__", block_truth)
    interpreter._patch_lang_tensor = patch_lang_tensor


def install(interpreter) -> None:
    _patch_division(interpreter)
    _patch_truth(interpreter)
