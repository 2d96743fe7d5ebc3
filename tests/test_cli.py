"""The command line: exit codes, one JSON document, --file with either signature variant."""
import json
import shutil
import subprocess
import sys

import pytest

from paths import ROOT
from pristine import PRISTINE  # the course as committed, whatever a learner solved

WRONG = ROOT / "tests" / "wrong_kernels"


def grader(*args, cwd=PRISTINE):  # the course found from here: as committed, whatever a learner solved
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow  # runs the command line in a subprocess
def test_solution_json_document():
    run = grader("puzzle02", "--solutions", "--json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)  # exactly one document: json.loads rejects trailing text
    assert doc["summary"] == {"total": 1, "passed": 1, "failed": 0, "not_attempted": 0, "unsupported": 0,
                              "errors": 0, "interpreter_limit": 0}
    (result,) = doc["results"]
    assert result["puzzle"] == "puzzle02" and result["status"] == "pass" and result["passed"] is True
    assert result["checks"]["gpu_compile"]["passed"] is True
    assert isinstance(result["seconds"], float)
    for case in result["cases"]:
        assert set(case) >= {"name", "sizes", "blocks", "seed", "passed", "max_abs_err", "message"}
        assert case["passed"] is True and case["max_abs_err"] <= 1e-5
    assert {c["name"] for c in result["cases"]} >= {"classic"}


@pytest.mark.slow  # runs the command line in a subprocess
def test_stub_is_not_attempted_and_exits_1():
    run = grader("puzzle01", "--root", str(PRISTINE))
    assert run.returncode == 1
    assert "· puzzle01 Constant add: not attempted" in run.stdout
    assert "0/1 passed, 1 not attempted" in run.stdout


@pytest.mark.slow  # runs the command line in a subprocess
def test_failure_line_and_exit_code():
    run = grader("puzzle01", "--file", str(WRONG / "puzzle01_adds_wrong_constant.py"))
    assert run.returncode == 1
    first, reason = run.stdout.splitlines()[:2]
    assert first == "✗ puzzle01 Constant add: 0/5 cases pass"
    assert reason.strip().startswith("case classic[seed=0] (N0=32, B0=32): wrong values in `z`: 32 of 32 elements differ")


@pytest.mark.slow  # runs the command line in a subprocess
@pytest.mark.parametrize("args, message", [
    (["puzzle99"], "error: unknown puzzle 'puzzle99'; the puzzles are puzzle01"),
    (["banana"], "error: 'banana' is not a puzzle id; write it like puzzle07"),
    (["puzzle01", "--file", "/nonexistent/kernel.py"], "error: no such file: /nonexistent/kernel.py"),
    (["--file", str(ROOT / "README.md")], "is not a .py file or a notebook (.ipynb)"),
    ([], "error: name a puzzle (e.g. `python -m grader puzzle01`) or pass --all"),
])
def test_usage_errors_exit_2(args, message):
    run = grader(*args)
    assert run.returncode == 2
    assert message in run.stderr


@pytest.mark.slow  # runs the command line in a subprocess
def test_file_without_any_puzzle_kernel(tmp_path):
    path = tmp_path / "nothing.py"
    path.write_text("def helper():\n    return 1\n")
    run = grader("--file", str(path))
    assert run.returncode == 2
    assert "defines none of the puzzle kernels (add_kernel, add_mask2_kernel" in run.stderr


@pytest.mark.slow  # runs the command line in a subprocess
def test_file_finds_every_puzzle_kernel_it_defines(tmp_path):
    """A learner's single file with two kernels grades both, found by name; old signatures too."""
    solutions = ROOT / "solutions"
    p1 = (solutions / "puzzle01_constant_add.py").read_text()
    p9_old = (ROOT / "tests" / "variants" / "puzzle09_without_B1.py").read_text()
    path = tmp_path / "my_work.py"
    path.write_text(p1 + "\n\n" + p9_old.replace("import triton\nimport triton.language as tl\n", ""))
    run = grader("--file", str(path), "--json")
    doc = json.loads(run.stdout)
    assert [r["puzzle"] for r in doc["results"]] == ["puzzle01", "puzzle09"]
    assert run.returncode == 0, run.stdout


@pytest.mark.slow  # runs the command line in a subprocess
def test_runs_from_another_directory(tmp_path):
    run = grader("puzzle01", "--solutions", "--root", str(PRISTINE), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow  # runs the command line in a subprocess
def test_printed_output_is_shown_with_its_failing_case(tmp_path):
    path = tmp_path / "chatty.py"
    path.write_text('''
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    tl.static_print("block", B0)
    tl.device_print("first", offsets)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets))
''')
    run = grader("puzzle01", "--file", str(path), "--no-compile-check")
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    at = lines.index("    output of classic[seed=0]:")
    shown = lines[at + 1:]
    assert shown[0] == "      | block 32"
    assert shown[1].startswith("      | (0, 0, 0)  first:  [ 0  1  2")


@pytest.mark.slow  # runs the command line in a subprocess
def test_bench_without_a_gpu_says_so_and_exits_2():
    run = grader("puzzle13", "--bench", "--device", "cpu")
    assert run.returncode == 2
    assert "error: --bench needs a CUDA GPU, and this machine has none" in run.stderr


@pytest.mark.slow  # runs the command line in a subprocess
def test_root_that_is_not_a_course(tmp_path):
    for args in (["puzzle01", "--root", str(tmp_path)], ["selftest", "--root", str(tmp_path)]):
        run = grader(*args)
        assert run.returncode == 2
        assert f"error: {tmp_path} is not a course folder: it has no puzzles/puzzleNN_*.py" in run.stderr


# ---- a puzzle file that does not load fails on its own; the reports count honestly ----------

BROKEN_02 = "puzzles/puzzle02_constant_add_blocked.py"
# the line the broken_course fixture breaks: where the stub says "Your code here."
BROKEN_02_LINE = (PRISTINE / BROKEN_02).read_text().split("    # Your code here.\n")[0].count("\n") + 1
BROKEN_04 = "puzzles/puzzle04_outer_vector_add_blocked.py"
# the line the fixture inserts above the kernel's decorator
BROKEN_04_LINE = (PRISTINE / BROKEN_04).read_text().split("@triton.jit\ndef add_vec_block_kernel")[0].count("\n") + 1


@pytest.fixture(scope="module")
def broken_course(tmp_path_factory):
    """A course of puzzles 1 to 5: puzzle01 solved, puzzle02 does not parse (its stub's line),
    puzzle04 raises NameError at import (above its kernel), puzzles 3 and 5 still the stubs."""
    copy = tmp_path_factory.mktemp("broken") / "course"
    (copy / "puzzles").mkdir(parents=True)
    (copy / "solutions").mkdir()
    for path in sorted((PRISTINE / "puzzles").glob("puzzle0[1-5]_*.py")):
        shutil.copy(path, copy / "puzzles" / path.name)
        shutil.copy(ROOT / "solutions" / path.name, copy / "solutions" / path.name)
    edits = {
        "puzzles/puzzle01_constant_add.py": ("    # Your code here.\n    pass\n",
                                             "    offsets = tl.arange(0, B0)\n"
                                             "    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + 10.0)\n"),
        BROKEN_02: ("    # Your code here.\n", "    pid = tl.program_id(0))\n"),
        BROKEN_04: ("@triton.jit\ndef add_vec_block_kernel",
                    "SCALE = undefined_scale * 2\n\n\n@triton.jit\ndef add_vec_block_kernel"),
    }
    for name, (old, new) in edits.items():
        path = copy / name
        text = path.read_text()
        assert text.count(old) == 1, name
        path.write_text(text.replace(old, new))
    return copy


@pytest.mark.slow  # runs the command line in a subprocess
def test_broken_puzzle_files_fail_alone_and_json_stays_one_document(broken_course):
    run = grader("--all", "--json", "--root", str(broken_course))
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    doc = json.loads(run.stdout)  # exactly one document
    assert run.returncode == 1
    by_id = {r["puzzle"]: r for r in doc["results"]}
    assert list(by_id) == ["puzzle01", "puzzle02", "puzzle03", "puzzle04", "puzzle05"]
    assert by_id["puzzle01"]["status"] == "pass"
    p02 = by_id["puzzle02"]
    assert p02["status"] == "fail" and p02["title"] == "Constant add, blocked" and not p02["cases"]
    assert p02["checks"]["load"]["kind"] == "syntax"
    assert p02["message"].startswith(f"{BROKEN_02} does not parse: line {BROKEN_02_LINE}: unmatched ')'")
    assert p02["message"].endswith("Fix the line, then grade again.")
    p04 = by_id["puzzle04"]
    assert p04["status"] == "fail" and p04["checks"]["load"]["kind"] == "exception"
    assert p04["message"].startswith(f"{BROKEN_04} raised an error when imported: line {BROKEN_04_LINE}: "
                                     "NameError: name 'undefined_scale' is not defined")
    assert by_id["puzzle03"]["status"] == by_id["puzzle05"]["status"] == "not_attempted"
    # one count per status: not attempted is not failed
    assert doc["summary"] == {"total": 5, "passed": 1, "failed": 2, "not_attempted": 2, "unsupported": 0,
                              "errors": 0, "interpreter_limit": 0}


@pytest.mark.slow  # runs the command line in a subprocess
def test_one_broken_puzzle_graded_alone_is_a_clean_failure(broken_course):
    run = grader("puzzle02", "--root", str(broken_course))
    assert run.returncode == 1
    assert "Traceback" not in run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "✗ puzzle02 Constant add, blocked"
    assert lines[1].strip().startswith(f"{BROKEN_02} does not parse: line {BROKEN_02_LINE}: unmatched ')'")
    assert lines[-1].startswith("0/1 passed")


@pytest.mark.slow  # runs the command line in a subprocess
def test_broken_puzzle_with_solutions_and_file(broken_course):
    """The spec comes from the puzzle file: grading the reference solution or a --file still
    reports the broken puzzle file, and a --file still finds the puzzle by its kernel's name."""
    run = grader("puzzle01", "puzzle02", "--solutions", "--json", "--root", str(broken_course))
    doc = json.loads(run.stdout)
    assert [r["status"] for r in doc["results"]] == ["pass", "fail"]
    run = grader("--file", str(broken_course / "solutions" / "puzzle02_constant_add_blocked.py"), "--json",
                 "--root", str(broken_course))
    (result,) = json.loads(run.stdout)["results"]
    assert result["puzzle"] == "puzzle02" and result["checks"]["load"]["kind"] == "syntax"


def test_autograd_puzzle_names_the_broken_file_it_imports(tmp_path):
    from grader.course.loader import Course
    copy = tmp_path / "course"
    (copy / "puzzles").mkdir(parents=True)
    for path in sorted((PRISTINE / "puzzles").glob("puzzle1[3-7]_*.py")):
        shutil.copy(path, copy / "puzzles" / path.name)
    (broken,) = (copy / "puzzles").glob("puzzle13_*.py")
    broken.write_text(broken.read_text() + "\ndef oops(:\n")
    lines = len(broken.read_text().splitlines())
    course = Course(copy)
    error = course.load_error("puzzle15")
    assert error is not None and error.kind == "syntax" and error.line == lines
    assert error.message.startswith(f"puzzles/{course.puzzle_file('puzzle15').name} could not be loaded: "
                                    f"puzzles/{broken.name}, which it imports, does not parse: line {lines}: ")
    assert course.load_error("puzzle14") is None
    assert course.title("puzzle13") == _title_in(PRISTINE / "puzzles" / broken.name)  # read from the text


def _title_in(path):
    from grader.course.loader import load_puzzle
    return load_puzzle(str(path)).title


@pytest.mark.slow  # runs the command line in a subprocess
@pytest.mark.parametrize("args, message", [
    (["puzzle99"], "unknown puzzle 'puzzle99'; the puzzles are puzzle01"),
    (["puzzle01", "--file", "/nonexistent/kernel.py"], "no such file: /nonexistent/kernel.py"),
    ([], "name a puzzle (e.g. `python -m grader puzzle01`) or pass --all"),
    (["puzzle01", "--no-such-option"], "unrecognized arguments: --no-such-option"),
])
def test_usage_errors_with_json_are_json(args, message):
    run = grader(*args, "--json")
    assert run.returncode == 2
    doc = json.loads(run.stdout)
    assert list(doc) == ["error"] and message in doc["error"]


@pytest.mark.slow  # runs the command line in a subprocess
def test_no_course_with_json_is_json(tmp_path):
    for args in (["puzzle01", "--json", "--root", str(tmp_path)], ["doctor", "--json", "--root", str(tmp_path)]):
        run = grader(*args, cwd=tmp_path)
        assert run.returncode == 2, run.stdout + run.stderr
        assert json.loads(run.stdout) == {"error": f"{tmp_path} is not a course folder: it has no puzzles/puzzleNN_*.py"}


def test_summary_counts_each_status_once():
    from grader.judge.results import PuzzleResult, Report
    statuses = ["pass", "fail", "fail", "not_attempted", "unsupported", "error"]
    report = Report(tuple(PuzzleResult(puzzle=f"puzzle{i:02d}", title="t", status=s, source="x", device="cpu")
                          for i, s in enumerate(statuses, 1)))
    s = report.summary
    assert (s.total, s.passed, s.failed, s.not_attempted, s.unsupported, s.errors) == (6, 1, 2, 1, 1, 1)
    assert s.passed + s.failed + s.not_attempted + s.unsupported + s.errors == s.total


def test_junit_counts_match_the_testcases():
    import xml.etree.ElementTree as ET

    from grader.judge.results import PuzzleResult, StudentResult
    from grader.report.batch_files import junit_xml
    statuses = ["pass", "fail", "not_attempted", "not_attempted", "unsupported", "error"]
    student = StudentResult("ada", tuple(PuzzleResult(puzzle=f"puzzle{i:02d}", title="t", status=s, source="x",
                                                      device="cpu", message=f"{s} here")
                                         for i, s in enumerate(statuses, 1)), ("notes.py: could not be read",), 1.0)
    (suite,) = ET.fromstring(junit_xml([student]))
    cases = list(suite.iter("testcase"))
    counted = {tag: sum(c.find(tag) is not None for c in cases) for tag in ("failure", "error", "skipped")}
    assert counted == {"failure": 1, "error": 2, "skipped": 3}
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        str(len(cases)), "1", "2", "3")


@pytest.mark.slow  # runs the command line in a subprocess
def test_batch_student_sees_their_syntax_error_for_that_puzzle(tmp_path):
    subs = tmp_path / "submissions"
    (subs / "gina" / "puzzles").mkdir(parents=True)
    broken = (ROOT / "solutions" / "puzzle02_constant_add_blocked.py").read_text().replace(
        "    pid = tl.program_id(0)\n", "    pid = tl.program_id(0))\n")
    line = broken.splitlines().index("    pid = tl.program_id(0))") + 1
    (subs / "gina" / "puzzles" / "puzzle02_constant_add_blocked.py").write_text(broken)
    (subs / "hugo.py").write_text("def add_kernel(:\n")  # named after no puzzle: it could have held any
    out = tmp_path / "grading"
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--no-sandbox",
                          "--format", "gradescope", "--root", str(PRISTINE)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    gina = {t["name"]: t for t in json.loads((out / "gradescope" / "gina" / "results.json").read_text())["tests"]}
    assert gina["puzzle02"]["status"] == "failed"
    assert gina["puzzle02"]["output"].startswith("puzzles/puzzle02_constant_add_blocked.py: could not be read "
                                                 "(SyntaxError: unmatched ')'")
    assert f"line {line}" in gina["puzzle02"]["output"] and "no `add_mask2_kernel`" not in gina["puzzle02"]["output"]
    assert gina["puzzle01"]["output"] == "no `add_kernel` in the submission"
    hugo = {t["name"]: t for t in json.loads((out / "gradescope" / "hugo" / "results.json").read_text())["tests"]}
    assert all("hugo.py: could not be read (SyntaxError" in t["output"] for t in hugo.values())
    doc = json.loads((out / "results.json").read_text())
    results = {s["student"]: {r["puzzle"]: r for r in s["results"]} for s in doc["students"]}
    assert results["gina"]["puzzle02"]["status"] == "fail"
    assert results["gina"]["puzzle02"]["checks"]["load"]["kind"] == "syntax"
    assert results["gina"]["puzzle03"]["status"] == "not_attempted"
