"""``python -m grader release OUT_DIR``: the learner's copy of the course, without solutions.

Copies the puzzles, the grader and the packaging files, and writes the learner's README (from
``grader/app/learner_readme.md``, not the instructor's) and the learner's checks (``test_course.py``,
from ``grader/app/learner_test_course.py``: ``pytest`` there passes). Each puzzle goes out as a stub
whatever the instructor's copy holds: every function of the learner's part keeps its signature and
docstring and gets a stub body, and the notebooks are built from those files. Nothing from
``solutions/`` or the wrong-kernel corpus goes out, and the copy is checked for any solution's
kernel body before this returns.
"""
from __future__ import annotations

import ast
import io
import shutil
import tokenize
from pathlib import Path
from string import Template

from grader.course.loader import Course, PuzzleLoadError
from grader.source.source_lines import is_stub_body, marker_lines
from grader.course.syntax import parse

SHIPPED = ("puzzles", "grader", "pyproject.toml", "constraints.txt", "docs")
HERE = Path(__file__).resolve().parent


class LeakError(Exception):
    pass


def stubbed(path: Path) -> str:
    """A puzzle file's text with every function of the learner's part reduced to its stub: the
    decorators, the signature and the docstring stay; the body becomes "# Your code here." and
    ``pass`` (``raise NotImplementedError`` for a method). Code outside the part is the course's
    and stays as it is. A file whose part cannot be found or read raises PuzzleLoadError."""
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
        if is_stub_body(func):
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
    for name, bodies in solution_bodies(course).items():
        for body in bodies:
            if len(body.splitlines()) < 3:
                continue  # one-liners (a reshape, a return) are not solutions
            for path, defined in shipped.items():
                if body in defined:
                    found.append(f"{path.relative_to(out)} holds a kernel body of solutions/{name}")
            if body.splitlines()[0] in notebooks and body.splitlines()[1] in notebooks:
                found.append(f"a notebook holds lines of solutions/{name}")
    return found


def _header_end(source: str, func: ast.FunctionDef) -> int:
    """The line (1-based) of the colon that ends ``func``'s ``def`` header."""
    depth, started = 0, False
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if not started:
            started = token.type == tokenize.NAME and token.string == "def" and token.start == (func.lineno, func.col_offset)
            continue
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif token.type == tokenize.OP and token.string == ":" and depth == 0:
            return token.start[0]
    return func.body[0].lineno - 1


def release(course: Course, out: Path) -> list[Path]:
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    if not (course.root / "puzzles").is_dir():
        raise PuzzleLoadError(f"{course.root} has no puzzles/ folder: nothing to release")
    for puzzle_id in course.ids:  # a puzzle that does not load stops the release before anything is written
        course.puzzle(puzzle_id)
    stubs = {path.name: stubbed(path) for path in course.puzzle_files.values()}
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


def learner_readme(course: Course) -> str:
    """The learner's README: set-up, solving and checking, hints and progress; no instructor commands."""
    rows = "\n".join(f"| {pid} | {course.puzzle(pid).title} |" for pid in course.ids)
    return Template((HERE / "learner_readme.md").read_text()).substitute(puzzles=rows)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
