"""What a zygote does once so that none of its workers pays for it: the lazy imports and first-call
set-ups of the parts each kind of worker uses (measured: 2 s of fake-tensor imports in the first
recording of an autograd wrapper, 0.8 s of compiler set-up in the first compile check, 0.4 s in
the interpreter's first launch, per worker, each time).

Only the grader's own tiny kernel runs here, never a learner's, and nothing initialises CUDA: a
process that has used CUDA cannot fork workers that use it too.
"""
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _double(x_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) * 2)


def fake_tensors() -> None:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty_strided((4, 8), (8, 1))
        (x.reshape(-1).new_empty(3) + 1).sum(0).to(torch.float16)


def interpreter() -> None:
    import torch
    x = torch.ones(16)
    _double[(1,)](x, N=16)


def compiler() -> None:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction
    source = ASTSource(fn=JITFunction(_double.fn), signature={"x_ptr": "*fp32", "N": "constexpr"}, constexprs={"N": 16})
    triton.compile(source, target=GPUTarget("cuda", 90, 32))


def prepare(device: str) -> None:
    """Warm what workers of ``device`` use; a failure here only costs the time it was to save."""
    # Not fake tensors for cuda: making them initialises CUDA (seen with torch 2.11 on an H100), and a
    # zygote that has used CUDA forks workers that cannot ("Cannot re-initialize CUDA in forked subprocess").
    steps = {"cpu": (fake_tensors, interpreter), "cuda": (), "compile": (compiler,)}[device]
    for step in steps:
        try:
            step()
        except Exception:  # noqa: BLE001 (a warm-up is an optimisation, never a requirement)
            pass
