"""The learner's path: hints one at a time, progress from the command line, and a release that
works on its own (its README, its own `pytest`, instructor commands that say they are not there)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.app.learner import plain
from grader.app.notebook import HintText
from grader.course.loader import Course
from paths import ROOT
from pristine import PRISTINE, whole_course

PROGRESS_ENV = "TRITON_PUZZLES_PROGRESS"


def clean_env() -> dict:
    """The course's own progress file, not the one conftest points every other test at."""
    env = {k: v for k, v in os.environ.items() if k not in (PROGRESS_ENV, "PYTHONPATH")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests" / "read_guard")])  # conftest's read guard
    return env


def grader(*args, cwd=ROOT, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def course_copy(tmp_path) -> Path:
    copy = tmp_path / "course"
    for folder in ("puzzles", "grader", "notebooks", "solutions"):  # the course as committed (tests/pristine.py)
        shutil.copytree((ROOT if folder == "grader" else PRISTINE) / folder, copy / folder,
                        ignore=shutil.ignore_patterns("__pycache__", ".progress.json"))
    return copy


@pytest.mark.slow  # runs the command line in a subprocess
def test_hint_gives_one_more_each_time_then_says_there_are_no_more(course_copy):
    hints = Course(course_copy).puzzle("puzzle04").hints
    assert len(hints) == 3
    first = grader("hint", "puzzle04", "--root", course_copy)
    assert first.returncode == 0, first.stderr
    assert "Hint 1/3: Puzzle 3 over a 2-D grid of programs" in first.stdout and "Hint 2/3" not in first.stdout
    second = grader("hint", "4", "--root", course_copy)  # the same puzzle, named as the main command takes it
    assert "Hint 1/3" in second.stdout and "Hint 2/3: Columns of the tile" in second.stdout
    assert "Hint 3/3" not in second.stdout and "No more hints" not in second.stdout
    grader("hint", "puzzle04", "--root", course_copy)
    last = grader("hint", "puzzle04", "--root", course_copy)
    assert last.returncode == 0 and "No more hints for puzzle04: all 3 are shown above." in last.stdout
    # Piped, not a terminal: the code keeps its marks, so it never runs into the prose (issue 34).
    assert "rows: `tl.program_id(1) * B1 + tl.arange(0, B1)`." in last.stdout
    saved = json.loads((course_copy / "notebooks" / ".progress.json").read_text())
    assert saved["puzzle04"]["hints"] == 3, "kept where the notebooks keep it"
    shown = grader("progress", "--root", course_copy)
    assert "puzzle04: not attempted, 3 hint(s) seen" in shown.stdout


@pytest.mark.slow  # runs the command line in a subprocess
def test_hint_for_an_unknown_puzzle_is_a_usage_error(course_copy):
    run = grader("hint", "puzzle99", "--root", course_copy)
    assert run.returncode == 2 and "unknown puzzle 'puzzle99'" in run.stderr


@pytest.mark.slow  # runs the command line in a subprocess
def test_progress_counts_what_the_command_line_graded(course_copy):
    assert "no progress saved yet" in grader("progress", "--root", course_copy).stdout
    assert grader("puzzle01", "--root", course_copy).returncode == 1  # the stub
    saved = json.loads((course_copy / "notebooks" / ".progress.json").read_text())
    assert saved["puzzle01"]["status"] == "not attempted" and saved["puzzle01"]["checked"]
    # Someone else's kernels (the solutions, another file) are not the learner's progress.
    assert grader("puzzle01", "--solutions", "--root", course_copy).returncode == 0
    assert grader("puzzle01", "--file", course_copy / "solutions" / "puzzle01_constant_add.py",
                  "--root", course_copy).returncode == 0
    assert "puzzle01: not attempted (last checked" in grader("progress", "--root", course_copy).stdout
    # Solved in puzzles/: recorded as passed, beside a hint seen from the command line.
    stub = course_copy / "puzzles" / "puzzle01_constant_add.py"
    stub.write_text(stub.read_text() + "\n\n" + (course_copy / "solutions" / stub.name).read_text())
    assert grader("puzzle01", "--root", course_copy).returncode == 0
    grader("hint", "1", "--root", course_copy)
    shown = grader("progress", "--root", course_copy)
    assert "puzzle01: passed, 1 hint(s) seen (last checked" in shown.stdout and "1 passed" in shown.stdout


def test_hints_are_markdown_in_a_notebook_and_keep_their_code_marks_elsewhere(course):
    """Plain text keeps the backticks, so code never runs into the prose (issue 34); a terminal
    with colour styles the code instead (tests/test_messages.py)."""
    assert plain("add `tl.arange(0, B0)` to the start") == "add `tl.arange(0, B0)` to the start"
    shown = HintText("Hint 1/2: use `tl.load`\nHint 2/2: mask `x < N0`")
    assert shown.startswith("Hint 1/2") and "`tl.load`" in shown._repr_markdown_()
    assert "\n\n" in shown._repr_markdown_(), "one paragraph per hint"
    assert repr(shown) == "Hint 1/2: use `tl.load`\nHint 2/2: mask `x < N0`"


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "course"
    course = whole_course(tmp_path_factory.mktemp("instructor"))  # as committed, whatever a learner solved
    run = grader("release", out, "--root", course, timeout=120)
    assert run.returncode == 0, run.stderr
    return out


@pytest.mark.slow  # runs the command line in a subprocess
def test_release_has_a_learner_readme(released):
    readme = (released / "README.md").read_text()
    assert readme != (ROOT / "README.md").read_text()
    for wanted in ("## Set up", "python -m grader puzzle01", "python -m grader hint puzzle04",
                   "python -m grader progress", "| puzzle01 | Constant add |", "| puzzle17 |"):
        assert wanted in readme
    for instructor in ("python -m grader selftest", "python -m grader batch", "python -m grader release",
                       "--all --solutions", "$puzzles", "For instructors"):
        assert instructor not in readme


@pytest.mark.slow  # runs the release's own pytest in a subprocess
def test_pytest_passes_in_a_release(released):
    env = {k: v for k, v in os.environ.items() if k not in (PROGRESS_ENV, "PYTHONPATH")}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=released, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "passed" in run.stdout and "testpaths" not in run.stdout
    assert not (released / "notebooks" / ".progress.json").exists(), "the checks leave progress alone"


@pytest.mark.slow  # runs the command line in a subprocess
@pytest.mark.parametrize("args, what", [
    (["selftest"], "selftest"),
    (["puzzle01", "--solutions"], "--solutions"),
    (["--all", "--solutions"], "--solutions"),
    (["release", "elsewhere"], "release"),
])
def test_instructor_commands_in_a_release_say_so_and_exit_2(released, args, what):
    run = grader(*args, "--root", released, cwd=released, env={**clean_env(), "PYTHONPATH": ""})
    assert run.returncode == 2, run.stderr
    assert f"error: {what} needs the instructor's course" in run.stderr
    assert "Traceback" not in run.stderr and "no solution file" not in run.stderr
    assert not (released / "elsewhere").exists()


def test_progress_keeps_the_best_result_and_the_latest_attempt_and_a_stub_check_lowers_nothing(tmp_path):
    from grader.app.learner import ProgressFile, saved_progress
    store = ProgressFile(tmp_path / ".progress.json")
    store.attempt("puzzle07", "not attempted", "2026-11-25 10:00:00")
    store.attempt("puzzle07", "failing", "2026-11-25 10:05:00")
    store.attempt("puzzle07", "passed", "2026-11-25 10:09:00")
    store.attempt("puzzle07", "not attempted", "2026-11-25 10:30:00")  # the notebook's own stub, run top to bottom
    assert store.status("puzzle07") == "passed"
    store.attempt("puzzle07", "failing", "2026-11-25 11:00:00")  # broke it again
    entry = store.load()["puzzle07"]
    assert entry["best"] == {"status": "passed", "at": "2026-11-25 10:09:00"}
    assert entry["latest"] == {"status": "failing", "at": "2026-11-25 11:00:00"}
    assert store.status("puzzle07") == "passed"
    assert saved_progress([store.path])[0] == ("puzzle07: passed, failing at the latest check "
                                               "(last checked 2026-11-25 11:00:00)")


def test_progress_from_before_best_was_kept_is_read_as_the_best(tmp_path):
    from grader.app.learner import ProgressFile
    store = ProgressFile(tmp_path / ".progress.json")
    store.path.write_text(json.dumps({"puzzle02": {"status": "passed", "checked": "2026-11-20 09:00:00"}}))
    store.attempt("puzzle02", "failing", "2026-11-25 12:00:00")
    assert store.load()["puzzle02"]["best"] == {"status": "passed", "at": "2026-11-20 09:00:00"}
