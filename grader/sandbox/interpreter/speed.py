"""The interpreter without its repeated set-up: triton.language patched once per launch.

Triton's interpreter patches ``triton.language`` when a launch starts (and restores it when
the launch ends), and again on every call of a ``@triton.jit`` helper, ``tl.sum`` and
``tl.max`` included, though nothing has been restored in between. A softmax over 18 chunks
makes thousands of such calls; the patching was a fifth of its time (measured with cProfile,
triton 3.7.1). Here a helper call patches only the modules that this launch has not patched
yet. A launch, or any other caller, patches as before.

The interpreter also checks every integer add, subtract and multiply for overflow, in int64,
and hands the result to ``device_assert``, which without ``debug`` returns at once, as on a
GPU: the check decides nothing and was a third of a cross-entropy's time (1100 rows). It is
left out where ``debug`` is off.

And the numpy dtype of a Triton dtype, asked for at every operation, is looked up in a table
built once instead of one built per call (a tenth of a cross-entropy's time).
"""
from __future__ import annotations

import sys


def install() -> None:
    """Wrap ``interpreter._patch_lang``, once per process; where Triton's code differs from
    what this expects, calls go through unchanged."""
    from dataclasses import replace

    from triton.runtime import interpreter
    builder = interpreter.interpreter_builder
    if not builder.options.debug and builder.options.sanitize_overflow:
        builder.options = replace(builder.options, sanitize_overflow=False)
    original = interpreter._patch_lang
    if getattr(original, "once_per_launch", False):
        return
    helper_call = getattr(getattr(interpreter, "InterpretedFunction", None), "__call__", None)
    helper_code = getattr(helper_call, "__code__", None)
    patched: set[int] = set()  # the language modules this launch has patched

    def langs(fn) -> set[int]:
        import triton.language as tl
        return {id(v) for v in getattr(fn, "__globals__", {}).values() if v is tl or v is tl.core}

    def patch_lang(fn):
        if helper_code is not None and sys._getframe(1).f_code is helper_code:
            wanted = langs(fn)
            if wanted and wanted <= patched:
                return None  # the helper's caller ignores the scope: its patches are never undone
            scope = original(fn)
            patched.update(wanted)
            return scope
        patched.clear()  # a launch: it restores what it patched when it ends
        scope = original(fn)
        patched.update(langs(fn))
        return scope

    patch_lang.once_per_launch = True
    interpreter._patch_lang = patch_lang
    interpreter._get_np_dtype = _np_dtypes(interpreter._get_np_dtype)


def _np_dtypes(original):
    """``original`` (Triton dtype to numpy dtype), remembered per scalar dtype."""
    import triton.language as tl
    known = {}

    def np_dtype(tt_dtype):
        scalar = tt_dtype.element_ty if isinstance(tt_dtype, tl.block_type) else tt_dtype
        try:
            return known[scalar]
        except KeyError:
            known[scalar] = found = original(scalar)  # raises as Triton does for a dtype it lacks
            return found
        except TypeError:  # unhashable: whatever it is, Triton's own answer
            return original(tt_dtype)
    return np_dtype
