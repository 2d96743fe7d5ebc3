"""The one dtype table: every tensor dtype a spec may name, and what each part of the grader
needs to know about it.

Plain data keyed by the names jaxtyping and torch share (``"float16"``), so that it imports
without torch or triton: the puzzle definitions, the coordinator and the sandboxed worker all
read it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str                 # torch attribute and jaxtyping name, e.g. "bfloat16"
    triton: str               # Triton's signature spelling, e.g. "bf16"
    is_float: bool
    # The grader's "never written" fill for floats: a NaN whose payload arithmetic does not
    # produce, written through an integer view of the same width (see grader/judge/fence.py).
    nan_view: str | None = None
    nan_bits: int | None = None
    # Whether numpy can view it; the interpreter's bounds check reads outputs through numpy.
    numpy_view: bool = True

    @property
    def itemsize(self) -> int:
        """Bytes per element, from the width in Triton's spelling (fp16: 2; i1, a bool: 1)."""
        bits = int("".join(ch for ch in self.triton if ch.isdigit()) or 32)
        return max(1, bits // 8)


DTYPES: dict[str, DType] = {d.name: d for d in (
    DType("float32", "fp32", True, "int32", 0x7FC5A5A5),
    DType("float16", "fp16", True, "int16", 0x7E5A),
    DType("bfloat16", "bf16", True, "int16", 0x7FC5, numpy_view=False),
    DType("float64", "fp64", True, "int64", 0x7FF8A5A5A5A5A5A5),
    DType("int64", "i64", False),
    DType("int32", "i32", False),
    DType("int16", "i16", False),
    DType("int8", "i8", False),
    DType("uint8", "u8", False),
    DType("bool", "i1", False),
)}

FLOATS = tuple(name for name, d in DTYPES.items() if d.is_float)


def dtype_named(name: str) -> DType:
    """The table's entry, or a ValueError listing what is supported."""
    try:
        return DTYPES[name]
    except KeyError:
        raise ValueError(f"dtype {name!r} is not one of {', '.join(DTYPES)}") from None


def dtype_name(tensor) -> str:
    """A tensor's dtype as this table names it: ``torch.float16`` -> ``"float16"``."""
    return str(tensor.dtype).removeprefix("torch.")


def tensor_bytes(tensor) -> bytes:
    """A tensor's elements in memory order as raw bytes, from any device; 0-d and empty too."""
    import torch  # here, not at the top: the table itself imports without torch
    flat = tensor.detach().contiguous().cpu().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
