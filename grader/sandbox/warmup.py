"""What a zygote does once so that none of its workers pays for it: the lazy imports and first-call
set-ups of the parts each kind of worker uses (measured: 2 s of fake-tensor imports in the first
recording of an autograd wrapper, 0.8 s of compiler set-up in the first compile check, 0.4 s in
the interpreter's first launch, per worker, each time). Only what the first fork needs is warmed
before the zygote is ready: fake tensors cost 1 s that a kernel puzzle never uses.

Only the grader's own tiny kernel runs here, never a learner's, and nothing initialises CUDA: a
process that has used CUDA cannot fork workers that use it too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import triton
import triton.language as tl

from grader.channel.wire import CoreWarmStep


@triton.jit
def _double(x_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) * 2)


def interpreter() -> None:
    import torch
    x = torch.ones(16)
    _double[(1,)](x, N=16)


def learner_imports() -> None:
    """What a learner's puzzle file imports besides triton (its spec's): 1.8 s per compile worker,
    which imports no torch of its own, were each to import it."""
    import jaxtyping  # noqa: F401
    import torch  # noqa: F401


def compiler() -> None:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction
    source = ASTSource(fn=JITFunction(_double.fn), signature={"x_ptr": "*fp32", "N": "constexpr"}, constexprs={"N": 16})
    triton.compile(source, target=GPUTarget("cuda", 90, 32))


@dataclass(frozen=True)
class WarmStep:
    """Something each worker would pay for on first use, done once in their zygote: before it
    is ready on a device of ``every``; when the grader asks for ``name`` (at the zygote's start
    or a fork) on a device of ``asked``; on a device of ``idle`` also while the zygote has no
    worker and nothing to do (a notebook between checks). Each kind adds its own
    (grader.sandbox.kinds: an autograd puzzle's recording needs fake tensors)."""
    name: str  # a CoreWarmStep, or a member of a kind's own enum of steps
    run: Callable[[], None]
    every: tuple[str, ...] = ()
    asked: tuple[str, ...] = ()
    idle: tuple[str, ...] = ()


# a learner's puzzle file imports torch, which a compile worker would not otherwise
CORE = (WarmStep(CoreWarmStep.INTERPRETER, lambda: interpreter(), every=("cpu",)),
        WarmStep(CoreWarmStep.COMPILER, lambda: compiler(), every=("compile",)),
        WarmStep(CoreWarmStep.TORCH, lambda: learner_imports(), asked=("compile",)))


class Warmth:
    """The steps one zygote may still warm. Not fake tensors for cuda: making them initialises
    CUDA (seen with torch 2.11 on an H100), and a zygote that has used CUDA forks workers that
    cannot ("Cannot re-initialize CUDA in forked subprocess")."""

    def __init__(self, device: str, steps: tuple[WarmStep, ...] = CORE) -> None:
        self.runs = {step.name: step.run for step in steps}
        self.every = [step.name for step in steps if device in step.every]
        self.pending = self.every + [step.name for step in steps if device in step.asked]
        self.idle = [step.name for step in steps if device in step.idle]

    def warm(self, wanted) -> None:
        """Warm the steps of ``wanted`` not warmed yet (unknown ones are ignored). A failure
        only costs the time it was to save."""
        for step in [s for s in self.pending if s in wanted]:
            self.pending.remove(step)
            if step in self.idle:
                self.idle.remove(step)
            try:
                self._run(step)
            except Exception:  # noqa: BLE001 (a warm-up is an optimisation, never a requirement)
                pass

    def _run(self, step: str) -> None:
        self.runs[step]()

    def warm_idle(self) -> bool:
        """Warm the next step worth warming while idle; False when there is none."""
        if not self.idle:
            return False
        self.warm(self.idle[:1])
        return True


def prepare(device: str, asked=(), kinds_steps: tuple[WarmStep, ...] = ()) -> Warmth:
    """Warm what every worker of ``device`` uses, and the ``asked`` steps, before the zygote is
    ready; the rest (of the core's steps and the kinds' ``kinds_steps``) is left to the returned
    :class:`Warmth`."""
    warmth = Warmth(device, CORE + tuple(kinds_steps))
    warmth.warm(warmth.every + list(asked))
    return warmth
