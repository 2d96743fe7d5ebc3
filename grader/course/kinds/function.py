"""An autograd puzzle, to the course: a ``torch.autograd.Function`` that launches the learner's own kernels."""
from __future__ import annotations

from grader.course.kinds.kind import KindSpec

SPEC = KindSpec("function")
