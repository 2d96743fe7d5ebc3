"""`make check`: the grader for one puzzle, and on a fresh clone the steps that come next.

    python scripts/check.py [PUZZLE] [GRADER ARGS...]     (make check [PUZZLE=puzzle07] [ARGS=...])

With a puzzle named, this is `python -m grader PUZZLE ARGS`, its output and exit status as they
are. Without one it is puzzle 1, as a fresh clone's first command: while puzzle 1's kernel is
still the stub there is nothing to grade yet (the grader would say "not attempted", exit 1, and
make would print `Error 1` after a set-up that went well). So the learner is told where to write
the kernel and how to grade it, and the status is 0. Once the kernel holds anything it is
graded as usual: a failure is still 1; a pass names the next puzzle.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this course's own grader, whichever checkout make runs in

from grader.course.loader import Course, _field  # noqa: E402
from grader.source import stubs  # noqa: E402

FIRST = "puzzle01"


def untouched(path: Path, kernel: str, root: Path) -> bool:
    """Whether the file's kernel is still the stub as shipped, by the grader's own rule
    (grader/source/stubs.py: compared as code with the print in ``root``'s puzzles/.stubs.json,
    or, where the course keeps none, a body that does nothing). Puzzle 1's stub holds no variant's
    code (tests/test_make_check.py), so its file's text alone decides, without importing torch.
    A file that cannot be read or parsed, or lacks the kernel, is graded: the grader says why."""
    try:
        text = path.read_text(encoding="utf-8")
        kept = stubs.shipped(root).get(FIRST)
        return stubs.stub_print(text, kernel) == kept if kept else stubs.does_nothing(text, kernel)
    except (OSError, SyntaxError, ValueError):
        return False


def _place(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def has_watch() -> bool:
    from grader.app.commands import SUBCOMMANDS
    return "watch" in SUBCOMMANDS


def first_steps(course: Course, puzzle_id: str, watch: bool = False) -> str:
    """What a fresh clone's `make check` says instead of grading the untouched stub (the watch
    line where this grader has `python -m grader watch`)."""
    path = course.puzzle_file(puzzle_id)
    lines = [f"{puzzle_id} ({_field(path, 'title') or puzzle_id}): not attempted yet, its kernel is still the stub.",
             "",
             "The course is set up. Next:",
             f"  1. Open {_place(path, course.root)} and write the kernel between the `your part` lines.",
             f"  2. Grade it: make check PUZZLE={puzzle_id}",
             "     or, with the course's environment active (`source .venv/bin/activate`, once per shell):",
             f"       python -m grader {puzzle_id}"]
    if watch:
        lines.append(f"       python -m grader watch {puzzle_id}    (grades it again on every save)")
    lines.append(f"Stuck? python -m grader hint {puzzle_id}. Jupyter instead? make notebooks")
    return "\n".join(lines) + "\n"


def next_puzzle(course: Course, puzzle_id: str) -> str | None:
    """The line that names the puzzle after ``puzzle_id``, or None after the last."""
    ids = course.ids
    later = ids[ids.index(puzzle_id) + 1:] if puzzle_id in ids else []
    if not later:
        return None
    path = course.puzzle_file(later[0])
    return (f"Next: {later[0]} ({_field(path, 'title') or later[0]}): open {_place(path, course.root)}, "
            f"then make check PUZZLE={later[0]}\n")


def grade(args: list[str]) -> int:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT).returncode


def main(argv: list[str], course: Course | None = None, grader=grade, out=sys.stdout) -> int:
    named, args = (argv[0], argv[1:]) if argv and not argv[0].startswith("-") else ("", argv)
    if named or any(a in ("--all", "--file", "--solutions") or a.startswith("--file=") for a in args):
        return grader([named, *args] if named else args)
    course = course or Course(ROOT)
    kernel = _field(course.puzzle_file(FIRST), "kernel")
    if kernel and untouched(course.puzzle_file(FIRST), kernel, course.root):
        out.write(first_steps(course, FIRST, has_watch()))
        return 0
    status = grader([FIRST, *args])
    shown = next_puzzle(course, FIRST) if status == 0 else None
    if shown:
        out.write(shown)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
