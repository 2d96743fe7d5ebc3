"""The course as committed, for every test that reads or grades the course: the stubs are not
attempted, the notebooks are generated from the puzzles, the solutions pass, selftest, a release.

The README has learners solve in `puzzles/` and in `notebooks/`, and `make test` must pass
whatever those hold: solved, half solved, not parsing (issue 44). So no test reads those folders
in the working tree. ``PRISTINE`` is a temporary folder holding `puzzles/`, `solutions/` and
`notebooks/` as git's HEAD has them, made once a session, and always: were it made only where a
learner had changed something, a test that reads the repository's own folders instead would
pass in CI and fail on the learner's machine, as `test_selftest_passes_on_the_course` did. Outside
a git checkout the folders are copied as they are. The learner's files are never written.

Commands that copy the whole course (`release`) or read its configuration (ruff) get
:func:`whole_course`: these folders beside the working tree's code and top-level files.
"""
from __future__ import annotations

import atexit
import io
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from paths import ROOT

FOLDERS = ("puzzles", "solutions", "notebooks")
CORPUS = "tests/wrong_kernels"
# The course's configuration, as the working tree has it: the tested pins `doctor` compares with, the
# rules ruff reads (the course's own folders are linted here, never the learner's).
CONFIGURATION = ("pyproject.toml", "constraints.txt")
# Beside the folders in a whole course: what `release` ships (grader.app.release.SHIPPED), the
# README it replaces, and what `make` needs.
BESIDE = ("grader", "docs", "README.md", "Makefile", "scripts")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".progress.json*", ".ipynb_checkpoints", "*.egg-info")


def _committed(into: Path) -> bool:
    """Write the folders as HEAD holds them into ``into``; False where git cannot."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "HEAD", "--", *FOLDERS],
                              capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if done.returncode != 0:
        return False
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        if hasattr(tarfile, "data_filter"):  # Python 3.12, and 3.10.12 / 3.11.4 on
            archive.extractall(into, filter="data")
        else:
            archive.extractall(into)
    return all((into / folder).is_dir() for folder in FOLDERS)


def pristine_root() -> Path:
    """A new temporary folder with `puzzles/`, `solutions/` and `notebooks/` as committed; beside
    them, as the working tree has them (the tests' own data and the course's configuration, no
    learner's), the wrong-kernel corpus where `selftest` looks for it and the files
    :data:`CONFIGURATION` names. Removed when the session's process ends."""
    copy = Path(tempfile.mkdtemp(prefix="tp-pristine-"))
    atexit.register(shutil.rmtree, copy, ignore_errors=True)
    if not _committed(copy):
        for folder in FOLDERS:  # not a git checkout: the files are the course as it came
            shutil.rmtree(copy / folder, ignore_errors=True)
            shutil.copytree(ROOT / folder, copy / folder, ignore=SKIPPED)
    shutil.copytree(ROOT / CORPUS, copy / CORPUS, ignore=SKIPPED)
    for name in CONFIGURATION:
        shutil.copy2(ROOT / name, copy / name)
    return copy


def whole_course(into: Path) -> Path:
    """``into`` made a whole course: the committed folders, and the working tree's code and
    top-level files (the code under test)."""
    shutil.copytree(PRISTINE, into, ignore=SKIPPED, dirs_exist_ok=True)
    for name in BESIDE:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=SKIPPED)
        elif source.is_file():
            shutil.copy2(source, into / name)
    return into


PRISTINE = pristine_root()
