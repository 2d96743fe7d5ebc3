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
import sys
import tempfile
import traceback
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

# No test reads the learner's folders (issue 44: `make test` passes whatever they hold). An audit hook
# sees every file this process opens or lists there; tests/read_guard/sitecustomize.py does the same in
# the Python processes the tests start (those given an environment of their own aside) and writes
# what it saw to a log. Either way, the test it happened in fails.
LEARNERS_OWN = tuple(str(ROOT / folder) for folder in ("puzzles", "notebooks"))
READ_LOG = Path(tempfile.mkdtemp(prefix="tp-read-guard-")) / "read.log"
READ_LOG.touch()
os.environ["TP_TESTS_LEARNERS_OWN"] = os.pathsep.join(LEARNERS_OWN)
os.environ["TP_TESTS_READ_LOG"] = str(READ_LOG)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "tests" / "read_guard"),
                                                         os.environ.get("PYTHONPATH")]))
_read_there: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if event not in ("open", "os.listdir", "os.scandir"):
        return
    path = args[0] if args else None
    if isinstance(path, int):  # a file descriptor: its opening was seen
        return
    try:
        path = os.fsdecode(path if path is not None else ".")
    except (TypeError, ValueError):
        return
    if event == "open" and len(args) > 1 and args[1] is None and not os.path.isabs(path):
        return  # os.open, maybe relative to a dir_fd the event does not give (a submission's walk)
    path = os.path.abspath(path)
    if any(path == folder or path.startswith(folder + os.sep) for folder in LEARNERS_OWN):
        _read_there.append(f"{path} (from {_reader()})")


def _reader() -> str:
    """The test's line that led to the read, and the grader's that made it: where to look. No
    source line is read (that would open a learner's file again, and come back here)."""
    stack = traceback.StackSummary.extract(traceback.walk_stack(None), lookup_lines=False)
    frames = [f for f in reversed(stack) if f.filename.startswith(str(ROOT))][:-2]
    tests = [f for f in frames if "/tests/" in f.filename]
    shown = ([tests[-1]] if tests else []) + ([frames[-1]] if frames and (not tests or frames[-1] is not tests[-1]) else [])
    return " -> ".join(f"{os.path.relpath(f.filename, ROOT)}:{f.lineno}" for f in shown) or "?"


sys.addaudithook(_audit)


@pytest.fixture(autouse=True)
def _reads_no_learner_folder():
    yield  # what was read since the last test: its fixtures' set-up and its module's import too
    seen = sorted(set(_read_there))
    _read_there.clear()
    logged = READ_LOG.read_text(encoding="utf-8", errors="replace").splitlines()
    if logged:
        READ_LOG.write_text("")
        seen += sorted({f"{line.split(chr(9))[0]} (by `{line.split(chr(9))[-1]}`)" for line in logged})
    if seen:
        pytest.fail("this test read the learner's own files, which no test may (a learner's solved or broken "
                    f"puzzle would change its result): {'; '.join(seen[:3])}. Read the course as committed: "
                    "tests/pristine.py's PRISTINE, or `--root PRISTINE` for a command", pytrace=False)


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
    return Graded("wrong_results", targets, Options(timeout=20, library=(str(COURSE.root / "solutions"),)),
                  request.session)
