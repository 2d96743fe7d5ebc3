"""Which puzzles a file is graded for: never because it holds a kernel of the same name.

Two puzzles may ask for one kernel name (``softmax_kernel`` is puzzle 8's and puzzle 18's,
``matmul_kernel`` puzzle 28's and 29's): a file that holds puzzle 8 must not be failed on
puzzle 18, which its author never attempted. A file is graded for a puzzle when

* it is **that puzzle's file**: its name starts with the puzzle's id (``puzzle18_mine.py``, a
  notebook ``puzzle18_mine.ipynb``); such a file is graded for no other puzzle;
* or the learner **named the puzzle** for the kernel: on the command line
  (``python -m grader puzzle18 --file my.py``, decided by the caller), by a ``check(softmax_kernel,
  "puzzle18")`` call (the notebooks' check cells), by a ``Puzzle(id="puzzle18", kernel=...)``
  spec pasted with it, or in a notebook by the course's cell id (``puzzle18-kernel``) of the
  cell that defines the kernel;
* or, in a file named after no puzzle (``alice.py``, a notebook), the kernel's name is the
  puzzle's alone.

Everything else is **skipped, and said**: each skip is a line that names the kernel, the file,
the puzzle and how to name it. Reads text only, runs nothing.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Mapping

from grader.course.loader import PUZZLE_FILE
from grader.course.syntax import parse

_ID = re.compile(r"^(puzzle\d\d)(?:_|-|\.|$)")


@dataclass(frozen=True)
class Claim:
    """What one file is graded for, and a line per puzzle whose kernel it holds but is skipped."""

    puzzles: tuple[str, ...]
    skipped: Mapping[str, str]  # puzzle id -> why this file is not graded for it
    unsure: tuple[str, ...] = ()  # of those, the ones skipped because the file does not say which


def file_puzzle(name: str) -> str | None:
    """The puzzle a file is named after (``puzzle18_mine.py``, ``puzzle18_mine.ipynb``, the
    copy of a notebook ``puzzle18_mine_ipynb.py``), else None."""
    match = PUZZLE_FILE.match(name) or re.match(r"^(puzzle\d\d)_\w+\.ipynb$", name)
    return match.group(1) if match else None


def _calls(tree: ast.AST) -> dict[str, set[str]]:
    """kernel -> puzzles named for it by ``check(kernel, "puzzleNN")`` or ``Puzzle(id=..., kernel=...)``."""
    named: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        args = [a.value if isinstance(a, ast.Constant) else (a.id if isinstance(a, ast.Name) else None)
                for a in node.args]
        keywords = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
        if func == "check" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
            kernel, puzzle = args[0], args[1]
        elif func == "Puzzle" and isinstance(keywords.get("id"), str) and isinstance(keywords.get("kernel"), str):
            kernel, puzzle = keywords["kernel"], keywords["id"]
        else:
            continue
        if (found := _ID.match(puzzle)) is not None:
            named.setdefault(kernel, set()).add(found.group(1))
    return named


def _merge(into: dict[str, set[str]], more: Mapping[str, set[str]]) -> None:
    for kernel, puzzles in more.items():
        into.setdefault(kernel, set()).update(puzzles)


def named_in_python(text: str) -> dict[str, set[str]]:
    """kernel -> the puzzles a .py file names for it (see the module's docstring)."""
    try:
        return _calls(parse(text))
    except (SyntaxError, ValueError, RecursionError):
        return {}


def named_in_notebook(text: str) -> dict[str, set[str]]:
    """kernel -> the puzzles a notebook names for it: its check calls and its Puzzle specs, and
    the course's cell ids (``puzzle18-kernel``) of the cells that define it."""
    try:
        cells = [c for c in json.loads(text).get("cells", []) if c.get("cell_type") == "code"]
    except (ValueError, AttributeError):
        return {}
    named: dict[str, set[str]] = {}
    for cell in cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        try:
            tree = parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        _merge(named, _calls(tree))
        found = _ID.match(str(cell.get("id", "")))
        if found is not None:
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    named.setdefault(node.name, set()).add(found.group(1))
    return named


def claim(kernels: Mapping[str, str | None], shown: str, file_name: str, defined: set[str],
          named: Mapping[str, set[str]]) -> Claim:
    """The puzzles a file is graded for. ``kernels``: each puzzle's kernel name; ``shown``: the
    file as the learner knows it; ``file_name``: the name the rule reads (a notebook's copy's
    name is fine); ``defined``: its top-level names; ``named``: kernel -> puzzles the learner
    named for it (:func:`named_in_python`, :func:`named_in_notebook`)."""
    owner = file_puzzle(file_name)
    sharing: dict[str, list[str]] = {}
    for pid, kernel in kernels.items():
        if kernel:
            sharing.setdefault(kernel, []).append(pid)
    puzzles, skipped, unsure = [], {}, []
    for pid, kernel in kernels.items():
        if not kernel or kernel not in defined:
            continue
        mine = named.get(kernel, set())
        others = [p for p in sharing[kernel] if p != pid]
        how = f'name the file {pid}_….py, or add `check({kernel}, "{pid}")`'
        if pid in mine or (owner == pid) or (owner is None and not mine and not others):
            puzzles.append(pid)
        elif mine:
            skipped[pid] = (f"`{kernel}` in {shown} is not graded for {pid}: the file names it for "
                            f"{' and '.join(sorted(mine))}")
        elif owner is not None:
            skipped[pid] = (f"`{kernel}` in {shown} is not graded for {pid}: the file's name makes it {owner}'s; "
                            f"put {pid}'s kernel in a file named {pid}_….py")
        else:
            unsure.append(pid)
            skipped[pid] = (f"`{kernel}` in {shown} is not graded for {pid}: it is the kernel of "
                            f"{' and '.join(sorted(sharing[kernel]))}, and the file does not say which; {how}")
    return Claim(tuple(puzzles), skipped, tuple(unsure))
