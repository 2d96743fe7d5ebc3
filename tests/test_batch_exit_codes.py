"""How ``python -m grader batch`` ends (its ``--help`` epilog and docs/class-report.md say the
same): 0 once the class is graded, whatever the grades; 1 a course file that does not load; 2 a
usage problem; 3 the grader's own bug; 130 Ctrl-C. And a class whose ids need cleaning keeps
them as submitted in every file the batch writes. Each run here is in-process and grades no
kernel (the submissions hold none), so it takes seconds."""
import csv
import json

import pytest

from grader.app import commands
from grader.app.frontend import run_command
from grader.course.loader import PuzzleLoadError
from grader.judge import classroom
from grader.judge.results import ExitCode, StudentResult
from pristine import PRISTINE

HOSTILE = "<img src=x onerror=alert(1)>"  # a folder may be named so: no "/" is needed


@pytest.fixture
def submissions(tmp_path):
    """Two students, neither with a kernel: a folder named as a hostile id, and a notebook's
    worth of Python under a name with a space and accents."""
    subs = tmp_path / "subs"
    (subs / HOSTILE).mkdir(parents=True)
    (subs / HOSTILE / "notes.py").write_text("x = 1\n")
    (subs / "Zoë Ñúñez.py").write_text("y = 2\n")
    return subs


def batch(*argv) -> int:
    return run_command(commands.batch_main, [*map(str, argv), "--root", str(PRISTINE)])


def test_a_graded_class_is_0_whatever_its_grades_and_keeps_each_id_as_submitted(submissions, tmp_path, capsys):
    out = tmp_path / "out"
    assert batch(submissions, "--out", out, "--no-sandbox", "--no-similarity") == ExitCode.OK == 0
    with open(out / "grades.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert {key: row["submitted_id"] for key, row in rows.items()} == {
        "_img_src_x_onerror_alert_1__": HOSTILE, "Zoë_Ñúñez": "Zoë Ñúñez"}
    assert all(row["total"] == "0" for row in rows.values())  # nothing passed, and still 0
    doc = json.loads((out / "results.json").read_text())
    assert sorted(s["submitted_id"] for s in doc["students"]) == [HOSTILE, "Zoë Ñúñez"]
    page = (out / "report.html").read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "<img" not in page
    assert "<b>Zoë Ñúñez</b>: 0 passed of 0 attempted, of 42 puzzles" in page
    assert "2 students graded in" in capsys.readouterr().out


def test_a_grader_error_while_grading_a_student_is_their_row_the_batch_goes_on_and_ends_3(
        submissions, tmp_path, monkeypatch, capsys):
    def broken(course, student, *args, **kwargs):
        if student.name != "Zoë_Ñúñez":
            raise ZeroDivisionError("division by zero")
        return real(course, student, *args, **kwargs)
    real = classroom.grade_student
    monkeypatch.setattr(classroom, "grade_student", broken)
    out = tmp_path / "out"
    assert batch(submissions, "--out", out, "--no-sandbox", "--no-similarity") == ExitCode.INTERNAL_ERROR == 3
    with open(out / "grades.csv", newline="") as f:
        problems = {row["student"]: row["problems"] for row in csv.DictReader(f)}
    assert problems == {"_img_src_x_onerror_alert_1__": "grader error: ZeroDivisionError: division by zero",
                        "Zoë_Ñúñez": ""}
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"the grader itself broke while grading 1 of 2 students ({HOSTILE}): their rows in {out} say where, and "
        "their grades there are not to be trusted. Please report it.")


def test_a_puzzle_that_ended_in_a_grader_error_marks_its_student_broken():
    from grader.judge.results import PuzzleResult, Status
    fine = PuzzleResult("puzzle01", "Constant add", Status.FAIL, "a.py", "cpu", message="case small failed")
    broken = PuzzleResult("puzzle02", "Constant add, blocked", Status.ERROR, "a.py", "cpu",
                          message="grader error: KeyError: 'x'")
    assert not StudentResult("a", (fine,), (), 1.0).grader_broke
    assert StudentResult("a", (fine, broken), (), 1.0).grader_broke
    assert StudentResult("a", (), ("grader error: OSError: disk full",), 1.0).grader_broke
    assert not StudentResult("a", (), ("notes.py: not Python",), 1.0).grader_broke


@pytest.mark.parametrize("argv, words", [
    ((), "is not a folder of submissions"),
    (("--variants",), "--variants draws each student's values from the secret: add --seed-secret N"),
    (("--address", "ray://x:10001"), "--address names a Ray cluster: add --engine ray"),
    (("--resume", "{tmp}"), "has no results.json to resume from"),
])
def test_a_usage_problem_is_2_in_one_line(tmp_path, capsys, argv, words):
    folder = tmp_path / "subs"
    if argv:  # the first case's folder is missing; the others' is there, empty
        folder.mkdir()
    assert batch(folder, *(a.format(tmp=tmp_path) for a in argv), "--no-sandbox") == ExitCode.USAGE_ERROR == 2
    last = capsys.readouterr().err.splitlines()[-1]  # after --no-sandbox's warning, where it comes first
    assert last.startswith("error: ") and words in last


def test_no_sandbox_is_2_and_says_why(submissions, monkeypatch, capsys):
    from grader.judge import session
    monkeypatch.setattr(session, "sandbox_missing", lambda: "bubblewrap (bwrap) is not installed")
    assert batch(submissions) == 2
    said = capsys.readouterr().err
    assert said == "error: batch grading runs untrusted code, and bubblewrap (bwrap) is not installed\n"


def test_a_course_file_that_does_not_load_is_1(submissions, tmp_path, monkeypatch, capsys):
    def unloadable(*args, **kwargs):
        raise PuzzleLoadError("puzzles/puzzle07_long_sum.py line 12: SyntaxError: invalid syntax", "syntax", 12)
    monkeypatch.setattr(classroom, "grade_class", unloadable)
    assert batch(submissions, "--out", tmp_path / "out", "--no-sandbox") == ExitCode.FAILED == 1
    said = capsys.readouterr().err
    assert said.endswith("error: puzzles/puzzle07_long_sum.py line 12: SyntaxError: invalid syntax\n")


def test_the_grader_s_own_bug_is_3(submissions, tmp_path, monkeypatch, capsys):
    def buggy(*args, **kwargs):
        raise KeyError("a bug of the batch's own")
    monkeypatch.setattr(classroom, "grade_class", buggy)
    assert batch(submissions, "--out", tmp_path / "out", "--no-sandbox") == ExitCode.INTERNAL_ERROR == 3
    assert "grader error (a bug in the grader, not in your code; please report it" in capsys.readouterr().err


def test_ctrl_c_is_130_with_the_reports_written_and_how_to_finish(submissions, tmp_path, monkeypatch, capsys):
    def stopped(*args, **kwargs):
        return classroom.ClassRun([StudentResult("Zoë_Ñúñez", (), ("not graded: the batch was stopped (Ctrl-C)",),
                                                 0.0, submitted_id="Zoë Ñúñez")], stopped=True)
    monkeypatch.setattr(classroom, "grade_class", stopped)
    out = tmp_path / "out"
    assert batch(submissions, "--out", out, "--no-sandbox") == ExitCode.INTERRUPTED == 130
    assert f"finish with --resume {out}" in capsys.readouterr().err
    assert "Zoë Ñúñez" in (out / "grades.csv").read_text()


def test_the_help_says_every_exit_code(capsys):
    assert batch("--help") == 0
    shown = capsys.readouterr().out
    table = shown[shown.index("exit status:"):].splitlines()[1:]
    codes = [line.split()[0] for line in table if line[:5].strip()]
    assert codes == ["0", "1", "2", "3", "130"] == [str(int(code)) for code in sorted(ExitCode)]
    assert "whatever their grades" in shown and "finish with --resume OUT" in shown
