"""The course supports Python 3.11 to 3.13 (README, "Set up"): 3.11 is the oldest its pins
(numpy 2.4, scipy, matplotlib) install on, and CI's only Python. A static check that no code needs
more than 3.11, by vermin (pinned in constraints.txt, in the [test]
extra). The newer Pythons are run where a machine has them (docs/python_versions.md)."""
import importlib.util
import os
import subprocess
import sys

import pytest

from paths import ROOT
from pristine import PRISTINE

OLDEST = "3.11"
# The course's own puzzles and solutions as committed: a learner's half-typed kernel is not the course's code.
CODE = ["grader", str(PRISTINE / "puzzles"), str(PRISTINE / "solutions"), "tests", "scripts", "benchmarks"]
# `--exclude long`: torch's `tensor.long()` is not Python 2's `long`.
VERMIN = [sys.executable, "-c", "import sys, vermin; sys.exit(vermin.main())", f"-t={OLDEST}-", "--no-tips", "--violations", "--eval-annotations",
          "--exclude", "long"]


def _vermin():
    if importlib.util.find_spec("vermin") is None and os.environ.get("TP_REQUIRE_VERMIN") != "1":
        pytest.skip("vermin is not installed: pip install -e '.[test]' -c constraints.txt")


@pytest.mark.slow  # reads every Python file of the repository (about 5 s of CPU)
def test_no_code_needs_more_than_the_oldest_python_the_readme_promises():
    _vermin()
    done = subprocess.run([*VERMIN, *CODE], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Minimum required versions: {OLDEST}" in done.stdout, done.stdout


def test_the_check_finds_what_a_newer_python_brought(tmp_path):
    """Not a check that passes anything: `itertools.batched` and `typing.override` are 3.12's."""
    _vermin()
    newer = tmp_path / "newer.py"
    newer.write_text("import itertools\nfrom typing import override\n\n\n"
                     "PAIRS = list(itertools.batched(range(4), 2))\n")
    done = subprocess.run([*VERMIN, str(newer)], capture_output=True, text=True)
    assert done.returncode != 0 and "'itertools.batched' member requires !2, 3.12" in done.stdout, done.stdout
