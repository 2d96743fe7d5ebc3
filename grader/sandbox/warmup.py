"""What a zygote does once so that none of its workers pays for it: the lazy imports and first-call
set-ups of the parts each kind of worker uses (measured: 2 s of fake-tensor imports in the first
recording of an autograd wrapper, 0.8 s of compiler set-up in the first compile check, 0.4 s in
the interpreter's first launch, per worker, each time). Only what the first fork needs is warmed
before the zygote is ready: fake tensors cost 1 s that a kernel puzzle never uses.

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


# What a worker of each device may need warmed, in the order a zygote warms them unasked. The first
# is warmed before the zygote says it is ready; the others when a fork asks for them (an autograd
# puzzle's worker records on fake tensors) or while the zygote has nothing else to do.
STEPS = {"cpu": ("interpreter", "fake_tensors"), "cuda": (), "compile": ("compiler",)}
_WARMERS = {"interpreter": lambda: interpreter(), "fake_tensors": lambda: fake_tensors(),
            "compiler": lambda: compiler()}


class Warmth:
    """The steps one zygote has warmed. Not fake tensors for cuda: making them initialises CUDA
    (seen with torch 2.11 on an H100), and a zygote that has used CUDA forks workers that cannot
    ("Cannot re-initialize CUDA in forked subprocess")."""

    def __init__(self, device: str) -> None:
        self.pending = list(STEPS[device])

    def warm(self, wanted=None) -> None:
        """Warm ``wanted`` (step names; unknown ones are ignored), or the next pending step.
        A failure only costs the time it was to save."""
        steps = [s for s in self.pending if s in wanted] if wanted is not None else self.pending[:1]
        for step in steps:
            self.pending.remove(step)
            try:
                _WARMERS[step]()
            except Exception:  # noqa: BLE001 (a warm-up is an optimisation, never a requirement)
                pass


def prepare(device: str) -> Warmth:
    """Warm what every worker of ``device`` uses before the zygote is ready; the rest is left to
    the returned :class:`Warmth`."""
    warmth = Warmth(device)
    warmth.warm(STEPS[device][:1])
    return warmth
