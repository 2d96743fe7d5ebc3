"""What a run grades: each named puzzle with the file its kernel is read from.

``python -m grader`` names puzzles (or ``--all``), and the kernels come from ``puzzles/``,
``solutions/`` or one ``--file``. A notebook given as ``--file`` is graded as a module of its
definitions; its :class:`~grader.source.capture.LineMap` travels with the target, so that a message
about the module's "line N" can be said as the notebook's "line M of code cell K".
"""
from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.course.loader import Course, CourseError, normalise_id
from grader.source.source_lines import defined_names

if TYPE_CHECKING:
    from grader.judge.results import Report
    from grader.source.capture import LineMap


@dataclass(frozen=True)
class Target:
    """One puzzle to grade, the file its kernel is in, and (for a notebook) the map from that
    written module's lines back to the notebook's cells."""

    puzzle: str
    path: Path
    lines: LineMap | None = None


def kernels_in(path: Path) -> set[str]:
    """Names of top-level functions and classes in a file (kernels, autograd wrappers)."""
    try:
        return defined_names(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return set()


def notebook_as_module(path: Path) -> tuple[Path, LineMap]:
    """A notebook's definitions (never its calls or shell magics) as a module to grade, in a
    folder removed when the process ends, with the map back to the notebook's cells."""
    from grader.source.capture import notebook_module
    folder = tempfile.mkdtemp(prefix="triton-puzzles-")
    atexit.register(shutil.rmtree, folder, True)  # graded once, then gone
    module = Path(folder) / (path.stem.replace("-", "_") + "_ipynb.py")
    try:
        written = notebook_module(path.read_text(encoding="utf-8"), module=module.name, shown=path.name)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CourseError(f"{path.name}: {exc}") from None
    module.write_text(written.text)
    return module, written.lines


def file_claims(course: Course, path: Path, defined: set[str]) -> tuple[list[str], dict[str, str]]:
    """The puzzles a ``--file`` naming no puzzle is graded for, and why it is not for the others
    whose kernel name it holds (:mod:`grader.source.claims`)."""
    from grader.source.claims import claim, named_in_notebook, named_in_python
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        text = ""
    named = (named_in_notebook if path.suffix == ".ipynb" else named_in_python)(text)
    # a puzzle file that does not load still names its kernel in its text
    found = claim({pid: course.kernel_name(pid) for pid in course.ids}, path.name, path.name, defined, named)
    return list(found.puzzles), dict(found.skipped)


def resolve(course: Course, puzzles: list[str], file: Path | None = None, every: bool = False,
            solutions: bool = False) -> list[Target]:
    """The targets of a run: ``puzzles`` by id (or ``every`` puzzle), from ``file`` if given
    (a ``--file`` that names no puzzle grades every puzzle whose kernel it defines), else from
    ``solutions/`` or ``puzzles/``. A usage problem is a :class:`CourseError`."""
    ids = [normalise_id(p) for p in puzzles]
    for puzzle_id in ids:
        course.puzzle_file(puzzle_id)  # unknown ids fail here, before any work
    if file is not None:
        path = file.expanduser().resolve()
        lines = None
        if path.is_dir():
            inside = sorted(p.name for p in path.iterdir() if p.suffix in (".py", ".ipynb"))
            example = f" (here: {', '.join(inside[:3])}{', ...' if len(inside) > 3 else ''})" if inside else ""
            raise CourseError(f"{file} is a folder: --file takes one file, a .py or a notebook (.ipynb){example}. "
                              f"To grade the puzzles in puzzles/, leave --file out")
        if not path.is_file():
            raise CourseError(f"no such file: {file}")
        original = path
        if path.suffix == ".ipynb":
            path, lines = notebook_as_module(path)
        elif path.suffix != ".py":
            raise CourseError(f"{file} is not a .py file or a notebook (.ipynb)")
        if not ids:
            ids, skipped = file_claims(course, original, kernels_in(path))
            if not ids and skipped:
                first = next(iter(skipped))
                raise CourseError(f"{file} is graded for no puzzle: {skipped[first]}; or name the puzzle: "
                                  f"`python -m grader {first} --file {file}`")
            for line in skipped.values():  # a kernel of the same name as another puzzle's is not that puzzle
                print(f"note: {line} (or name it: `python -m grader PUZZLE --file {file}`)", file=sys.stderr)
            if not ids:
                kernels = ", ".join(k for k in map(course.kernel_name, course.ids) if k)
                raise CourseError(f"{file} defines none of the puzzle kernels ({kernels})")
        return [Target(pid, path, lines) for pid in ids]
    if every:
        ids = course.ids
    if not ids:
        raise CourseError("name a puzzle (e.g. `python -m grader puzzle01`) or pass --all")
    pick = course.solution_file if solutions else course.puzzle_file
    return [Target(pid, pick(pid)) for pid in ids]


def relabel(report: Report, targets: list[Target]) -> Report:
    """``report`` with each result graded from a notebook said in the notebook's cells: its
    "line N" of the written module becomes "line M of code cell K"."""
    from grader.source.capture import relabel_report
    return relabel_report(report, {str(t.path): t.lines for t in targets if t.lines is not None})
