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
from grader.judge.options import Options
from paths import ROOT
from pristine import PRISTINE, whole_course

PUZZLES = len(Course(PRISTINE).ids)  # alice submits every reference solution

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
    # 30 s, the default: alice's puzzle32 runs its 4,352-query case whole, near 10 s of CPU time on a
    # loaded machine (seen: "not graded here"), and she must score every puzzle.
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--timeout", "30",
                          "--memory-mb", "6144", "--format", "gradescope", "--seed-secret", "12345",
                          "--root", str(PRISTINE)], cwd=root, capture_output=True, text=True, timeout=900)
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
    totals = {name: row["total"] for name, row in rows.items()}
    # frank's file is not UTF-8 and empty_folder holds nothing: rows refused, no total (issue 46)
    assert totals == {"alice": str(PUZZLES), "bob": "1", "carol": "1", "dave": "0", "patcher": "0", "forger": "0",
                      "decorator": "0", "default_arg": "0", "frank": "", "empty_folder": "", "erin": "0"}
    assert rows["bob"]["puzzle01"] == "1" and rows["bob"]["puzzle02"] == "0"
    assert rows["bob"]["puzzle03"] == "", "bob never attempted puzzle 3: an empty cell, not a fail's 0"
    assert rows["frank"]["problems"] == ("refused: `frank.py` could not be read (not UTF-8 text: byte 0xff at offset "
                                         "1): save it as UTF-8 and hand it in again")
    assert rows["empty_folder"]["problems"].startswith("refused: `empty_folder/` is an empty folder")


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
def test_grades_csv_tells_a_fail_from_never_attempted():
    from grader.judge.results import PuzzleResult, Status, StudentResult
    from grader.report.batch_files import grades_csv
    results = (PuzzleResult("puzzle01", "T", Status.PASS, "f.py", "cpu"),
               PuzzleResult("puzzle02", "T", Status.FAIL, "f.py", "cpu", message="wrong"),
               PuzzleResult("puzzle03", "T", Status.NOT_ATTEMPTED, "f.py", "cpu", message="no `outer_kernel`"),
               PuzzleResult("puzzle04", "T", Status.ERROR, "f.py", "cpu", message="grader error"))
    rows = list(csv.DictReader(grades_csv([StudentResult("ada", results, (), 1.0)],
                                          ["puzzle01", "puzzle02", "puzzle03", "puzzle04", "puzzle05"]).splitlines()))
    assert rows == [{"student": "ada", "puzzle01": "1", "puzzle02": "0", "puzzle03": "", "puzzle04": "error",
                     "puzzle05": "", "total": "1", "problems": "", "submitted_id": "ada"}]


# ---- a kernel name two puzzles share grades only the puzzle the file is for (issue 32) ------------
KERNELS = {"puzzle01": "add_kernel", "puzzle08": "softmax_kernel", "puzzle18": "softmax_kernel"}
SOFTMAX = "@triton.jit\ndef softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):\n    pass\n"


@pytest.mark.parametrize("file_name, text, graded, skipped", [
    # a puzzle's file is that puzzle's alone
    ("puzzle08_mine.py", SOFTMAX, ("puzzle08",),
     {"puzzle18": "`softmax_kernel` in puzzle08_mine.py is not graded for puzzle18: the file's name makes it "
                  "puzzle08's; put puzzle18's kernel in a file named puzzle18_….py"}),
    ("puzzle18_mine.ipynb", SOFTMAX, ("puzzle18",), {"puzzle08": "the file's name makes it puzzle18's"}),
    # a file named after no puzzle: a shared name is graded only where the learner names the puzzle
    ("alice.py", SOFTMAX, (),
     {"puzzle08": "`softmax_kernel` in alice.py is not graded for puzzle08: it is the kernel of puzzle08 and "
                  "puzzle18, and the file does not say which; name the file puzzle08_….py, or add "
                  "`check(softmax_kernel, \"puzzle08\")`",
      "puzzle18": "name the file puzzle18_….py, or add `check(softmax_kernel, \"puzzle18\")`"}),
    ("alice.py", SOFTMAX + 'check(softmax_kernel, "puzzle18")\n', ("puzzle18",),
     {"puzzle08": "`softmax_kernel` in alice.py is not graded for puzzle08: the file names it for puzzle18"}),
    ("alice.py", SOFTMAX + 'P = Puzzle(id="puzzle08", kernel="softmax_kernel")\n', ("puzzle08",),
     {"puzzle18": "the file names it for puzzle08"}),
    # a name that is one puzzle's alone is that puzzle's, in any file named after none
    ("alice.py", SOFTMAX.replace("softmax_kernel", "add_kernel"), ("puzzle01",), {}),
    ("puzzle08_mine.py", SOFTMAX.replace("softmax_kernel", "add_kernel"), (),
     {"puzzle01": "`add_kernel` in puzzle08_mine.py is not graded for puzzle01: the file's name makes it puzzle08's"}),
])
def test_a_file_is_graded_for_its_puzzle_not_for_a_kernel_of_the_same_name(file_name, text, graded, skipped):
    from grader.source.claims import claim, named_in_python
    from grader.source.source_lines import defined_names
    found = claim(KERNELS, file_name, file_name, defined_names(text), named_in_python(text))
    assert found.puzzles == graded
    assert set(found.skipped) == set(skipped)
    assert set(found.unsure) == {p for p, why in found.skipped.items() if "does not say which" in why}
    for puzzle, words in skipped.items():
        assert words in found.skipped[puzzle], found.skipped[puzzle]


def test_a_notebook_names_its_puzzles_by_the_courses_cell_ids_and_check_cells():
    from grader.source.claims import named_in_notebook
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("!pip install triton\n" + SOFTMAX, id="puzzle18-kernel"),
        nbformat.v4.new_code_cell('check(softmax_kernel, "puzzle18")', id="puzzle18-check"),
        nbformat.v4.new_code_cell("def helper():\n    pass\n", id="scratch")])
    assert named_in_notebook(nbformat.writes(notebook)) == {"softmax_kernel": {"puzzle18"}}


@pytest.fixture(scope="module")
def softmax_course(tmp_path_factory) -> Course:
    """A course of the two puzzles that share `softmax_kernel`: loads in a moment."""
    root = tmp_path_factory.mktemp("softmax_course")
    for folder in ("puzzles", "solutions"):
        (root / folder).mkdir()
        for pid in ("puzzle08", "puzzle18"):
            source = next((PRISTINE / folder).glob(f"{pid}_*.py"))
            shutil.copy(source, root / folder / source.name)
    return Course(root)


@pytest.mark.slow  # intake of four students (8 s at a load of 16 on 2 cores)
def test_a_class_grades_a_shared_kernel_only_for_the_puzzle_its_file_is_for(tmp_path, softmax_course):
    """Issue 32: a file holding only puzzle 8 failed puzzle 18, and the similarity pass paired
    its students on puzzle 18."""
    from grader.judge.classroom import _missing
    from grader.judge.similarity.find import puzzle_codes
    from grader.source.intake import prepare_class
    course = softmax_course
    subs = tmp_path / "subs"
    for student in ("alice", "dave"):
        (subs / student).mkdir(parents=True)
        shutil.copy(SOLUTIONS / "puzzle08_long_softmax.py", subs / student / "puzzle08_long_softmax.py")
    (subs / "erin.py").write_text((SOLUTIONS / "puzzle08_long_softmax.py").read_text())
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        (SOLUTIONS / "puzzle18_fused_softmax.py").read_text(), id="puzzle18-kernel")]), subs / "fay.ipynb")
    students = {s.name: s for s in prepare_class(subs, course, tmp_path / "work")}
    assert set(students["alice"].files) == {"puzzle08"}
    assert students["alice"].skipped["puzzle18"].startswith(
        "`softmax_kernel` in puzzle08_long_softmax.py is not graded for puzzle18: the file's name makes it puzzle08's")
    assert "puzzle08" not in students["erin"].files and "puzzle18" not in students["erin"].files
    # a file that does not say which is a problem of the submission; a puzzle's own file is not
    assert [p for p in students["erin"].problems if "softmax_kernel" in p] == [
        f"{pid}: `softmax_kernel` in erin.py is not graded for {pid}: it is the kernel of puzzle08 and puzzle18, "
        f"and the file does not say which; name the file {pid}_….py, or add `check(softmax_kernel, \"{pid}\")`"
        for pid in ("puzzle08", "puzzle18")]
    assert not [p for p in students["alice"].problems if "softmax_kernel" in p]
    assert set(students["fay"].files) == {"puzzle18"}
    missing = _missing(course, "puzzle18", students["alice"], Options(device="cpu"))
    assert missing.status == "not_attempted" and missing.message.startswith(
        "not attempted: `softmax_kernel` in puzzle08_long_softmax.py is not graded for puzzle18")
    missing = _missing(course, "puzzle08", students["erin"], Options(device="cpu"))
    assert "it is the kernel of puzzle08 and puzzle18, and the file does not say which" in missing.message
    assert [c.student for c in puzzle_codes(course, "puzzle18", list(students.values()))[2]] in ([], ["fay"])


def test_file_names_the_puzzle_it_grades_and_says_what_it_skips(tmp_path, capsys, softmax_course):
    from grader.app.targets import resolve
    from grader.course.loader import CourseError
    course = softmax_course
    mine = tmp_path / "puzzle08_mine.py"
    mine.write_text((SOLUTIONS / "puzzle08_long_softmax.py").read_text())
    assert [t.puzzle for t in resolve(course, [], file=mine)] == ["puzzle08"]
    assert "note: `softmax_kernel` in puzzle08_mine.py is not graded for puzzle18: the file's name makes it " \
           "puzzle08's" in capsys.readouterr().err
    assert [t.puzzle for t in resolve(course, ["puzzle18"], file=mine)] == ["puzzle18"]  # named: graded
    plain = tmp_path / "mine.py"
    plain.write_text(mine.read_text())
    with pytest.raises(CourseError, match=r"mine.py is graded for no puzzle: `softmax_kernel` in mine.py is not "
                                          r"graded for puzzle08: it is the kernel of puzzle08 and puzzle18.*or name "
                                          r"the puzzle: `python -m grader puzzle08 --file"):
        resolve(course, [], file=plain)


def test_batch_needs_a_folder(tmp_path):
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "nope"), "--root", str(PRISTINE)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "is not a folder of submissions" in run.stderr


@pytest.mark.slow  # reads the result of every solution and every corpus file
def test_selftest_passes_on_the_course(course, solution_results, wrong_results, monkeypatch):
    """selftest's verdict on the whole course, from the session's shared gradings rather than a
    third grading of the solutions and a second of the corpus (the command itself is run below,
    on puzzle01). The corpus is shared as selftest grades it: same timeout, solutions/ as library."""
    from grader.app import selftest
    from grader.judge.results import Report
    solutions, corpus = dict(solution_results), dict(wrong_results)  # each set in one parallel run

    def shared(_course, targets, options, jobs=1):
        assert options.timeout == 20 and str(course.root / "solutions") in options.library
        return Report(tuple(solutions[p] if path.parent == course.root / "solutions" else corpus[path.name]
                            for p, path in targets))

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
        shutil.copy(next((PRISTINE / folder).glob("puzzle01_*.py")), copy / folder)
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
    run = subprocess.run([sys.executable, "-m", "grader", "release", str(out), "--root",
                          str(whole_course(tmp_path / "course"))], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not (out / "solutions").exists() and not (out / "tests").exists()
    assert (out / "puzzles" / "puzzle01_constant_add.py").is_file() and (out / "notebooks").is_dir()


def test_release_refuses_a_leaked_solution(tmp_path):
    from grader.app.release import LeakError, release
    from grader.course.loader import Course
    course_copy = tmp_path / "course"
    for folder in ("puzzles", "solutions", "notebooks", "grader"):  # the course as committed
        shutil.copytree((ROOT if folder == "grader" else PRISTINE) / folder, course_copy / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
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
    from grader.app.notebook_build import learner_part, stale
    from grader.app.release import release
    from grader.course.loader import Course
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
    from grader.app.release import release
    from grader.course.loader import Course, PuzzleLoadError
    course_copy = _course_copy(tmp_path)
    broken = course_copy / "puzzles" / "puzzle03_outer_vector_add.py"
    broken.write_text(broken.read_text().replace("# ---- your part", "# ---- the part", 1))
    with pytest.raises(PuzzleLoadError, match="puzzle03_outer_vector_add.py: cannot release it: the learner's part "
                                              "needs one `# ---- your part: ... ----` line"):
        release(Course(course_copy), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_selftest_names_what_went_wrong_after_the_table():
    """The rows not as expected come again below the table, with their messages, so that the tail
    of a long log (CI keeps only its end) says which entry failed and why."""
    from grader.app import selftest
    rows = [selftest.Row("solution puzzle01", "pass", "pass", True, "")] * 300 + [
        selftest.Row("puzzle02_missing_mask", "fail: out_of_bounds", "pass", False, "every case passed")]
    tail = selftest.render(rows).splitlines()[-4:]
    assert tail == ["not as expected (1):", "  puzzle02_missing_mask: expected fail: out_of_bounds, got pass",
                    "    every case passed", "300/301 as expected"]
