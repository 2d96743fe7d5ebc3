"""What every front-end shares (the command line, its subcommands, the notebook): finding the
course, the device, and how a run ends (:func:`run_command`, the one place exceptions become
exit codes). Kept light: no torch unless a GPU may be there."""
from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Callable, Sequence

from grader.course.loader import Course, CourseError, PuzzleLoadError, find_root, is_course
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


class UsageProblem(CourseError):
    """The command line asks for something that cannot be done: exit 2, with this message."""


def run_command(command: Callable[[list[str]], int], argv: Sequence[str]) -> int:
    """Run one command of ``python -m grader`` and map how it ended to an :class:`ExitCode`, as
    pytest's ``wrap_session`` does: its own code; a usage problem (no course, an unknown puzzle, a
    bad option) 2, with one line on stderr, or with ``--json`` ``{"error": ...}`` on stdout; a
    course puzzle file that does not load 1, naming the file and line; Ctrl-C 130; output piped
    into a reader that stopped (``head``) 1; anything else is the grader's own bug: 3, with its
    traceback and a request to report it."""
    argv = list(argv)
    as_json = "--json" in argv
    try:
        code = int(command(argv))
        sys.stdout.flush()  # a reader gone mid-output is seen here, not at exit
        return code
    except SystemExit as exc:  # argparse: --help (0) and its own usage errors (2)
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    except CourseError as exc:
        return usage_error(str(exc), as_json)
    except PuzzleLoadError as exc:
        if as_json:
            print(json.dumps({"error": exc.message}))
        else:
            print(f"error: {exc.message}", file=sys.stderr)
        return ExitCode.FAILED
    except KeyboardInterrupt:
        print("stopped (Ctrl-C)", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to write
        return ExitCode.FAILED
    except Exception:  # noqa: BLE001 (the grader's own bug: said as such, with its own exit code)
        print("grader error (a bug in the grader, not in your code; please report it with what follows):\n"
              + traceback.format_exc(), file=sys.stderr)
        return ExitCode.INTERNAL_ERROR


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
