"""Finding the course: its puzzle files, their definitions, and the learner's files.

The course root is the folder that holds ``puzzles/``: the current directory or one of its
parents, else the checkout this package was installed from (``pip install -e .``).
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .imports import import_file
from .puzzle import Puzzle

PUZZLE_FILE = re.compile(r"^(puzzle\d\d)_\w+\.py$")


class CourseError(Exception):
    """A usage problem: no course found, an unknown puzzle, a missing file. Exit code 2."""


def find_root(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if is_course(folder):
            return folder
    installed = Path(__file__).resolve().parent.parent
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
        return load_puzzle(str(self.puzzle_file(puzzle_id)))


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
    module = import_file(path, name)  # an autograd puzzle imports the kernels of the puzzles before it
    puzzle = getattr(module, "PUZZLE", None)
    if not isinstance(puzzle, Puzzle):
        raise CourseError(f"{path} defines no PUZZLE = Puzzle(...)")
    expected = PUZZLE_FILE.match(os.path.basename(path)).group(1)
    if puzzle.id != expected:
        raise CourseError(f"{path}: PUZZLE.id is {puzzle.id!r} but the file name says {expected!r}")
    return puzzle


def stub_signature(puzzle_path: str, kernel: str) -> str:
    """The stub kernel's ``def`` line, read from the course file's source, for messages."""
    import ast
    tree = ast.parse(Path(puzzle_path).read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == kernel:
            args = []
            for arg in node.args.args:
                ann = f": {ast.unparse(arg.annotation)}" if arg.annotation is not None else ""
                args.append(arg.arg + ann)
            return f"{kernel}({', '.join(args)})"
    return kernel + "(...)"
