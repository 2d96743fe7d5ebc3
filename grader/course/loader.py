"""Finding the course: its puzzle files, their definitions, and the learner's files.

The course root is the folder that holds ``puzzles/``: the current directory or one of its
parents, else the checkout this package was installed from (``pip install -e .``).
"""
from __future__ import annotations

import contextlib
import enum
import hashlib
import os
import re
import sys
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from grader.course import kinds
from grader.course.imports import import_file, standing_in
from grader.course.puzzle import Puzzle
from grader.course.syntax import parse
from grader.course.variant import VARIANT_FILE, StudentVariant, drawn

PUZZLE_FILE = re.compile(r"^(puzzle\d\d)_\w+\.py$")


class CourseError(Exception):
    """A usage problem: no course found, an unknown puzzle, a missing file. Exit code 2."""


class LoadFailure(enum.StrEnum):
    """Why a puzzle file did not load. All but UNSUPPORTED are the failure kinds of the same
    names (:class:`grader.judge.failures.FailureKind`), the kind of the puzzle's ``load`` check;
    UNSUPPORTED is no failure: the file needs a package of its track that is not installed."""

    SYNTAX = "syntax"
    EXCEPTION = "exception"
    NOT_FOUND = "not_found"  # no PUZZLE, or one of another id
    UNSUPPORTED = "unsupported"


class PuzzleLoadError(Exception):
    """A puzzle file that does not parse, raises when imported, or defines no ``PUZZLE``.

    The learner edits the very file the course's spec and cases come from, so this is that
    puzzle's failure (why: ``kind``), never a usage error and never the end of a run: every
    other puzzle is still graded.
    """

    def __init__(self, message: str, kind: LoadFailure = LoadFailure.EXCEPTION, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = LoadFailure(kind)
        self.line = line


def find_root(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if is_course(folder):
            return folder
    installed = Path(__file__).resolve().parents[2]
    if is_course(installed):
        return installed
    raise CourseError(
        "no course found: run from the repository (the folder holding puzzles/), "
        "or pass --root PATH"
    )


def is_course(folder: Path) -> bool:
    puzzles = folder / "puzzles"
    return puzzles.is_dir() and any(PUZZLE_FILE.match(p.name) for p in puzzles.iterdir())


@dataclass(frozen=True)
class Course:
    root: Path

    @property
    def puzzle_files(self) -> dict[str, Path]:
        files = {}
        for path in sorted((self.root / "puzzles").iterdir()):
            match = PUZZLE_FILE.match(path.name)
            if match:
                files[match.group(1)] = path
        return files

    @property
    def ids(self) -> list[str]:
        return list(self.puzzle_files)

    def puzzle_file(self, puzzle_id: str) -> Path:
        files = self.puzzle_files
        if puzzle_id not in files:
            raise CourseError(f"unknown puzzle {puzzle_id!r}; the puzzles are {', '.join(files) or 'none'}")
        return files[puzzle_id]

    def solution_file(self, puzzle_id: str) -> Path:
        path = self.root / "solutions" / self.puzzle_file(puzzle_id).name
        if not path.is_file():
            raise CourseError(f"{puzzle_id}: no solution file {path}")
        return path

    def puzzle(self, puzzle_id: str) -> Puzzle:
        """The puzzle's definition, with the student's values where the course holds a
        ``variant.json`` (a release per student); :class:`PuzzleLoadError` where its file cannot give one."""
        puzzle = load_puzzle(str(self.puzzle_file(puzzle_id)))
        values = self.student_variant.values.get(puzzle_id) if self.student_variant else None
        if not values or not puzzle.variants:
            return puzzle
        try:
            return puzzle.with_variant(values)
        except ValueError as exc:
            raise CourseError(f"{self.root / VARIANT_FILE}: {exc}; ask your instructor for the file again") from None

    def puzzle_for(self, puzzle_id: str, secret: int, student: str) -> Puzzle:
        """The puzzle as ``student`` gets it under a batch's ``secret``: their own value of each
        variant (the course's values where there is no secret or no student)."""
        puzzle = self.puzzle(puzzle_id)
        if not (secret and student and puzzle.variants):
            return puzzle
        return load_puzzle(str(self.puzzle_file(puzzle_id))).with_variant(
            drawn(puzzle.variants, puzzle_id, secret, student))

    @property
    def student_variant(self) -> StudentVariant | None:
        """The student's values, where a release per student wrote them into this course."""
        path = self.root / VARIANT_FILE
        if not path.is_file():
            return None
        try:
            return _read_variant(str(path), path.stat().st_mtime_ns)
        except ValueError as exc:
            raise CourseError(str(exc)) from None

    def load_error(self, puzzle_id: str) -> PuzzleLoadError | None:
        """Why the puzzle's file gives no definition, or None when it loads."""
        try:
            self.puzzle(puzzle_id)
        except PuzzleLoadError as exc:
            return exc
        return None

    def title(self, puzzle_id: str) -> str:
        """The puzzle's title, read from its file's text where the file does not load."""
        try:
            return self.puzzle(puzzle_id).title
        except PuzzleLoadError:
            found = _field(self.puzzle_file(puzzle_id), "title")
            return found or self.puzzle_file(puzzle_id).stem.split("_", 1)[-1].replace("_", " ").capitalize()

    def kernel_name(self, puzzle_id: str) -> str | None:
        """The puzzle's kernel name, read from its file's text where the file does not load."""
        try:
            return self.puzzle(puzzle_id).kernel
        except PuzzleLoadError:
            return _field(self.puzzle_file(puzzle_id), "kernel")


@lru_cache(maxsize=8)
def _read_variant(path: str, _changed: int) -> StudentVariant:
    return StudentVariant.read(Path(path))


def _field(path: Path, name: str) -> str | None:
    """A ``name="..."`` argument of ``Puzzle(...)`` found in a file's text, without importing it."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(rf"^\s*{name}\s*=\s*[\"']([^\"'\n]+)[\"']", text, re.MULTILINE)
    return match.group(1) if match else None


def normalise_id(text: str) -> str:
    """``7``, ``07``, ``puzzle7`` and ``puzzle07`` all name puzzle07."""
    match = re.fullmatch(r"(?:puzzle)?0*(\d+)", text.strip().lower())
    if not match:
        raise CourseError(f"{text!r} is not a puzzle id; write it like puzzle07")
    return f"puzzle{int(match.group(1)):02d}"


@lru_cache(maxsize=None)
def load_puzzle(path: str) -> Puzzle:
    """Import a course puzzle file and return its ``PUZZLE``.

    The course's own files are trusted code; a learner's files are only ever imported by the
    worker process.
    """
    name = "_course_" + hashlib.sha1(path.encode()).hexdigest()[:12]
    shown = _shown(path)
    try:
        # What the file prints goes to stderr: stdout may be carrying the one --json document.
        with contextlib.redirect_stdout(sys.stderr):
            with standing_in(*kinds.stand_ins()):  # only PUZZLE is wanted here; the worker imports a kind's package
                module = import_file(path, name)  # an autograd puzzle imports the kernels of the puzzles before it
    except SyntaxError as exc:
        raise _syntax_error(path, exc) from None
    except (Exception, SystemExit) as exc:  # the learner's code at import time; only a Ctrl-C goes through
        raise _import_error(path, exc) from None
    puzzle = getattr(module, "PUZZLE", None)
    if not isinstance(puzzle, Puzzle):
        raise PuzzleLoadError(f"{shown} defines no PUZZLE = Puzzle(...): put back the PUZZLE = Puzzle(...) "
                              "block at the end of the file, then grade again.", kind=LoadFailure.NOT_FOUND)
    expected = PUZZLE_FILE.match(os.path.basename(path)).group(1)
    if puzzle.id != expected:
        raise PuzzleLoadError(f"{shown}: PUZZLE.id is {puzzle.id!r} but the file name says {expected!r}: "
                              f"put back id={expected!r}, then grade again.", kind=LoadFailure.NOT_FOUND)
    return puzzle


def _shown(path: str) -> str:
    """A course file as the learner knows it: ``puzzles/puzzle02_constant_add_blocked.py``."""
    folder = os.path.basename(os.path.dirname(path))
    return f"{folder}/{os.path.basename(path)}" if folder else os.path.basename(path)


def _where(path: str, where: str) -> str:
    """The file the error lies in, as the message names it: the puzzle's own, or one it imports
    (an autograd puzzle imports the kernels of the puzzles before it)."""
    if os.path.realpath(where) == os.path.realpath(path):
        return _shown(path)
    return f"{_shown(path)} could not be loaded: {_shown(where)}, which it imports,"


def _syntax_error(path: str, exc: SyntaxError) -> PuzzleLoadError:
    where = exc.filename if exc.filename and os.path.isfile(exc.filename) else path
    reason = (exc.msg or type(exc).__name__).rstrip(".")
    at = f"line {exc.lineno}: " if exc.lineno else ""
    code = (exc.text or "").strip()
    quoted = f" (`{code[:80]}`)" if code else ""
    what = "does not parse" if type(exc) is SyntaxError else f"does not parse ({type(exc).__name__})"
    message = (f"{_where(path, where)} {what}: {at}{reason}{quoted}. "
               "Fix the line, then grade again.")
    return PuzzleLoadError(message, kind=LoadFailure.SYNTAX, line=exc.lineno)


def _import_error(path: str, exc: BaseException) -> PuzzleLoadError:
    # A package only one kind's puzzle files import (grader.course.kinds), missing: those puzzles are
    # unsupported here, not failed. Their kernel code needs it only when it runs (in the worker), so
    # it is stood in for while the grader reads a file's PUZZLE.
    missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    packages = kinds.packages()
    if missing and missing.split(".")[0] in packages:
        package = missing.split(".")[0]
        return PuzzleLoadError(f"{_shown(path)} needs {package}, which is not installed here: "
                               f"`{packages[package]}` adds it.", kind=LoadFailure.UNSUPPORTED)
    folder = os.path.realpath(os.path.dirname(path))
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.realpath(os.path.dirname(f.filename or "")) == folder]
    frame = frames[-1] if frames else None  # the deepest line of a course file: the learner's line
    where = frame.filename if frame is not None else path
    at = f"line {frame.lineno}: " if frame is not None else ""
    code = (frame.line or "").strip() if frame is not None else ""
    quoted = f" (`{code[:80]}`)" if code else ""
    error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    message = (f"{_where(path, where)} raised an error when imported: {at}{error}{quoted}. "
               "Fix the line, then grade again.")
    return PuzzleLoadError(message, kind=LoadFailure.EXCEPTION, line=frame.lineno if frame is not None else None)


def stub_signature(puzzle_path: str, kernel: str) -> str:
    """The stub kernel's ``def`` line, read from the course file's source, for messages."""
    import ast
    tree = parse(Path(puzzle_path).read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == kernel:
            args = []
            for arg in node.args.args:
                ann = f": {ast.unparse(arg.annotation)}" if arg.annotation is not None else ""
                args.append(arg.arg + ann)
            return f"{kernel}({', '.join(args)})"
    return kernel + "(...)"
