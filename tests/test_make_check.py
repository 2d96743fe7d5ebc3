"""`make check` and `make notebooks` (issue 44): a fresh clone's first command ends green and says
what to do next; a real failure still fails; a named puzzle is the grader's own run."""
from __future__ import annotations

import importlib.util
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course.loader import Course
from paths import ROOT
from pristine import PRISTINE

spec = importlib.util.spec_from_file_location("make_check", ROOT / "scripts" / "check.py")
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

STUB_BODY = "    # Your code here.\n    pass\n"


def _course(tmp_path: Path) -> Path:
    """Puzzles 1 and 2 as the course ships them, and their solutions."""
    root = tmp_path / "course"
    for folder in ("puzzles", "solutions"):
        (root / folder).mkdir(parents=True)
        for path in sorted((PRISTINE / folder).glob("puzzle0[12]_*.py")):
            shutil.copy(path, root / folder / path.name)
    return root


class Grader:
    def __init__(self, status: int) -> None:
        self.status, self.calls = status, []

    def __call__(self, args: list[str]) -> int:
        self.calls.append(args)
        return self.status


def _run(root: Path, argv: list[str], status: int) -> tuple[int, str, list]:
    out, grader = io.StringIO(), Grader(status)
    code = check.main(argv, course=Course(root), grader=grader, out=out)
    return code, out.getvalue(), grader.calls


def test_a_fresh_clone_is_told_what_to_do_and_ends_green(tmp_path, monkeypatch):
    monkeypatch.setattr(check, "has_watch", lambda: True)
    code, said, calls = _run(_course(tmp_path), [], status=1)
    assert code == 0 and calls == [], "nothing to grade: the stub is untouched"
    assert said.startswith("puzzle01 (Constant add): not attempted yet, its kernel is still the stub.\n")
    assert "  1. Open puzzles/puzzle01_constant_add.py and write the kernel between the `your part` lines.\n" in said
    assert "  2. Grade it: make check PUZZLE=puzzle01\n" in said
    assert "(`source .venv/bin/activate`, once per shell):\n       python -m grader puzzle01\n" in said
    assert "python -m grader watch puzzle01    (grades it again on every save)" in said
    assert said.endswith("Stuck? python -m grader hint puzzle01. Jupyter instead? make notebooks\n")


def test_the_watch_line_only_where_the_grader_has_watch(tmp_path, monkeypatch):
    monkeypatch.setattr(check, "has_watch", lambda: False)
    assert "watch" not in _run(_course(tmp_path), [], status=1)[1]


def test_grader_args_without_a_puzzle_are_puzzle_1s(tmp_path):
    root = _course(tmp_path)
    (root / "puzzles" / "puzzle01_constant_add.py").write_text(
        (root / "puzzles" / "puzzle01_constant_add.py").read_text().replace(STUB_BODY, "    tl.store(z_ptr, 1.0)\n"))
    code, said, calls = _run(root, ["--verbose"], status=1)
    assert calls == [["puzzle01", "--verbose"]] and code == 1 and said == "", "a real failure still fails"


def test_a_pass_names_the_next_puzzle(tmp_path):
    root = _course(tmp_path)
    stub = root / "puzzles" / "puzzle01_constant_add.py"
    stub.write_text(stub.read_text().replace(STUB_BODY, "    x = tl.load(x_ptr + tl.arange(0, B0))\n"))
    code, said, calls = _run(root, [], status=0)
    assert calls == [["puzzle01"]] and code == 0
    assert said == ("Next: puzzle02 (Constant add, blocked): open puzzles/puzzle02_constant_add_blocked.py, "
                    "then make check PUZZLE=puzzle02\n")


@pytest.mark.parametrize("argv", [["puzzle02"], ["puzzle02", "--verbose"], ["--all"], ["--file", "mine.py"]])
@pytest.mark.parametrize("status", [0, 1, 2])
def test_a_named_puzzle_is_the_graders_own_run(tmp_path, argv, status):
    code, said, calls = _run(_course(tmp_path), argv, status=status)
    assert calls == [argv] and code == status and said == ""


@pytest.mark.parametrize("text, kernel", [
    ("def add_kernel(x):\n    # Your code here.\n    pass\n", "add_kernel"),
    ("def add_kernel(x):\n    \"\"\"doc\"\"\"\n    raise NotImplementedError\n", "add_kernel"),
])
def test_a_stub_is_untouched(tmp_path, text, kernel):
    (tmp_path / "p.py").write_text(text)
    assert check.untouched(tmp_path / "p.py", kernel, tmp_path)  # a course without stub prints


@pytest.mark.parametrize("text", [
    "def add_kernel(x):\n    return x + 1\n",
    "def add_kernel(x):\n    y = (\n",  # half typed: the grader says where it does not parse
    "def other(x):\n    pass\n",  # the kernel renamed or deleted: the grader says so
])
def test_anything_else_is_graded(tmp_path, text):
    (tmp_path / "p.py").write_text(text)
    assert not check.untouched(tmp_path / "p.py", "add_kernel", tmp_path)


def test_puzzle_1_is_judged_by_the_graders_own_stub_print(tmp_path):
    """The shipped print decides, as in the grader: the stub with a comment changed is still the
    stub; a kernel with a statement is not. Puzzle 1's stub holds no variant's code, so the text
    alone gives its print."""
    from grader.source import stubs
    assert stubs.codes_of(Course(PRISTINE).puzzle("puzzle01")) == ()
    root = _course(tmp_path)
    shutil.copy(PRISTINE / "puzzles" / stubs.STUBS_FILE, root / "puzzles")
    stub = root / "puzzles" / "puzzle01_constant_add.py"
    assert check.untouched(stub, "add_kernel", root)
    stub.write_text(stub.read_text().replace("# Your code here.", "# TODO tomorrow"))
    assert check.untouched(stub, "add_kernel", root)
    stub.write_text(stub.read_text().replace(STUB_BODY.replace("Your code here.", "TODO tomorrow"),
                                             "    offsets = tl.arange(0, B0)\n"))
    assert not check.untouched(stub, "add_kernel", root)


def _dry_run(*args: str) -> list[str]:
    done = subprocess.run(["make", "--no-print-directory", "-n", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_makefiles_commands(tmp_path):
    venv = tmp_path / "venv"
    assert _dry_run("check", f"VENV={venv}") == [f"python3 scripts/setup_env.py {venv}",
                                                  f"{venv}/bin/python scripts/check.py  "]
    assert _dry_run("check", f"VENV={venv}", "PUZZLE=puzzle07", "ARGS=-v")[-1] == \
        f"{venv}/bin/python scripts/check.py puzzle07 -v"
    assert _dry_run("notebooks", f"VENV={venv}") == [f"python3 scripts/setup_env.py {venv}",
                                                      f"python3 scripts/setup_env.py {venv} --notebooks",
                                                      f"{venv}/bin/jupyter lab notebooks/00_start_here.ipynb "]
    assert _dry_run("test", f"VENV={venv}")[-1] == f"{venv}/bin/python -m pytest -q -rs "


def _make_check(course: Path, *args: str) -> subprocess.CompletedProcess:
    """`make check` in a copy of the course, with this environment: `-o` keeps make from setting
    it up again (the copy's files are newer than its marker)."""
    venv = Path(sys.prefix)
    return subprocess.run(["make", "--no-print-directory", "-o", f"{venv}/.ready", "check", f"VENV={venv}", *args],
                          cwd=course, capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # grades puzzle 1 from the command line
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_check_on_a_fresh_clone_then_on_a_failure_then_on_a_pass(tmp_path):
    course = _course(tmp_path)
    for name in ("Makefile", "scripts"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, course / name)
    fresh = _make_check(course)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert fresh.stdout.startswith("puzzle01 (Constant add): not attempted yet") and "Error" not in fresh.stderr
    stub = course / "puzzles" / "puzzle01_constant_add.py"
    stub.write_text(stub.read_text().replace(STUB_BODY, "    tl.store(z_ptr + tl.arange(0, B0), 1.0)\n"))
    failed = _make_check(course)
    assert failed.returncode == 2, "make's status for a recipe that failed"
    assert "puzzle01 Constant add: 0/5 cases pass" in failed.stdout
    assert "Error 1" in failed.stderr and "Next:" not in failed.stdout
    solution = (course / "solutions" / stub.name).read_text()
    stub.write_text(stub.read_text().replace("    tl.store(z_ptr + tl.arange(0, B0), 1.0)\n",
                                             solution.split("B0: tl.constexpr):\n", 1)[1]))
    passed = _make_check(course)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.rstrip().endswith("then make check PUZZLE=puzzle02")
    named = _make_check(course, "PUZZLE=puzzle02")
    assert named.returncode == 2 and "puzzle02 Constant add, blocked: not attempted" in named.stdout
