"""``python -m grader release OUT_DIR``: the learner's copy of the course, without solutions.

Copies the puzzles (stubs), the notebooks, the grader and the packaging files, and writes the
learner's README (from ``grader/learner_readme.md``, not the instructor's) and the learner's
checks (``test_course.py``, from ``grader/learner_test_course.py``: ``pytest`` there passes).
Nothing from ``solutions/`` or the wrong-kernel corpus goes out, and the copy is checked for
any solution's kernel body before this returns.
"""
from __future__ import annotations

import ast
import shutil
from pathlib import Path
from string import Template

from .course import Course

SHIPPED = ("puzzles", "notebooks", "grader", "pyproject.toml", "constraints.txt", "docs")
HERE = Path(__file__).resolve().parent


class LeakError(Exception):
    pass


def solution_bodies(course: Course) -> dict[str, list[str]]:
    """Every solution kernel's body, normalised, keyed by file: the text that must not leak."""
    bodies = {}
    for path in sorted((course.root / "solutions").glob("*.py")):
        tree = ast.parse(path.read_text())
        bodies[path.name] = [ast.unparse(ast.Module(body=node.body, type_ignores=[]))
                             for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    return bodies


def leaks(course: Course, out: Path) -> list[str]:
    found = []
    shipped = {}
    for path in out.rglob("*.py"):
        try:
            tree = ast.parse(path.read_text())
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


def release(course: Course, out: Path) -> list[Path]:
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
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
