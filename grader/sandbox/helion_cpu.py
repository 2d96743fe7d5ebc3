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
