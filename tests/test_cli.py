"""The command line: exit codes, one JSON document, --file with either signature variant."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "tests" / "wrong_kernels"


def grader(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_solution_json_document():
    run = grader("puzzle02", "--solutions", "--json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)  # exactly one document: json.loads rejects trailing text
    assert doc["summary"] == {"total": 1, "passed": 1, "failed": 0, "not_attempted": 0, "unsupported": 0,
                              "errors": 0}
    (result,) = doc["results"]
    assert result["puzzle"] == "puzzle02" and result["status"] == "pass" and result["passed"] is True
    assert result["checks"]["gpu_compile"]["passed"] is True
    assert isinstance(result["seconds"], float)
    for case in result["cases"]:
        assert set(case) >= {"name", "sizes", "blocks", "seed", "passed", "max_abs_err", "message"}
        assert case["passed"] is True and case["max_abs_err"] <= 1e-5
    assert {c["name"] for c in result["cases"]} >= {"classic"}


def test_stub_is_not_attempted_and_exits_1():
    run = grader("puzzle01")
    assert run.returncode == 1
    assert "· puzzle01 Constant add: not attempted" in run.stdout
    assert "0/1 passed, 1 not attempted" in run.stdout


def test_failure_line_and_exit_code():
    run = grader("puzzle01", "--file", str(WRONG / "puzzle01_adds_wrong_constant.py"))
    assert run.returncode == 1
    first, reason = run.stdout.splitlines()[:2]
    assert first == "✗ puzzle01 Constant add: 0/4 cases pass"
    assert reason.strip().startswith("case classic[seed=0] (N0=32, B0=32): wrong values in `z`: 32 of 32 elements differ")


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


def test_file_without_any_puzzle_kernel(tmp_path):
    path = tmp_path / "nothing.py"
    path.write_text("def helper():\n    return 1\n")
    run = grader("--file", str(path))
    assert run.returncode == 2
    assert "defines none of the puzzle kernels (add_kernel, add_mask2_kernel" in run.stderr


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


def test_runs_from_another_directory(tmp_path):
    run = grader("puzzle01", "--solutions", "--root", str(ROOT), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


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


def test_bench_without_a_gpu_says_so_and_exits_2():
    run = grader("puzzle13", "--bench", "--device", "cpu")
    assert run.returncode == 2
    assert "error: --bench needs a CUDA GPU, and this machine has none" in run.stderr


def test_root_that_is_not_a_course(tmp_path):
    for args in (["puzzle01", "--root", str(tmp_path)], ["selftest", "--root", str(tmp_path)]):
        run = grader(*args)
        assert run.returncode == 2
        assert f"error: {tmp_path} is not a course folder: it has no puzzles/puzzleNN_*.py" in run.stderr
