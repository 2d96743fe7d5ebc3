"""The batched engine installed in a ``cpu`` zygote, once, after the grader's semantics.

The builder's class gets the batched operations (each the serial one when no batched run is
active), the interpreter's tensor methods that hand Python a value (``__bool__``, ``__index__``,
``str``, ``.T``) answer for every lane at once, ``tl.range``, ``tl.static_range`` and
``tl.static_print`` become the batched loop and print, and learner modules get the same
``range`` and ``print`` (:mod:`grader.sandbox.learner_import`'s globals), so that a kernel's
loops and prints are batched wherever they are written.
"""
from __future__ import annotations

import numpy as np

from grader.sandbox.batched import accesses, control, pointers, reduce, shapes
from grader.sandbox.batched.lanes import current

_installed = False


def learner_globals() -> dict:
    """Names a learner module is given: the kernel's ``range`` and ``print`` of a batched run."""
    return {"range": control.loop_range, "print": control.kernel_print}


def _transpose(tl, interpreter):
    def T(self):  # noqa: N802 (Triton's name)
        if current() is None:
            data = np.transpose(self.handle.data)
        else:
            data = np.asarray(self.handle.data)
            data = np.transpose(data, (0,) + tuple(range(data.ndim - 1, 0, -1)))
        shape = list(self.type.shape)
        shape[-1], shape[-2] = shape[-2], shape[-1]
        return tl.core.tensor(interpreter.TensorHandle(data, self.handle.dtype),
                              tl.core.block_type(self.dtype, shape))
    return property(T)


def _patch_tensor(interpreter, tl) -> None:
    """The tensor methods Triton sets at each launch, set batched right after it, in its scope."""
    original = interpreter._patch_lang_tensor

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", control.index_of)
        scope.set_attr(tensor, "__str__", control.text_of)
        scope.set_attr(tensor, "__repr__", lambda self: control.text_of(self, repr))
        scope.set_attr(tensor, "T", _transpose(tl, interpreter))
    interpreter._patch_lang_tensor = patch_lang_tensor

    core = interpreter._patch_lang_core

    def patch_lang_core(lang, scope):
        core(lang, scope)
        for name in ("range", "static_range"):
            scope.set_attr(lang, name, control.loop_range)
        scope.set_attr(lang, "static_print", control.kernel_print)
    interpreter._patch_lang_core = patch_lang_core


def install() -> None:
    global _installed
    if _installed:
        return
    import triton.language as tl
    from triton.runtime import interpreter
    shapes.install(interpreter, tl)
    accesses.install(interpreter, tl)
    pointers.install(interpreter, tl)
    reduce.install(interpreter, tl)
    control.install(interpreter)
    _patch_tensor(interpreter, tl)
    _installed = True
