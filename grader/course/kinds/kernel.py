"""A kernel puzzle, to the course: a ``@triton.jit`` kernel the grader launches on the puzzle's grid."""
from __future__ import annotations

from grader.course.kinds.kind import KindSpec

SPEC = KindSpec("kernel", on_grid=True)
