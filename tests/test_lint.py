"""ruff holds the rules pyproject.toml names ([tool.ruff]): no syntax errors, undefined names,
unused imports or variables, for the oldest Python the README promises."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pristine import PRISTINE

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str] | None:
    here = Path(sys.executable).with_name("ruff")
    found = str(here) if here.exists() else shutil.which("ruff")
    return [found] if found else None


def test_ruff_finds_nothing():
    """The learner's puzzles/ is left out: its half-typed kernels are not the course's code. The
    puzzles as committed are checked in the pristine copy, which holds pyproject.toml's rules."""
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed: pip install -e '.[test]' -c constraints.txt adds it")
    done = subprocess.run([*ruff, "check", "--output-format", "concise", "--extend-exclude", "puzzles", "."],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run([*ruff, "check", "--output-format", "concise", "puzzles"], cwd=PRISTINE,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
