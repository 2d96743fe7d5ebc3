"""What every front-end shares (the command line, its subcommands, the notebook): finding the
course, the device, and how a run ends. Kept light: no torch unless a GPU may be there."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from grader.course.loader import Course, CourseError, find_root, is_course
from grader.judge.options import has_cuda
from grader.judge.results import ExitCode


USAGE_ERROR = ExitCode.USAGE_ERROR


def usage_error(message: str, as_json: bool = False) -> int:
    """A usage problem: ``error: ...`` on stderr, or with --json ``{"error": ...}`` on stdout
    (what a program reading the output parses); exit code 2 either way."""
    if as_json:
        print(json.dumps({"error": message}))
    else:
        print(f"error: {message}", file=sys.stderr)
    return USAGE_ERROR


def course_at(root: Path | None) -> Course:
    """The course at --root (checked), else the one found from here."""
    if root is None:
        return Course(find_root())
    root = root.expanduser().resolve()
    if not is_course(root):
        raise CourseError(f"{root} is not a course folder: it has no puzzles/puzzleNN_*.py")
    return Course(root)


def pick_device(device: str) -> str:
    """``--device``: ``auto`` is cuda where torch sees a GPU, else cpu; ``cuda`` without one is
    a usage problem (:class:`CourseError`)."""
    if device == "auto":
        return "cuda" if has_cuda() else "cpu"
    if device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise CourseError("--device cuda, but torch sees no CUDA GPU; use --device cpu")
    return device
