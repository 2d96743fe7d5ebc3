"""What Helion's interpreter needs from torch's CPU build, and torch 2.13 CPU lacks.

In Helion's interpreter, ``hl.dot`` (and ``torch.addmm``/``torch.baddbmm`` in a kernel) on fp16 or
bf16 tiles with an fp32 accumulator calls ``torch.mm(a, b, out_dtype=torch.float32)`` (or
``torch.bmm``). torch's CPU build has no kernel for ``aten::mm.dtype`` or ``aten::bmm.dtype``, so
every matmul and attention kernel would raise NotImplementedError, right or wrong. A GPU's dot
multiplies the half-precision values exactly and sums in fp32: upcasting both operands and
multiplying in ``out_dtype`` computes the same.
"""
from __future__ import annotations

_library = None  # torch keeps a registration only while its Library object lives


def register_mixed_dots(torch) -> None:
    """Give ``aten::mm.dtype`` and ``aten::bmm.dtype`` a CPU kernel, once per process."""
    global _library
    if _library is not None:
        return
    library = torch.library.Library("aten", "IMPL")
    library.impl("mm.dtype", lambda a, b, out_dtype: torch.mm(a.to(out_dtype), b.to(out_dtype)), "CPU")
    library.impl("bmm.dtype", lambda a, b, out_dtype: torch.bmm(a.to(out_dtype), b.to(out_dtype)), "CPU")
    _library = library


# Triton's interpreter runs a kernel's Python and calls the @triton.jit functions it reaches only
# as InterpretedFunctions, which is what @triton.jit makes under TRITON_INTERPRET=1. Helion refuses
# that switch beside its own, so in its worker triton.language's functions (tl.sum, tl.max...) and
# the helpers Helion's Triton calls (torch._inductor's triton_helpers, Helion's own helpers) are
# JITFunctions, and the tiled run raises "Cannot call @triton.jit'd outside of the scope of a
# kernel" at the first reduction. Below, each launch sees them as the interpreter needs them.

def _interpretable(fn, memo: dict):
    """``fn`` with the @triton.jit functions it names (directly, or as attributes of a module of
    helpers) rebound as InterpretedFunctions; triton.language itself is left to the interpreter."""
    import types

    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction
    if id(fn) in memo:
        return memo[id(fn)]
    scope: dict = {}
    new = memo[id(fn)] = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__module__, new.__qualname__ = fn.__module__, fn.__qualname__

    def rebound(value):
        if isinstance(value, JITFunction):
            if ("jit", id(value)) not in memo:
                memo["jit", id(value)] = InterpretedFunction(_interpretable(value.fn, memo))
            return memo["jit", id(value)]
        if isinstance(value, types.ModuleType) and not value.__name__.startswith("triton.language") \
                and any(isinstance(v, JITFunction) for v in vars(value).values()):
            if ("module", id(value)) not in memo:
                proxy = memo["module", id(value)] = types.ModuleType(value.__name__)
                for name, member in list(vars(value).items()):
                    setattr(proxy, name, rebound(member) if isinstance(member, JITFunction) else member)
            return memo["module", id(value)]
        return value
    scope.update({name: rebound(value) for name, value in fn.__globals__.items()})
    return new


_fast_reductions = False


def numpy_nan_reductions(interpreter) -> None:
    """Helion lowers ``torch.amax``/``amin`` (and ``hl.reduce``-free maxima) to ``tl.reduce`` with
    its own NaN-propagating combine function, which Triton's interpreter, knowing only tl.max's,
    runs element by element in Python: 2.5 s of puzzle 42's 4 s in the interpreter. Here that
    combine is reduced by numpy instead: ``np.max``/``np.min`` return NaN where any element is NaN,
    as ``max.NaN.f32`` does, and nothing else differs. Installed once per worker."""
    global _fast_reductions
    if _fast_reductions:
        return
    import numpy as np
    from helion.runtime.triton import helpers
    fast = {}
    for name, op in (("_maximum_propagate_nan", np.max), ("_minimum_propagate_nan", np.min)):
        jit = getattr(helpers, name, None)
        if jit is not None:
            fast[jit.fn.__code__] = op  # what its interpreted copies share (see _interpretable)
    original = interpreter.ReduceOps.apply_impl

    def apply_impl(self, input):
        op = fast.get(getattr(getattr(self.combine_fn, "fn", None), "__code__", None))
        if op is None or len(input) != 1 or input[0].handle.data.size == 0:
            return original(self, input)
        return self.min_max(input[0], val_reduce_op=op)
    interpreter.ReduceOps.apply_impl = apply_impl
    _fast_reductions = True


def interpreted_launch(kernel, grid, args, options) -> None:
    """Run one launch of Helion's generated ``kernel`` (a JITFunction) in Triton's interpreter,
    with the grader's GPU semantics and libdevice (as the Triton puzzles' interpreter has them),
    its programs batched (:mod:`grader.sandbox.batched`)."""
    import sys

    import triton.experimental.gluon.nvidia.hopper  # noqa: F401 (asserts JITFunctions on import: not during the swap)
    from triton.runtime import interpreter
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    from grader.sandbox.batched import setup as batched
    from grader.sandbox.batched.engine import Batched
    from grader.sandbox.interpreter import semantics
    from grader.sandbox.world import in_memory
    args = in_memory(args)  # the host code's GPU tensors as their memory, which the interpreter reads and writes
    semantics.install()
    numpy_nan_reductions(interpreter)
    batched.install()
    swapped = [(module, name, value) for key, module in list(sys.modules.items())
               if key.startswith("triton.language") and module is not None
               for name, value in list(vars(module).items()) if isinstance(value, JITFunction)]
    for module, name, value in swapped:
        setattr(module, name, InterpretedFunction(value.fn))
    try:
        with Batched():
            InterpretedFunction(_interpretable(kernel.fn, {}))[grid](*args, **options)
    finally:
        for module, name, value in swapped:
            setattr(module, name, value)
