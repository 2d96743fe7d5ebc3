"""Whether a learner's kernel is still the puzzle's stub as shipped: "not attempted".

The answer compares code, never the shape of a body: the kernel's definition is parsed, made
plain (:func:`canonical`) and compared with the print of the course's stub, kept in
``puzzles/.stubs.json`` when the course was written. A kernel that differs from the stub in
anything it does is attempted, and graded: a Helion kernel that computes ``z = x + y`` before a
loop left as the stub's ``pass`` fails as host work, with its line, as on a GPU.

Made plain: comments and docstrings go, and so do the statements that do nothing (``pass``,
``...``, a bare ``return``, ``raise NotImplementedError``), wherever they stand; a puzzle's free
constant the stub holds (``Variant.code``) reads 0, so that a student's release, which writes
their value there, is still its stub. Line numbers and formatting never count.

``python -m grader.source.stubs [ROOT]`` writes the prints of a course's puzzle files as they
are; a course's tests check the committed file against its puzzles (tests/test_stubs.py).
"""
from __future__ import annotations

import ast
import hashlib
import json
import sys
from pathlib import Path

from grader.course.syntax import parse
from grader.source import variant_code

STUBS_FILE = ".stubs.json"  # in puzzles/, beside the files it describes
ABOUT = ("The print of each puzzle's stub as shipped: a kernel with the same print is 'not attempted'. "
         "Written by `python -m grader.source.stubs`; do not edit.")


def _does_nothing(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):  # a docstring, `...`
        return True
    if isinstance(stmt, ast.Return) and (stmt.value is None or (
            isinstance(stmt.value, ast.Constant) and stmt.value.value is None)):
        return True
    return isinstance(stmt, ast.Raise) and stmt.exc is not None and "NotImplementedError" in ast.unparse(stmt.exc)


class _Plain(ast.NodeTransformer):
    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and all(isinstance(s, ast.stmt) for s in block):
                setattr(node, field, [s for s in block if not _does_nothing(s)])
        return node


def _dump(node) -> str:
    """``ast.dump`` without positions, and without empty fields: Python 3.12 adds ``type_params=[]``
    to every def, 3.13 leaves empty fields out of its own dump; a print must not change with them."""
    if isinstance(node, ast.AST):
        fields = ((name, getattr(node, name, None)) for name in node._fields if name not in ("type_comment", "kind"))
        return f"{type(node).__name__}(" + ", ".join(f"{name}={_dump(value)}" for name, value in fields
                                                     if value is not None and value != []) + ")"
    if isinstance(node, list):
        return "[" + ", ".join(_dump(item) for item in node) + "]"
    return repr(node)


def definition(source: str, name: str) -> ast.FunctionDef | ast.ClassDef | None:
    """The top-level ``def`` or ``class`` that binds ``name`` last, as Python keeps it; None where
    the file does not parse, or the last binding of the name is something else (an assignment,
    an import: not the stub's ``def``)."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return None
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            found = node
        elif name in _bound(node):
            found = None
    return found


def _bound(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def canonical(source: str, name: str, codes: tuple[str, ...] = ()) -> str | None:
    """``name``'s definition in ``source``, made plain (see the module's docstring); None where the
    file defines no such ``def`` or ``class`` at its top level."""
    for code in codes:
        source = variant_code.rewrite(source, code, "0")
    node = definition(source, name)
    return None if node is None else _dump(_Plain().visit(node))


def stub_print(source: str, name: str, codes: tuple[str, ...] = ()) -> str | None:
    plain = canonical(source, name, codes)
    return None if plain is None else hashlib.sha256(plain.encode()).hexdigest()[:20]


def does_nothing(source: str, name: str) -> bool:
    """A definition whose every body, made plain, is empty: the rule where a course keeps no prints
    (a folder of a few puzzle files copied by hand). A function's body of only ``pass``; of a class
    (an autograd Function), every method's."""
    node = definition(source, name)
    if node is None:
        return False
    node = _Plain().visit(node)
    if isinstance(node, ast.ClassDef):
        methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return bool(methods) and all(not m.body for m in methods)
    return not node.body


def codes_of(puzzle) -> tuple[str, ...]:
    return tuple(v.code for v in puzzle.variants if v.code)


def shipped(root: Path) -> dict[str, str]:
    """puzzle id -> the print of its stub as shipped; empty where the course keeps none."""
    try:
        kept = json.loads((Path(root) / "puzzles" / STUBS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    stubs = kept.get("stubs") if isinstance(kept, dict) else None
    return {pid: entry["print"] for pid, entry in (stubs or {}).items()
            if isinstance(entry, dict) and isinstance(entry.get("print"), str)}


def is_stub(root: Path, puzzle, source: str) -> bool:
    """Whether ``source`` defines ``puzzle``'s kernel as the stub as shipped (``root``: the course)."""
    kept = shipped(root).get(puzzle.id)
    if kept is None:
        return does_nothing(source, puzzle.kernel)
    return stub_print(source, puzzle.kernel, codes_of(puzzle)) == kept


def prints(texts: dict[str, tuple[str, object]]) -> dict:
    """The file's contents for ``texts``: puzzle id -> (the puzzle file's text, its Puzzle)."""
    stubs = {}
    for pid, (text, puzzle) in sorted(texts.items()):
        made = stub_print(text, puzzle.kernel, codes_of(puzzle))
        if made is not None:
            stubs[pid] = {"kernel": puzzle.kernel, "print": made}
    return {"about": ABOUT, "stubs": stubs}


def write(folder: Path, contents: dict) -> Path:
    path = Path(folder) / STUBS_FILE
    path.write_text(json.dumps(contents, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def of_course(course) -> dict:
    """The prints of a course's puzzle files as they are now."""
    return prints({pid: (course.puzzle_file(pid).read_text(encoding="utf-8"), course.puzzle(pid))
                   for pid in course.ids})


def main(argv: list[str]) -> int:
    from grader.course.loader import Course, find_root
    course = Course(Path(argv[0]).resolve() if argv else find_root())
    path = write(course.root / "puzzles", of_course(course))
    print(f"wrote {path} ({len(course.ids)} puzzles)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
