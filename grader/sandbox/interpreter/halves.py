"""fp32 <-> fp16 conversions as numpy makes them, at the hardware's speed.

numpy converts between float32 and float16 in software, element by element: 2 ns an element, and
a FlashAttention case converts every probability tile to fp16 and every fp16 tile back for its dot
(half of puzzle 32's long case). torch converts with the CPU's conversion instructions, three to six
times faster, and gives the same bits for every finite value and infinity (round to nearest even,
subnormals kept), checked over every fp16 and ten million random fp32 patterns
(tests/test_semantics.py). They part only on NaN payloads and in the warning numpy gives for an
overflow: those elements are converted by numpy, so the result and the warnings are numpy's own.
"""
from __future__ import annotations

import numpy as np

_SMALL = 4096  # elements below which numpy's own conversion is as fast


def _torch():
    import torch
    return torch


def to_half(data: np.ndarray) -> np.ndarray:
    """``data.astype(np.float16)`` for float32 ``data``, bit for bit and warning for warning."""
    data = np.asarray(data)
    if data.dtype != np.float32 or data.size < _SMALL or not (data.flags.c_contiguous and data.flags.writeable):
        return data.astype(np.float16)  # (numpy keeps another layout; a reduction's order follows it)
    torch = _torch()
    out = torch.from_numpy(data).to(torch.float16).numpy().reshape(data.shape)
    odd = ~(np.abs(data) <= 65504.0)  # NaN, and what overflows fp16: numpy's payloads and warnings
    if odd.any():
        out = out.copy() if not out.flags.writeable else out
        out[odd] = data[odd].astype(np.float16)
    return out


def from_half(data: np.ndarray) -> np.ndarray:
    """``data.astype(np.float32)`` for float16 ``data``, bit for bit (numpy keeps a NaN's payload)."""
    data = np.asarray(data)
    if data.dtype != np.float16 or data.size < _SMALL or not (data.flags.c_contiguous and data.flags.writeable):
        return data.astype(np.float32)
    torch = _torch()
    out = torch.from_numpy(data).to(torch.float32).numpy().reshape(data.shape)
    nan = np.isnan(out)  # (fp16's own isnan is software: slow)
    if nan.any():
        out = out.copy() if not out.flags.writeable else out
        out[nan] = data[nan].astype(np.float32)
    return out


class Widened:
    """fp16 operands of ``tl.dot`` as fp32, remembered: a kernel multiplies the same tile in every
    step of its loop (FlashAttention's K and V, ``tl.trans(k)`` made anew each time as a view of
    one array). Keyed by the memory a view shows (its base array, kept alive here, and its
    address, shape and strides), so a new view of the same tile finds it; the interpreter never
    writes into a block it loaded or computed."""

    def __init__(self, size: int = 16) -> None:
        self.size, self.kept = size, {}

    def __call__(self, data: np.ndarray) -> np.ndarray:
        base = data if data.base is None else data.base
        key = (id(base), data.__array_interface__["data"][0], data.shape, data.strides)
        found = self.kept.get(key)
        if found is not None and found[0] is base:
            return found[1]
        wide = from_half(data)
        if len(self.kept) >= self.size:
            self.kept.pop(next(iter(self.kept)))
        self.kept[key] = (base, wide)
        return wide
