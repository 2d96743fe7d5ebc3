"""`make test` passes whatever a learner holds in puzzles/ and notebooks/ (issue 44, README "Tests").

Two proofs. Cheap, in every run: conftest's read guard fails any test that reads those folders,
in this process or in a Python it starts; the first tests here show that the guard sees such a
read. Slow: a clone of this checkout whose learner solved every puzzle in puzzles/, broke three
(a wrong kernel, a half-typed line, a renamed kernel), solved one in a notebook and added files
of their own runs the fast tier and the command-line tests that read the course.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import conftest
from paths import ROOT
from pristine import FOLDERS, PRISTINE

LEARNER_FILE = ROOT / "puzzles" / "puzzle01_constant_add.py"


def test_the_guard_sees_a_read_here():
    LEARNER_FILE.read_text()
    seen, conftest._read_there[:] = list(conftest._read_there), []
    assert len(seen) == 1 and seen[0].startswith(f"{LEARNER_FILE} (from tests/test_learner_state.py:")


def test_the_guard_sees_a_folder_listed_here_and_not_a_copy_read():
    sorted((ROOT / "notebooks").iterdir())
    (PRISTINE / "puzzles" / LEARNER_FILE.name).read_text()
    seen, conftest._read_there[:] = list(conftest._read_there), []
    assert [entry.split(" (from ")[0] for entry in seen] == [str(ROOT / "notebooks")]


def test_the_guard_sees_a_read_in_a_python_this_starts():
    subprocess.run([sys.executable, "-c", f"open({str(LEARNER_FILE)!r}).read()"], check=True, timeout=60)
    logged = conftest.READ_LOG.read_text()
    conftest.READ_LOG.write_text("")
    assert logged.startswith(f"{LEARNER_FILE}\t-c")


# ---- a learner's clone: every puzzle solved, three broken --------------------------------------

def _learner_part(text: str) -> tuple[list[str], int, int]:
    lines = text.splitlines()
    opening = next(i for i, line in enumerate(lines) if line.startswith("# ---- your part"))
    closing = next(i for i in range(opening + 1, len(lines)) if lines[i].startswith("# ------"))
    return lines, opening, closing


def solve(puzzle: Path, solution: Path) -> None:
    """As a learner pastes a solution: the reference file in place of the learner's part."""
    lines, opening, closing = _learner_part(puzzle.read_text())
    puzzle.write_text("\n".join(lines[:opening + 1] + solution.read_text().splitlines() + lines[closing:]) + "\n")


def learners_clone(into: Path) -> Path:
    """This checkout's files (its code as it is now, the course as committed) in a new repository
    whose HEAD is them; then, uncommitted, what a learner did."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if name.split("/")[0] in FOLDERS or not (ROOT / name).is_file():
            continue
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, into / name)
    for folder in FOLDERS:
        shutil.copytree(PRISTINE / folder, into / folder)
    git = ["git", "-C", str(into), "-c", "user.name=learner", "-c", "user.email=learner@example.com"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the course as cloned"]):
        subprocess.run([*git, *step], check=True, capture_output=True)
    puzzles = into / "puzzles"
    for path in sorted(puzzles.glob("puzzle[0-9][0-9]_*.py")):
        solve(path, into / "solutions" / path.name)
    # three broken: a wrong kernel (no mask), a line half typed, a kernel renamed away
    solve(next(puzzles.glob("puzzle02_*.py")), ROOT / "tests" / "wrong_kernels" / "puzzle02_missing_mask.py")
    half = next(puzzles.glob("puzzle07_*.py"))
    lines, opening, closing = _learner_part(half.read_text())
    half.write_text("\n".join(lines[:closing] + ["    acc = tl.zeros(("] + lines[closing:]) + "\n")
    renamed = next(puzzles.glob("puzzle19_*.py"))
    renamed.write_text(renamed.read_text().replace("def online_softmax_kernel(", "def my_softmax(", 1))
    # the notebooks: a kernel written in a cell, progress, a scratch notebook and a checkpoint
    classic = into / "notebooks" / "01_classic.ipynb"
    classic.write_text(classic.read_text().replace("# Your code here.", "x = 1  # Your code here.", 1))
    (into / "notebooks" / ".progress.json").write_text('{"puzzle01": {"status": "passed"}}')
    (into / "notebooks" / "scratch.ipynb").write_text(classic.read_text())
    (into / "notebooks" / ".ipynb_checkpoints").mkdir()
    (into / "puzzles" / "my_helpers.py").write_text("def helper(:\n")
    return into


# The command-line tests that read the course, beside the fast tier; each takes seconds.
COMMANDS = ["tests/test_cli.py::test_stub_is_not_attempted_and_exits_1",
            "tests/test_cli.py::test_solution_json_document",
            "tests/test_batch.py::test_release_has_no_solutions",
            "tests/test_learner_path.py::test_release_has_a_learner_readme",
            "tests/test_doctor.py::test_doctor_json",
            "tests/test_lint.py", "tests/test_python_versions.py", "tests/test_ready.py", "tests/test_make_check.py"]


@pytest.mark.slow  # runs the fast tier and some command-line tests again, in a clone
def test_the_tests_pass_in_a_learners_clone(tmp_path):
    clone = learners_clone(tmp_path / "clone")
    changed = subprocess.run(["git", "-C", str(clone), "status", "--short"], capture_output=True, text=True,
                             check=True).stdout
    assert "puzzles/puzzle07_long_sum.py" in changed and "notebooks/scratch.ipynb" in changed
    env = {k: v for k, v in os.environ.items() if not k.startswith("TP_TESTS_")}
    env["PYTHONPATH"] = str(clone)  # the clone's grader, in the commands its tests start too
    for selected in (["-m", "not slow"], COMMANDS):
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selected],
                             cwd=clone, env=env, capture_output=True, text=True, timeout=3000)
        assert run.returncode == 0, f"pytest {' '.join(selected)}:\n" + run.stdout[-6000:] + run.stderr[-2000:]
    # the learner's files are as they left them
    assert "acc = tl.zeros((" in next((clone / "puzzles").glob("puzzle07_*.py")).read_text()
    assert (clone / "notebooks" / ".progress.json").read_text() == '{"puzzle01": {"status": "passed"}}'
