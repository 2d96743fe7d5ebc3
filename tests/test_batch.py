"""Grading a class: totals, reports, isolation of crashing/hanging/memory-hogging students, and
submissions that try to cheat."""
import csv
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from grader.course.loader import Course
from pristine import PRISTINE
from grader.judge.options import Options
from paths import ROOT

PUZZLES = len(Course(ROOT).ids)  # alice submits every reference solution

SOLUTIONS = ROOT / "solutions"
WRONG = ROOT / "tests" / "wrong_kernels"

KERNEL_HEAD = "import os\nimport torch\nimport triton\nimport triton.language as tl\n"

CHEATS = {
    # Monkeypatches at import time: never run, since only definitions are imported.
    "patcher.py": KERNEL_HEAD + '''
import grader.judge.compare
torch.allclose = lambda *a, **k: True
grader.judge.compare.compare = lambda *a, **k: None
print("✓ puzzle01 Constant add: 4/4 cases pass")
open("RESULT_FILE", "w").write("student,1\\n")


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pass
''',
    # Python inside the kernel forges the result channel: the interpreter would run it, but
    # the kernel is not Triton, so the GPU compile check fails it.
    "forger.py": KERNEL_HEAD + '''

@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    os.write(3, b"\\x00" * 8 + b'{"ok": true}')
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 10.0)
''',
    # A decorator of its own runs code at definition time: the definition is dropped.
    "decorator.py": KERNEL_HEAD + '''

def sneaky(f):
    open("DECORATOR_RAN", "w").write("x")
    return triton.jit(f)


@sneaky
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 10.0)
''',
    # A default argument evaluated at definition time.
    "default_arg.py": KERNEL_HEAD + '''

@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr = os.system("touch DEFAULT_RAN")):
    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 10.0)
''',
}

TROUBLE = KERNEL_HEAD + '''

def boom():
    os.abort()


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    boom()


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    i = 0
    while i < N0:
        i = i * 1


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        hog = torch.ones(1 << 34, dtype=torch.uint8)
        return hog[:1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output
'''

# An autograd wrapper is Python that runs at grading time: it may crash its worker.
CRASHER = KERNEL_HEAD + '''

class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        os.abort()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    subs = root / "submissions"
    (subs / "alice" / "puzzles").mkdir(parents=True)
    for path in SOLUTIONS.glob("puzzle*.py"):
        shutil.copy(path, subs / "alice" / "puzzles" / path.name)
    (subs / "alice" / "notebooks").mkdir()
    (subs / "alice" / "notebooks" / ".progress.json").write_text(json.dumps({"puzzle07": {
        "status": "passed", "attempts": 4, "spent": 900.0, "first": "2026-11-20 10:00:00",
        "history": [{"at": "2026-11-20 10:15:00", "status": "passed"}], "passed": {"at": "2026-11-20 10:15:00",
                                                                                 "attempt": 4}}}))
    (subs / "bob.py").write_text((SOLUTIONS / "puzzle01_constant_add.py").read_text()
                                 + (WRONG / "puzzle02_missing_mask.py").read_text())
    nbformat.write(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("!rm -rf ~\n" + (SOLUTIONS / "puzzle02_constant_add_blocked.py").read_text()),
        nbformat.v4.new_code_cell("open('NOTEBOOK_RAN', 'w')")]), subs / "carol.ipynb")
    (subs / "dave.py").write_text(TROUBLE)
    (subs / "erin.py").write_text(CRASHER)
    for name, text in CHEATS.items():
        (subs / name).write_text(text)
    (subs / "frank.py").write_bytes(b"\x00\xffnot python")
    (subs / "empty_folder").mkdir()
    out = root / "grading"
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--timeout", "10",
                          "--memory-mb", "6144", "--format", "gradescope", "--seed-secret", "12345",
                          "--root", str(ROOT)], cwd=root, capture_output=True, text=True, timeout=900)
    return root, out, run


def _rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


@pytest.mark.slow  # grades a class through the command line
def test_every_student_is_in_the_report_with_the_right_total(graded):
    root, out, run = graded
    assert run.returncode == 0, run.stderr[-2000:]
    rows = _rows(out)
    assert set(rows) == {"alice", "bob", "carol", "dave", "patcher", "forger", "decorator", "default_arg",
                         "frank", "empty_folder", "erin"}
    totals = {name: int(row["total"]) for name, row in rows.items()}
    assert totals == {"alice": PUZZLES, "bob": 1, "carol": 1, "dave": 0, "patcher": 0, "forger": 0, "decorator": 0,
                      "default_arg": 0, "frank": 0, "empty_folder": 0, "erin": 0}
    assert rows["bob"]["puzzle01"] == "1" and rows["bob"]["puzzle02"] == "0"
    assert "could not be read" in rows["frank"]["problems"]
    assert rows["empty_folder"]["problems"] == "no .py or .ipynb file found"


@pytest.mark.slow  # grades a class through the command line
def test_crash_hang_and_memory_hog_cost_only_their_puzzle(graded):
    _, out, _ = graded
    doc = json.loads((out / "results.json").read_text())
    dave = {r["puzzle"]: r for s in doc["students"] if s["student"] == "dave" for r in s["results"]}
    # Python in a kernel fails the GPU compile check: it is the verdict, whatever the cases run beside it gave.
    compiled = dave["puzzle01"]["checks"]["gpu_compile"]
    assert dave["puzzle01"]["status"] == "fail" and compiled["kind"] == "compile"
    assert dave["puzzle01"]["message"] == compiled["message"]
    assert dave["puzzle02"]["cases"][0]["kind"] == "timeout"
    assert dave["puzzle15"]["cases"][0]["kind"] in ("exception", "crash")  # MemoryError, or killed
    assert dave["puzzle04"]["status"] == "not_attempted"
    erin = {r["puzzle"]: r for s in doc["students"] if s["student"] == "erin" for r in s["results"]}
    assert erin["puzzle15"]["cases"][0]["kind"] == "crash"
    # every source is named under its student's row, graded or not: no path of the grading machine
    for student in doc["students"]:
        for r in student["results"]:
            assert r["source"].split("/")[0] == student["student"] and not r["source"].startswith("/"), r["source"]


@pytest.mark.slow  # grades a class through the command line
def test_cheating_submissions_do_not_change_their_verdict(graded):
    root, out, _ = graded
    doc = json.loads((out / "results.json").read_text())
    by_name = {s["student"]: {r["puzzle"]: r for r in s["results"]} for s in doc["students"]}
    assert by_name["patcher"]["puzzle01"]["status"] == "not_attempted"   # its stub, whatever it patched
    forged = by_name["forger"]["puzzle01"]
    assert forged["status"] == "fail"
    # `os` in a kernel body: the static check stops it before it is imported, compiled or run.
    assert forged["checks"]["sniffing"]["kind"] == "sniffing" and not forged["cases"]
    assert by_name["decorator"]["puzzle01"]["status"] == "not_attempted"  # no @triton.jit kernel left
    assert by_name["default_arg"]["puzzle01"]["status"] == "not_attempted"
    for leftover in ("RESULT_FILE", "DECORATOR_RAN", "DEFAULT_RAN", "NOTEBOOK_RAN"):
        assert not list(root.rglob(leftover)), f"{leftover}: submission code ran"
    assert "patcher,1" not in (out / "grades.csv").read_text()


@pytest.mark.slow  # grades a class through the command line
def test_the_class_page_and_alices_attempts(graded):
    _, out, run = graded
    doc = json.loads((out / "results.json").read_text())
    alice = next(s for s in doc["students"] if s["student"] == "alice")
    assert alice["attempts"] == [{"puzzle": "puzzle07", "count": 4, "seconds": 900.0, "first": "2026-11-20 10:00:00",
                                  "last": "2026-11-20 10:15:00", "best": "passed", "passed_at_attempt": 4}]
    page = (out / "report.html").read_text()
    assert "<td>puzzle07</td><td>4</td><td>15 min</td>" in page and "id='s-dave-puzzle02'" in page
    assert "students graded on" in page and json.loads((out / "similarity.json").read_text())["pairs"] == []
    assert "(open report.html)" in run.stdout


@pytest.mark.slow  # grades a class through the command line
def test_reports_junit_and_gradescope(graded):
    _, out, _ = graded
    suites = ET.parse(out / "junit.xml").getroot()
    alice = next(s for s in suites if s.get("name") == "alice")
    assert alice.get("tests") == str(PUZZLES) and alice.get("failures") == "0"
    bob = next(s for s in suites if s.get("name") == "bob")
    assert [c.get("name") for c in bob if c.find("failure") is not None] == ["puzzle02"]
    scope = json.loads((out / "gradescope" / "bob" / "results.json").read_text())
    assert scope["score"] == 1 and scope["tests"][0] == {
        "name": "puzzle01", "score": 1, "max_score": 1, "status": "passed", "output": "all 5 cases pass"}


@pytest.mark.slow  # runs the command line in a subprocess
def test_batch_needs_a_folder(tmp_path):
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "nope"), "--root", str(ROOT)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "is not a folder of submissions" in run.stderr


@pytest.mark.slow  # reads the result of every solution and every corpus file
def test_selftest_passes_on_the_course(monkeypatch, course, solution_results, wrong_results):
    """selftest's verdict on the whole course, from the session's shared gradings rather than a
    third grading of the solutions and a second of the corpus (the command itself is run below,
    on puzzle01). The corpus is shared as selftest grades it: same timeout, solutions/ as library."""
    from grader.app import selftest
    from grader.judge.results import Report
    solutions, corpus = dict(solution_results), dict(wrong_results)  # each set in one parallel run

    def shared(_course, targets, options, jobs=1):
        assert options.timeout == 20 and str(ROOT / "solutions") in options.library
        return Report(tuple(solutions[p] if path.parent == SOLUTIONS else corpus[path.name] for p, path in targets))

    monkeypatch.setattr(selftest, "grade_many", shared)
    rows = selftest.run(course, Options(timeout=20))  # what `python -m grader selftest` runs
    shown = selftest.render(rows)
    assert len(rows) == len(course.ids) + len(list(WRONG.glob("puzzle*.py")))
    assert all(r.ok for r in rows), shown[-3000:]  # the command's exit 0
    assert shown.strip().splitlines()[-1].endswith("as expected")


@pytest.mark.slow  # runs the command line in a subprocess
def test_selftest_command_on_a_course_of_puzzle01(tmp_path):
    copy = tmp_path / "course"
    for folder in ("puzzles", "solutions"):
        (copy / folder).mkdir(parents=True)
        shutil.copy(next((ROOT / folder).glob("puzzle01_*.py")), copy / folder)
    (copy / "tests" / "wrong_kernels").mkdir(parents=True)
    for name in ("puzzle01_adds_wrong_constant.py", "puzzle01_store_nothing.py"):
        shutil.copy(WRONG / name, copy / "tests" / "wrong_kernels" / name)
    run = subprocess.run([sys.executable, "-m", "grader", "selftest", "--root", str(copy)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1].endswith("3/3 as expected")


@pytest.mark.slow  # runs the command line in a subprocess
def test_release_has_no_solutions(tmp_path):
    out = tmp_path / "release"
    run = subprocess.run([sys.executable, "-m", "grader", "release", str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not (out / "solutions").exists() and not (out / "tests").exists()
    assert (out / "puzzles" / "puzzle01_constant_add.py").is_file() and (out / "notebooks").is_dir()


def test_release_refuses_a_leaked_solution(tmp_path):
    from grader.course.loader import Course
    from grader.app.release import LeakError, release
    course_copy = tmp_path / "course"
    for folder in ("puzzles", "solutions", "notebooks", "grader"):
        shutil.copytree(ROOT / folder, course_copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    leaked = course_copy / "puzzles" / "puzzle07_long_sum.py"
    leaked.write_text(leaked.read_text() + "\n\n" + (SOLUTIONS / "puzzle07_long_sum.py").read_text())
    with pytest.raises(LeakError, match="puzzles/puzzle07_long_sum.py holds a kernel body of solutions/puzzle07"):
        release(Course(course_copy), tmp_path / "out")


def _course_copy(tmp_path):
    course_copy = tmp_path / "course"
    for folder in ("puzzles", "solutions", "notebooks", "grader"):  # the course as committed, whatever a learner solved
        shutil.copytree((ROOT if folder == "grader" else PRISTINE) / folder, course_copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return course_copy


def test_release_ships_stubs_when_the_instructors_puzzles_hold_solved_kernels(tmp_path):
    """The README has learners (and instructors trying the course) solve in puzzles/: a release
    made from such a copy still ships each function of the learner's part as a stub, and notebooks
    built from the released files."""
    from grader.course.loader import Course
    from grader.app.notebook_build import learner_part, stale
    from grader.app.release import release
    course_copy = _course_copy(tmp_path)
    for pid in ("puzzle07", "puzzle15", "puzzle25"):  # a kernel, an autograd Function, a kernel and its helper
        path = Course(course_copy).puzzle_file(pid)
        solved = "\n".join(line for line in (SOLUTIONS / path.name).read_text().splitlines()
                           if not line.startswith(("import ", "from ")))  # the puzzle file imports them
        path.write_text(path.read_text().replace(learner_part(path), solved))
    release(Course(course_copy), tmp_path / "out")
    released = Course(tmp_path / "out")
    assert learner_part(released.puzzle_file("puzzle07")) == learner_part(Course(PRISTINE).puzzle_file("puzzle07"))
    part = learner_part(released.puzzle_file("puzzle15"))
    assert part.count("raise NotImplementedError") == 2 and "class WeightedSumFunc(torch.autograd.Function):" in part
    assert learner_part(released.puzzle_file("puzzle25")).count("    # Your code here.\n    pass") == 2
    assert not stale(released)  # the notebooks are the released puzzles'


def test_release_refuses_a_course_it_cannot_read(tmp_path):
    from grader.course.loader import Course, PuzzleLoadError
    from grader.app.release import release
    course_copy = _course_copy(tmp_path)
    broken = course_copy / "puzzles" / "puzzle03_outer_vector_add.py"
    broken.write_text(broken.read_text().replace("# ---- your part", "# ---- the part", 1))
    with pytest.raises(PuzzleLoadError, match="puzzle03_outer_vector_add.py: cannot release it: the learner's part "
                                              "needs one `# ---- your part: ... ----` line"):
        release(Course(course_copy), tmp_path / "out")
    assert not (tmp_path / "out").exists()
