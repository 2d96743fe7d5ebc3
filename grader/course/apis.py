"""Which ``triton.language`` APIs the installed Triton really has: tried, not looked up.

triton 3.9 removed block pointers but kept ``tl.make_block_ptr`` as a stub that raises
``NotImplementedError``, so ``hasattr`` says yes. Each API here is tried once per process by
running a one-program probe kernel in Triton's interpreter, which needs no GPU and compiles
nothing. The probes are the grader's own code, not a learner's. Importing this module
imports triton (the interpreter finds `tl` in the probes' globals).
"""
from __future__ import annotations

import functools
import threading
import warnings

import triton.language as tl

# The last Triton release that has each API whose removal the course knows about.
LAST_WITH = {"make_block_ptr": "3.8"}


def _block_ptr_probe(x_ptr):
    block = tl.make_block_ptr(x_ptr, shape=(16,), strides=(1,), offsets=(0,), block_shape=(16,), order=(0,))
    tl.store(block, tl.load(block) + 1.0)


def _descriptor_probe(x_ptr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[16], strides=[1], block_shape=[16])
    desc.store([0], desc.load([0]) + 1.0)


PROBES = {"make_block_ptr": _block_ptr_probe, "make_tensor_descriptor": _descriptor_probe}


_PROBING = threading.Lock()  # the interpreter patches triton.language while it runs: one probe at a time


def works(api: str) -> bool:
    """Whether ``tl.<api>`` runs here. An API without a probe is taken on ``hasattr``.
    Graders on several threads ask at once; the first asks the interpreter, the rest wait."""
    with _PROBING:
        return _works(api)


@functools.lru_cache(maxsize=None)
def _works(api: str) -> bool:
    if not hasattr(tl, api):
        return False
    probe = PROBES.get(api)
    if probe is None:
        return True
    import torch
    from triton.runtime.interpreter import InterpretedFunction
    x = torch.zeros(16, dtype=torch.float32)
    try:
        with warnings.catch_warnings():  # 3.7 and 3.8 warn that block pointers are deprecated
            warnings.simplefilter("ignore")
            InterpretedFunction(probe)[(1,)](x)
    except Exception:  # NotImplementedError on 3.9; anything else means it does not work either
        return False
    return bool((x == 1.0).all())


def missing(apis) -> list[str]:
    return [api for api in apis if not works(api)]


def unsupported_message(api: str, instead: str | None) -> str:
    """Why a puzzle cannot run on this Triton, and what to do: another puzzle, or another version."""
    import triton
    last = LAST_WITH.get(api)
    gone = (f"triton {triton.__version__} no longer has `tl.{api}` (triton {last} is the last version with it)"
            if last else f"triton {triton.__version__} does not have `tl.{api}`")
    other = f" Do {instead} instead: the same kernel with tensor descriptors." if instead else ""
    return (f"unsupported here: this puzzle needs `tl.{api}`, and {gone}.{other} To do this one, install the "
            f"tested set: `pip install -c constraints.txt triton` (README, Tested versions).")
