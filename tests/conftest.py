"""Shared fixtures: grading runs are slow (a worker process, the interpreter), so each set of
kernels is graded once per test session, in parallel, and the tests read the results."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from grader.course import Course
from grader.options import Options
from grader.session import grade_many

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "tests" / "wrong_kernels"
COURSE = Course(ROOT)
PUZZLE_IDS = COURSE.ids

# Grading the repo's puzzles/ from the command line records progress: never in the repo's own file.
os.environ.setdefault("TRITON_PUZZLES_PROGRESS",
                      os.path.join(tempfile.mkdtemp(prefix="tp-progress-"), "progress.json"))


def wrong_kernel_files() -> list[Path]:
    return sorted(WRONG.glob("puzzle*.py"))


def _by_source(report) -> dict:
    return {(r.puzzle, Path(r.source).name): r for r in report.results}


@pytest.fixture(scope="session")
def course() -> Course:
    return COURSE


@pytest.fixture(scope="session")
def solution_results():
    report = grade_many(COURSE, [(p, COURSE.solution_file(p)) for p in PUZZLE_IDS], Options(), jobs=2)
    return {r.puzzle: r for r in report.results}


@pytest.fixture(scope="session")
def stub_results():
    report = grade_many(COURSE, [(p, COURSE.puzzle_file(p)) for p in PUZZLE_IDS], Options(), jobs=2)
    return {r.puzzle: r for r in report.results}


@pytest.fixture(scope="session")
def wrong_results():
    targets = [(path.name[:8], path) for path in wrong_kernel_files()]
    report = grade_many(COURSE, targets, Options(timeout=20, library=(str(ROOT / "solutions"),)), jobs=2)
    return {Path(r.source).name: r for r in report.results}
