"""Checks that this copy of Triton Puzzles works here: run `pytest` in this folder.

Every puzzle must grade: a stub as `not attempted`, a solved puzzle as passed. A puzzle you
are still working on fails here too, with the command that shows why. The notebooks must
match puzzles/. These checks never touch your progress file.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
IDS = sorted(m.group(1) for p in (ROOT / "puzzles").glob("puzzle*.py")
             if (m := re.match(r"(puzzle\d\d)_\w+\.py$", p.name)))


def grader(*args, tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRITON_PUZZLES_PROGRESS": str(tmp / "progress.json")}
    return subprocess.run([sys.executable, "-m", "grader", *args, "--root", str(ROOT)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    run = grader("--all", "--json", tmp=tmp_path_factory.mktemp("grading"))
    assert run.returncode in (0, 1), run.stderr[-3000:]
    return {result["puzzle"]: result for result in json.loads(run.stdout)["results"]}


@pytest.mark.parametrize("puzzle_id", IDS)
def test_puzzle_grades(graded, puzzle_id):
    result = graded[puzzle_id]
    if result["status"] in ("unsupported", "interpreter_limit"):
        pytest.skip(f"{puzzle_id} cannot be graded with this Triton: {result.get('message', '')}")
    assert result["status"] in ("pass", "not_attempted"), (
        f"{puzzle_id} is {result['status']}: `python -m grader {puzzle_id}` says why")


def test_notebooks_are_up_to_date(tmp_path):
    run = grader("notebooks", "--check", tmp=tmp_path)
    assert run.returncode == 0, run.stderr
