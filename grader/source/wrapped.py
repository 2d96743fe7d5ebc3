"""The plain Python function a kernel object wraps: read by the notebook's capture (grader side)
and by the worker (sandbox side), so it lives here, below both, and runs nothing."""
from __future__ import annotations

import inspect


def python_function(obj, classes: bool = False):
    """The plain Python function behind ``obj``: @triton.jit, Triton's autotune and heuristics
    wrappers (and any look-alike) keep what they wrap in ``.fn``, so this follows ``.fn`` down.
    ``classes``: a class (an autograd Function) is an answer too. None where eight layers reach
    neither. Unlike :func:`unwrap`, it judges nothing: it is for reading source and parameters."""
    for _ in range(8):
        if inspect.isfunction(obj) or (classes and inspect.isclass(obj)):
            return obj
        obj = getattr(obj, "fn", None)
    return None
