"""The course as committed, for the tests that check the course itself (stubs are not attempted,
notebooks are generated from the puzzles, hints against solutions, a release's stubs).

The README has learners solve in `puzzles/` and in `notebooks/`: `make test` must still pass
there. So where a learner has changed a file of those folders, these tests read a copy whose
changed files are taken back from git's HEAD (`git show HEAD:path`); the learner's files are
never written. Where nothing was changed (CI, a fresh clone), the repository itself is used.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from paths import ROOT

FOLDERS = ("puzzles", "solutions", "notebooks")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True)


def changed_files() -> list[str]:
    """The course files the working tree changes or adds against HEAD, relative to the root (none
    where this is not a git checkout: then the files are taken as they are)."""
    done = _git("status", "--porcelain", "--untracked-files=all", "--", *FOLDERS)
    if done.returncode != 0:
        return []
    return [line[3:].split(" -> ")[-1].strip('"') for line in done.stdout.decode().splitlines() if line[3:]]


def pristine_root() -> Path:
    """A root whose puzzles/, solutions/ and notebooks/ are as committed: ROOT itself when the
    learner has changed none of them, else a temporary copy with each changed file restored
    (an added file, such as `.progress.json` or a learner's scratch notebook, left out)."""
    changed = changed_files()
    if not changed:
        return ROOT
    copy = Path(tempfile.mkdtemp(prefix="tp-pristine-"))
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__", ".progress.json*"))
    for name in changed:
        committed = _git("show", f"HEAD:{name}")
        target = copy / name
        if committed.returncode == 0:
            target.write_bytes(committed.stdout)
        elif target.is_file():
            target.unlink()  # not in HEAD: the learner's own file
    return copy


PRISTINE = pristine_root()
