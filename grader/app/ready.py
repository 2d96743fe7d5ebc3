"""Whether this Python can run the grader at all, asked before ``python -m grader`` imports its
command line: run outside the course's environment (a system ``python3``, a shell where ``.venv``
is not active), a missing package would otherwise surface as a traceback, or halfway through
grading as the grader's own error. Only the standard library, and nothing is imported: each
package is looked up with ``importlib.util.find_spec``, which costs well under a millisecond
(this runs on every call).
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# pyproject leaves torch out on purpose (its CPU build is installed first, README "Set up"), so it
# is the one name said here; the rest are read from pyproject's own list.
UNDECLARED = ("torch",)


def declared(root: Path = ROOT) -> list[str]:
    """The distributions ``[project] dependencies`` names in pyproject.toml (read with a pattern:
    tomllib needs Python 3.11). Without the file, the installed course's metadata."""
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        from importlib import metadata  # slower to import: only where pyproject.toml is not beside the code
        try:
            requires = metadata.requires("triton-puzzles") or []
        except metadata.PackageNotFoundError:
            return []
        return [re.match(r"[A-Za-z0-9_.-]+", r).group() for r in requires if "extra ==" not in r]
    block = re.search(r"^dependencies\s*=\s*\[(.*?)^\]", text, re.MULTILINE | re.DOTALL)
    return re.findall(r"^\s*[\"']([A-Za-z0-9_.-]+)", block.group(1), re.MULTILINE) if block else []


def missing(root: Path = ROOT, find=importlib.util.find_spec) -> list[str]:
    """The packages this Python cannot import (a distribution's module has its name, in lower
    case with ``_`` for ``-``: true of every one the course needs)."""
    names = [*declared(root), *UNDECLARED]
    return [name for name in names if find(name.lower().replace("-", "_")) is None]


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else str(path)


def advice(lacking: list[str], root: Path = ROOT, python: str = sys.executable, prefix: str = sys.prefix) -> str:
    """One line: what this Python lacks, and the command that gives a Python that has it."""
    said = f"error: this Python ({python}) cannot import {', '.join(lacking)}, which the grader needs"
    venv = root / ".venv"
    make = "`make check`" if _shown(root) == "." else f"`make -C {_shown(root)} check`"
    if Path(prefix).resolve() == venv.resolve():
        return (f"{said}. The course's environment {_shown(venv)} is incomplete: "
                f"`rm {_shown(venv / '.ready')}`, then {make} fills it again")
    if (venv / "bin" / "python").exists():
        return f"{said}. Activate the course's environment first: `source {_shown(venv / 'bin' / 'activate')}`"
    if (root / "Makefile").is_file():
        return f"{said}. Set the course up first with {make}, then `source {_shown(venv / 'bin' / 'activate')}`"
    return f"{said}. Install the course first, as its README's \"Set up\" says"


def require() -> None:
    """Return where this Python has everything; else say what to do and exit with 2 (a usage
    problem, as the grader's exit codes have it)."""
    lacking = missing()
    if lacking:
        print(advice(lacking), file=sys.stderr)
        raise SystemExit(2)
