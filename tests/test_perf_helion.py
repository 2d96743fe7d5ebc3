"""--perf on a Helion puzzle: no estimate, said plainly with its reason, never an empty table."""
import subprocess
import sys
from types import SimpleNamespace

from grader.course.loader import Course
from grader.judge.perf.run import run_perf
from grader.report.perf import render_text
from pristine import PRISTINE  # the course as committed, whatever a learner solved


def test_every_helion_puzzle_says_why_it_gets_no_estimate():
    course = Course(PRISTINE)
    helion = [pid for pid in course.ids if course.puzzle(pid).kind == "helion"]
    assert len(helion) == 8
    for pid in helion:
        # no worker is asked: the answer comes before any (a stub session holds only the course)
        result = run_perf(SimpleNamespace(course=course), pid, course.puzzle_file(pid))
        assert not result.yours.ok and result.reference is None and not result.model
        text = render_text(result)
        assert "No estimate for a Helion kernel" in text and "--bench" in text
        assert "estimated time" not in text and "Error band" not in text


def test_the_command_says_it_and_fails():
    done = subprocess.run([sys.executable, "-m", "grader", "puzzle35", "--perf"], cwd=PRISTINE, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1
    assert "No estimate for a Helion kernel: --perf counts what a Triton kernel does" in done.stdout
