"""One machine for learner code: a GPU.

Graded without a GPU, a learner's Python (an autograd wrapper, Helion's host code, their helpers)
still sees one: every tensor it is handed or makes reports ``cuda:0`` however it is asked, and
``torch.cuda`` answers as an H100 does, while the values sit in CPU memory for the interpreters.
A sniff of the device then has nothing to find, and the CPU takes the path a GPU takes.

* :func:`gpu_world`: while it is active, ``torch.cuda`` answers as an H100
  (:mod:`.device`) and every call on a GPU tensor, or naming the CUDA device, runs on CPU memory
  and gives GPU tensors (:mod:`.tensor`);
* :func:`on_gpu`: the CPU tensors of a value handed to learner code, as GPU tensors (fake ones
  too: an autograd wrapper is recorded on GPU tensors over fake CPU tensors);
* :func:`in_memory`: a value's GPU tensors as their CPU memory, for a kernel launch and for the
  grader;
* :func:`called_on_gpu`: a learner's function of a launch's arguments (a ``@triton.heuristics``
  rule), called on them as GPU tensors wherever Triton calls it.

Hooked in where learner Python gets tensors: the autograd recording
(:mod:`grader.sandbox.kinds.function.record`), Helion's host code in its interpreter, its host-work
runs and its tiled run (:mod:`grader.sandbox.kinds.helion.run`, ``host``), a kernel's heuristics
(:func:`grader.sandbox.launch.unwrap`); and where kernels launch from there (the recording's tape,
``kinds.helion.cpu.interpreted_launch``).

On a machine with a GPU each is a no-op: the tensors and answers are the GPU's own.
"""
from __future__ import annotations

import contextlib
import functools

from grader.sandbox.world.device import answering, properties
from grader.sandbox.world.tensor import GpuTensor, World, in_memory, on_gpu

__all__ = ["GpuTensor", "called_on_gpu", "gpu_world", "in_memory", "on_gpu", "properties"]


@contextlib.contextmanager
def gpu_world():
    """Learner code run inside sees a GPU (an H100) and allocates on it."""
    import torch
    if torch.cuda.is_available():  # a real one: its own tensors and answers
        yield
        return
    with answering(), World():
        yield


def called_on_gpu(fn):
    """``fn`` called with its arguments' tensors on the GPU, in the world, and what it returns as
    memory (once per function: a second call gives the same wrapper)."""
    if getattr(fn, "_called_on_gpu", False):
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        with gpu_world():
            return in_memory(fn(*on_gpu(args), **on_gpu(kwargs)))
    call._called_on_gpu = True
    return call
