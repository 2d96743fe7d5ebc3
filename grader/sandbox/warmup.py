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


def learner_imports() -> None:
    """What a learner's puzzle file imports besides triton (its spec's): 1.8 s per compile worker,
    which imports no torch of its own, were each to import it."""
    import jaxtyping  # noqa: F401
    import torch  # noqa: F401


def helion() -> None:
    """Helion's import, seconds long, for a Helion puzzle's workers and, where its Triton calls
    Helion's helpers, its compile checker's (asked for by its grader only: no other track pays
    it). Its interpreter switch is read when a kernel is decorated, later, in the worker
    (grader.sandbox.kinds.helion.run.before_import), so importing it here changes nothing.

    Helion's autotuner imports scikit-learn, and with it SciPy, for a surrogate model it may try
    if installed: 1 s of a 3 s import, for an autotuner the grader never runs. It is kept out of
    this import (Helion falls back as it does where scikit-learn is absent), then let in again
    for whatever asks for it later."""
    import sys
    keep_out = "sklearn" not in sys.modules
    if keep_out:
        sys.modules["sklearn"] = None  # an import of it raises ImportError
    try:
        import helion  # noqa: F401
        import helion.language  # noqa: F401  (with helion: its compiler, torch._dynamo, the dispatch modes)
    finally:
        if keep_out and sys.modules.get("sklearn", 0) is None:
            del sys.modules["sklearn"]
    import grader.sandbox.kinds.helion.run  # noqa: F401  (the worker's side of a case, and what it imports)


def compiler() -> None:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction
    source = ASTSource(fn=JITFunction(_double.fn), signature={"x_ptr": "*fp32", "N": "constexpr"}, constexprs={"N": 16})
    triton.compile(source, target=GPUTarget("cuda", 90, 32))


# What a worker of each device may need warmed: ``EVERY`` before the zygote says it is ready; the
# others when the grader asks (at the zygote's start or a fork: an autograd puzzle's recording
# needs fake tensors, a learner's puzzle file imports torch); ``IDLE`` ones also while the zygote
# has no worker and nothing to do (a notebook between checks).
EVERY = {"cpu": ("interpreter",), "cuda": (), "compile": ("compiler",)}
ASKED = {"cpu": ("fake_tensors", "helion"), "cuda": (), "compile": ("torch", "helion")}
IDLE = {"cpu": ("fake_tensors",), "cuda": (), "compile": ()}
_WARMERS = {"interpreter": lambda: interpreter(), "fake_tensors": lambda: fake_tensors(),
            "compiler": lambda: compiler(), "torch": lambda: learner_imports(), "helion": lambda: helion()}


class Warmth:
    """The steps one zygote may still warm. Not fake tensors for cuda: making them initialises
    CUDA (seen with torch 2.11 on an H100), and a zygote that has used CUDA forks workers that
    cannot ("Cannot re-initialize CUDA in forked subprocess")."""

    def __init__(self, device: str) -> None:
        self.pending = list(EVERY[device] + ASKED[device])
        self.idle = list(IDLE[device])

    def warm(self, wanted) -> None:
        """Warm the steps of ``wanted`` not warmed yet (unknown ones are ignored). A failure
        only costs the time it was to save."""
        for step in [s for s in self.pending if s in wanted]:
            self.pending.remove(step)
            if step in self.idle:
                self.idle.remove(step)
            try:
                _WARMERS[step]()
            except Exception:  # noqa: BLE001 (a warm-up is an optimisation, never a requirement)
                pass

    def warm_idle(self) -> bool:
        """Warm the next step worth warming while idle; False when there is none."""
        if not self.idle:
            return False
        self.warm(self.idle[:1])
        return True


def prepare(device: str, asked=()) -> Warmth:
    """Warm what every worker of ``device`` uses, and the ``asked`` steps, before the zygote is
    ready; the rest is left to the returned :class:`Warmth`."""
    warmth = Warmth(device)
    warmth.warm(EVERY[device] + tuple(asked))
    return warmth
