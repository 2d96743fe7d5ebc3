"""Shared fixtures: grading runs are slow (a worker process, the interpreter), so each set of
kernels (the solutions, the stubs, the wrong-kernel corpus) is graded once per test session,
in parallel, and the tests read the results.

Two tiers (README, "Tests"): `pytest` runs everything; `pytest -m "not slow"` leaves out the
tests marked `slow` and grades only what the tests it keeps ask for: puzzle01's solution, stub
and corpus, and the files whose messages test_messages.py pins.
"""
from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from grader.course.loader import Course, _field
from grader.judge.options import Options
from grader.judge.session import grade_many
from pristine import PRISTINE

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "tests" / "wrong_kernels"
# The course as committed (tests/pristine.py): a learner's solved puzzles and notebooks never make
# the course's own checks fail. ROOT itself unless the learner changed a file of the course.
COURSE = Course(PRISTINE)
# The Helion track needs the [helion] extra; without it (and unless CI's TP_REQUIRE_HELION=1 says it
# must be here) its puzzles are left out of every parametrised test, and its own tests skip.
HAVE_HELION = importlib.util.find_spec("helion") is not None or os.environ.get("TP_REQUIRE_HELION") == "1"
NO_HELION = "helion is not installed: pip install -e '.[helion]' -c constraints.txt"


def is_helion_puzzle(puzzle_id: str) -> bool:
    """Read from the puzzle file's text: loading it would import helion."""
    return _field(COURSE.puzzle_file(puzzle_id), "kind") == "helion"


PUZZLE_IDS = [p for p in COURSE.ids if HAVE_HELION or not is_helion_puzzle(p)]
FAST_PUZZLE = "puzzle01"  # the puzzle the fast tier grades end to end

# Grading the repo's puzzles/ from the command line records progress: never in the repo's own file.
os.environ.setdefault("TRITON_PUZZLES_PROGRESS",
                      os.path.join(tempfile.mkdtemp(prefix="tp-progress-"), "progress.json"))


def wrong_kernel_files() -> list[Path]:
    return sorted(p for p in WRONG.glob("puzzle*.py") if p.name[:8] in PUZZLE_IDS)


def slow_beyond_puzzle01(values, puzzle_of=lambda value: str(value)[:8]):
    """Parameters for a test run once per puzzle or corpus file: puzzle01's stay in the fast
    tier, the others are marked slow."""
    return [pytest.param(value, marks=() if puzzle_of(value) == FAST_PUZZLE else pytest.mark.slow)
            for value in values]


class Graded(Mapping):
    """The results of one set of targets, keyed by puzzle id or file name, graded once a session.

    Nothing is graded until a test reads a result. Then every target that the session's selected
    tests name in their parameters is graded in one parallel run (the full suite names them
    all). A key read later that no parameter named is graded then, on its own, and kept as
    well; iterating (`dict(results)`, `.items()`) grades all that are missing in one run, so a
    test that reads many keys no parameter names should iterate first.
    """

    def __init__(self, name: str, targets: dict[str, tuple[str, Path]], options: Options, session) -> None:
        self.name, self.targets, self.options, self.session = name, targets, options, session
        self.results: dict = {}
        self.first = True

    def _named_by_selected_tests(self) -> set[str]:
        named = set()
        for item in self.session.items:
            if self.name not in getattr(item, "fixturenames", ()):
                continue
            for value in getattr(getattr(item, "callspec", None), "params", {}).values():
                key = value.name if isinstance(value, Path) else value
                if isinstance(key, str) and key in self.targets:
                    named.add(key)
        return named

    def _grade(self, keys) -> None:
        if self.first:
            keys, self.first = set(keys) | self._named_by_selected_tests(), False
        todo = [key for key in self.targets if key in keys and key not in self.results]
        if todo:
            report = grade_many(COURSE, [self.targets[key] for key in todo], self.options, jobs=2)
            self.results.update(zip(todo, report.results))

    def __getitem__(self, key: str):
        if key not in self.targets:
            raise KeyError(key)
        if key not in self.results:
            self._grade({key})
        return self.results[key]

    def __iter__(self):
        self._grade(self.targets)
        return iter(self.targets)

    def __contains__(self, key) -> bool:  # without grading it
        return key in self.targets

    def __len__(self) -> int:
        return len(self.targets)


@pytest.fixture(scope="session")
def course() -> Course:
    return COURSE


@pytest.fixture(scope="session")
def solution_results(request) -> Graded:
    """Every reference solution, by puzzle id."""
    targets = {p: (p, COURSE.solution_file(p)) for p in PUZZLE_IDS}
    return Graded("solution_results", targets, Options(), request.session)


@pytest.fixture(scope="session")
def stub_results(request) -> Graded:
    """Every puzzle's stub as shipped, by puzzle id."""
    targets = {p: (p, COURSE.puzzle_file(p)) for p in PUZZLE_IDS}
    return Graded("stub_results", targets, Options(), request.session)


@pytest.fixture(scope="session")
def wrong_results(request) -> Graded:
    """Every kernel of the wrong-kernel corpus, by file name. Autograd entries import the
    earlier puzzles' reference kernels, hence the library."""
    targets = {path.name: (path.name[:8], path) for path in wrong_kernel_files()}
    return Graded("wrong_results", targets, Options(timeout=20, library=(str(ROOT / "solutions"),)),
                  request.session)
