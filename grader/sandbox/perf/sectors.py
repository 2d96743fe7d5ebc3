"""Where a warp's lanes land, and which tensor-core rate a ``tl.dot`` runs at: the two facts of
``--perf``'s counts that depend on the GPU rather than on the interpreter (inside an
interpreter worker; :mod:`.record` counts with them)."""
from __future__ import annotations

import numpy as np

SECTOR = 32  # bytes: the unit the memory system moves between L2 and the SMs


def warp_sectors(addresses: np.ndarray, lanes: np.ndarray, itemsize: int) -> int:
    """The 32-byte sectors one access moves, warp by warp, as Triton lays its lanes out: an axis
    along which the addresses are contiguous becomes the fastest (Triton's coalescing pass), each
    thread takes 16 bytes of it, and a warp is 32 threads; with no such axis, each thread one
    element in the block's own order. Lanes the mask turns off move nothing."""
    order, vector = addresses, 1
    for axis in range(addresses.ndim - 1, -1, -1):
        if addresses.shape[axis] > 1:
            step = int(np.take(addresses, 1, axis=axis).flat[0]) - int(np.take(addresses, 0, axis=axis).flat[0])
            if step == itemsize:
                order, lanes = np.moveaxis(addresses, axis, -1), np.moveaxis(lanes, axis, -1)
                vector = max(1, 16 // itemsize)
                break
    sectors = (order.reshape(-1) // SECTOR).astype(np.int64)
    sectors[~lanes.reshape(-1)] = -1
    group = 32 * vector
    padded = -np.ones(-(-sectors.size // group) * group, dtype=np.int64)
    padded[:sectors.size] = sectors
    ranked = np.sort(padded.reshape(-1, group), axis=1)
    distinct = (np.diff(ranked, axis=1) != 0).sum(axis=1) + 1 - (ranked[:, 0] == -1)
    return int(distinct.sum())


def precision_of(a, input_precision) -> str:
    """Which tensor-core rate a ``tl.dot`` runs at, from its operands' type and precision."""
    name = str(getattr(getattr(a, "dtype", None), "scalar", getattr(a, "dtype", "")))
    wanted = str(input_precision).lower()
    if "fp16" in name or "bf16" in name:
        return "fp16"
    if "fp8" in name:
        return "fp8"
    if "int8" in name or "i8" == name:
        return "int8"
    if "ieee" in wanted:
        return "fp32"
    return "tf32x3" if "tf32x3" in wanted else "tf32"
