"""Does Triton's interpreter run correctly on this machine? ``python -m grader.sandbox.interpreter.probe``

Some pairings of Triton and NumPy break the interpreter (triton 3.6 with numpy >= 2.4 fails
loops whose bounds are run-time values; triton 3.1 with NumPy 2 leaves outputs at zero). On a
GPU the interpreter only runs the bounds check beside each case, and a check that breaks must
not pass in silence: the judge runs this probe once and refuses to grade where it fails.

The probe is a small kernel with what the course's kernels use (a loop over a run-time bound,
masked loads with ``other``, a reduction, a masked store), run with the grader's own patches;
it prints one line of JSON: ``{"ok": true}`` or ``{"ok": false, "error": "..."}``.
"""
from __future__ import annotations

import json
import os
import sys


def probe() -> str | None:
    """None where the interpreter computes the probe's values, else what went wrong."""
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported
    import numpy as np
    import torch
    import triton
    import triton.language as tl

    from grader.sandbox.interpreter.semantics import install
    install()

    @triton.jit
    def row_sums(x_ptr, out_ptr, n, B: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros([B], dtype=tl.float32)
        for start in range(0, n, B):
            cols = start + tl.arange(0, B)
            acc += tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
        tl.store(out_ptr + row + tl.arange(0, 1), tl.sum(acc, axis=0) + tl.zeros([1], tl.float32),
                 mask=tl.arange(0, 1) < 1)

    x = torch.arange(3 * 37, dtype=torch.float32).reshape(3, 37)
    out = torch.full((3,), float("nan"))
    try:
        row_sums[(3,)](x, out, 37, 8)
    except Exception as exc:  # noqa: BLE001 (any failure is the finding)
        cause = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        return f"a loop over a run-time bound raised {type(cause).__name__}: {str(cause).splitlines()[0][:200]}"
    want = x.numpy().sum(axis=1)
    if not np.allclose(out.numpy(), want):
        return f"a loop over a run-time bound computed {out.tolist()} where {want.tolist()} is right"
    return None


if __name__ == "__main__":
    error = probe()
    print(json.dumps({"ok": error is None, "error": error}))
    sys.exit(0)
