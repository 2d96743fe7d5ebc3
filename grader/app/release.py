"""``python -m grader release OUT_DIR``: the learner's copy of the course, without solutions.

Copies the puzzles, the grader and the packaging files, and writes the learner's README (from
``grader/app/learner_readme.md``, not the instructor's) and the learner's checks (``test_course.py``,
from ``grader/app/learner_test_course.py``: ``pytest`` there passes). Each puzzle goes out as a stub
whatever the instructor's copy holds: a kernel still the stub as shipped goes out as it is, every
other function of the learner's part keeps its signature and docstring and gets a stub body, and
the notebooks are built from those files; ``puzzles/.stubs.json`` holds the released stubs'
prints (:mod:`grader.source.stubs`). Nothing from
``solutions/`` or the wrong-kernel corpus goes out, and the copy is checked for any solution's
kernel body before this returns.

A release may be one student's (``--seed-secret`` and ``--student``, or a roster: one release
each): each puzzle's free constants (:mod:`grader.course.variant`) then take that student's
values, drawn as ``batch`` draws them. The files state them: the statement in each puzzle's
docstring, and the stub's own constant where the course's stub holds one (``Variant.code``);
``variant.json`` at the top keeps the values (never the secret), so that the learner's grader,
their notebooks and their hints use them too.
"""
from __future__ import annotations

import ast
import io
import shutil
import tokenize
from pathlib import Path
from string import Template

from grader.course.loader import Course, PuzzleLoadError
from grader.course.puzzle import Puzzle
from grader.course.syntax import parse
from grader.course.variant import (
    FALLBACK_FOLDER,
    VARIANT_FILE,
    StudentVariant,
    drawn,
    restate,
    student_folder,
    student_key,
)
from grader.source import stubs as stub_prints
from grader.source import variant_code
from grader.source.source_lines import is_stub_body, marker_lines

SHIPPED = ("puzzles", "grader", "pyproject.toml", "constraints.txt", "docs")
HERE = Path(__file__).resolve().parent


class LeakError(Exception):
    pass


def stubbed(path: Path, as_is: frozenset[str] = frozenset()) -> str:
    """A puzzle file's text with every function of the learner's part reduced to its stub: the
    decorators, the signature and the docstring stay; the body becomes "# Your code here." and
    ``pass`` (``raise NotImplementedError`` for a method). Code outside the part is the course's
    and stays as it is, and so do the functions named in ``as_is`` (a stub as shipped that holds
    more than ``pass``: a Helion kernel's allocation and loop). A file whose part cannot be found
    or read raises PuzzleLoadError."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    opening, closing = marker_lines(lines)
    if len(opening) != 1 or len(closing) != 1 or closing[0] < opening[0]:
        raise PuzzleLoadError(f"{path.name}: cannot release it: the learner's part needs one "
                              f"`# ---- your part: ... ----` line and one closing `# ------...` line after it")
    first = opening[0] + 1
    part = "".join(lines[first:closing[0]])
    try:
        tree = parse(part)
    except SyntaxError as exc:
        raise PuzzleLoadError(f"{path.name}: cannot release it: the learner's part does not parse "
                              f"(line {first + (exc.lineno or 0)}: {exc.msg})") from exc
    functions = [(node, False) for node in tree.body if isinstance(node, ast.FunctionDef)]
    functions += [(method, True) for node in tree.body if isinstance(node, ast.ClassDef)
                  for method in node.body if isinstance(method, ast.FunctionDef)]
    for func, method in sorted(functions, key=lambda f: -f[0].lineno):  # bottom up: line numbers hold
        if is_stub_body(func) or func.name in as_is:
            continue
        body = func.body
        keep = body[:1] if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else []
        # after the docstring, else right after the `def ...:` line: the solution's comments go too
        start = first + (keep[0].end_lineno if keep else _header_end(part, func))
        end = first + body[-1].end_lineno
        indent = " " * body[0].col_offset
        stub = [f"{indent}# Your code here.\n", f"{indent}{'raise NotImplementedError' if method else 'pass'}\n"]
        lines[start:end] = stub
    return "".join(lines)


def solution_bodies(course: Course) -> dict[str, list[str]]:
    """Every solution kernel's body, normalised, keyed by file: the text that must not leak."""
    bodies = {}
    for path in sorted((course.root / "solutions").glob("*.py")):
        tree = parse(path.read_text())
        bodies[path.name] = [ast.unparse(ast.Module(body=node.body, type_ignores=[]))
                             for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    return bodies


def leaks(course: Course, out: Path) -> list[str]:
    found = []
    shipped = {}
    for path in out.rglob("*.py"):
        try:
            tree = parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        shipped[path] = {ast.unparse(ast.Module(body=n.body, type_ignores=[]))
                         for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    notebooks = " ".join(p.read_text() for p in out.rglob("*.ipynb"))
    # lines the released files show themselves (a Helion stub's allocation and loop) give nothing away
    given = {line for bodies in shipped.values() for body in bodies for line in body.splitlines()}
    for name, bodies in solution_bodies(course).items():
        for body in bodies:
            if len(body.splitlines()) < 3:
                continue  # one-liners (a reshape, a return) are not solutions
            for path, defined in shipped.items():
                if body in defined:
                    found.append(f"{path.relative_to(out)} holds a kernel body of solutions/{name}")
            own = [line for line in body.splitlines() if line not in given]
            if len(own) >= 2 and own[0] in notebooks and own[1] in notebooks:
                found.append(f"a notebook holds lines of solutions/{name}")
    return found


def _header_end(source: str, func: ast.FunctionDef) -> int:
    """The line (1-based) of the colon that ends ``func``'s ``def`` header."""
    depth, started = 0, False
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if not started:
            started = (token.type == tokenize.NAME and token.string == "def"
                       and token.start == (func.lineno, func.col_offset))
            continue
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif token.type == tokenize.OP and token.string == ":" and depth == 0:
            return token.start[0]
    return func.body[0].lineno - 1


def stated(text: str, puzzle: Puzzle) -> str:
    """A stubbed puzzle file as the learner gets it: the module docstring saying the puzzle's
    values of its variants (as ``Puzzle.statement`` does), and each variant the stub holds
    (``Variant.code``) written with its value. The defaults leave the file as it is."""
    if puzzle.is_default:
        return text
    tree = parse(text)
    head = tree.body[0] if tree.body else None
    if isinstance(head, ast.Expr) and isinstance(head.value, ast.Constant) and isinstance(head.value.value, str):
        lines = text.splitlines(keepends=True)
        docstring = restate("".join(lines[head.lineno - 1:head.end_lineno]), puzzle.variants,
                            puzzle.variant_values, puzzle.id)
        text = "".join(lines[:head.lineno - 1]) + docstring + "".join(lines[head.end_lineno:])
    for variant in puzzle.variants:
        if variant.code is not None:
            value = puzzle.variant_values[variant.name]
            text = variant_code.rewrite(text, variant.code, repr(value))
    return text


def students_variant(course: Course, secret: int, student: str) -> StudentVariant:
    """The student's values of every puzzle's variants, as ``batch --seed-secret`` grades them."""
    values = {}
    for puzzle_id in course.ids:
        puzzle = course.puzzle(puzzle_id)
        if puzzle.variants:
            values[puzzle_id] = drawn(puzzle.variants, puzzle_id, secret, student)
    return StudentVariant(student.strip(), values)


def read_roster(path: Path) -> list[str]:
    """Student ids, one a line (the first comma-separated field: a CSV's first column); blank
    lines and ``#`` comments skipped, a header ``student`` or ``id`` too. Any id is taken
    (spaces, apostrophes, accents, CJK): each maps to one folder (:func:`student_folder`), the
    name their release has and their row in ``batch``; two ids that map to one folder are
    refused, since they would share their constants and their folder."""
    ids, seen = [], {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        field = line.split("#", 1)[0].split(",", 1)[0].strip()
        if not field or (number == 1 and field.casefold() in ("student", "id", "student_id")):
            continue
        if field in (".", "..") or "/" in field or "\\" in field:
            raise ValueError(f"{path}:{number}: {field!r} cannot name a student's folder (no `/` or `\\`)")
        folder = student_folder(field)
        if folder == FALLBACK_FOLDER and field != FALLBACK_FOLDER:
            raise ValueError(f"{path}:{number}: {field!r} has nothing usable as a folder name: give a letter or digit")
        if student_key(field) in seen:
            first, at = seen[student_key(field)]
            what = "is in the roster twice" if first.casefold() == field.casefold() else (
                f"and {first!r} (line {at}) map to one folder, `{folder}`, and would get the same constants")
            raise ValueError(f"{path}:{number}: {field!r} {what}: give each student their own id")
        seen[student_key(field)] = (field, number)
        ids.append(field)
    if not ids:
        raise ValueError(f"{path} names no student")
    return ids


def release_class(course: Course, out: Path, secret: int, students: list[str]) -> list[Path]:
    """One release per student, ``out/<folder>/`` (:func:`student_folder`: ``Zoë Ñúñez`` gets
    ``Zoë_Ñúñez/``), each with that student's values: those ``batch --variants`` draws for the
    folder handed back, under either name."""
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    folders = [out / student_folder(student) for student in students]
    for student, folder in zip(students, folders):
        release(course, folder, students_variant(course, secret, student))
    return folders


def release(course: Course, out: Path, variant: StudentVariant | None = None) -> list[Path]:
    """The learner's copy in ``out``; with ``variant``, one student's (see the module's docstring)."""
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    if not (course.root / "puzzles").is_dir():
        raise PuzzleLoadError(f"{course.root} has no puzzles/ folder: nothing to release")
    if variant is not None:
        student_key(variant.student)  # an empty id stops the release here
    puzzles = {}
    for puzzle_id in course.ids:  # a puzzle that does not load stops the release before anything is written
        puzzle = course.puzzle(puzzle_id)
        values = variant.values.get(puzzle_id) if variant is not None else None
        puzzles[course.puzzle_file(puzzle_id).name] = puzzle.with_variant(values) if values else puzzle
    stubs = {path.name: stated(stubbed(path, _shipped_as_is(course, pid)), puzzles[path.name])
             for pid, path in course.puzzle_files.items()}
    out.mkdir(parents=True, exist_ok=True)
    written = []
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".progress.json", "*.egg-info")
    for name in SHIPPED:
        src = course.root / name
        if src.is_dir():
            shutil.copytree(src, out / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, out / name)
        else:
            continue
        written.append(out / name)
    for name, text in stubs.items():
        _write(out / "puzzles" / name, text)
    # the released stubs' prints: what "not attempted" is compared with in the learner's copy
    stub_prints.write(out / "puzzles", stub_prints.prints(
        {pid: (stubs[path.name], puzzles[path.name]) for pid, path in course.puzzle_files.items()}))
    if variant is not None:
        written.append(_write(out / VARIANT_FILE, variant.to_json()))
    from grader.app import notebook_build  # the notebooks of the released stubs, not of the instructor's files
    released = Course(out)
    written.append(out / "notebooks")
    notebook_build.write(released)
    written.append(_write(out / "README.md", learner_readme(course)))
    # At the top, and pytest is pointed at it: the instructor's tests/ stays home.
    written.append(_write(out / "test_course.py", (HERE / "learner_test_course.py").read_text()))
    pyproject = out / "pyproject.toml"
    if pyproject.is_file():
        pyproject.write_text(pyproject.read_text().replace('testpaths = ["tests"]', 'testpaths = ["test_course.py"]'))
    problems = leaks(course, out)
    if problems:
        raise LeakError("; ".join(problems))
    return written


def _shipped_as_is(course: Course, puzzle_id: str) -> frozenset[str]:
    """The kernel's name where the instructor's file holds the stub as shipped: it goes out as it is."""
    puzzle = course.puzzle(puzzle_id)
    text = course.puzzle_file(puzzle_id).read_text(encoding="utf-8")
    return frozenset({puzzle.kernel}) if stub_prints.is_stub(course.root, puzzle, text) else frozenset()


def learner_readme(course: Course) -> str:
    """The learner's README: set-up, solving and checking, hints and progress; no instructor commands."""
    rows = "\n".join(f"| {pid} | {course.puzzle(pid).title} |" for pid in course.ids)
    return Template((HERE / "learner_readme.md").read_text()).substitute(puzzles=rows)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
