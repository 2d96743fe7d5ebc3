"""Any name: a file, a folder, a student or a home folder with spaces, accents or CJK characters
grades as an ASCII one does, in the interpreter and through the GPU compile check.

The compile check runs Triton's whole compile, ptxas included, on this CPU machine: ptxas
refuses PTX holding a non-ASCII character, and Triton's line info put the kernel file's name
into the PTX (`// José Müller.py:3:0`). Workers now compile without line info
(grader/channel/isolation.py, WORKER_ENV); compile errors still name the learner's line.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import COURSE, ROOT, WRONG
from grader.channel.isolation import WORKER_ENV, Jail, bwrap_command, sandbox_available
from grader.judge.classroom import grade_class
from grader.judge.messages import compile_failure
from grader.judge.options import Options
from grader.judge.session import grade_many
from pristine import PRISTINE

SOLUTION = ROOT / "solutions" / "puzzle01_constant_add.py"
NAMES = ["José Müller.py", "张伟 第一题.py", "naïve café/puzzle01.py", "作业 一/Ana María/mi núcleo.py"]


def _copies(tmp_path: Path, source: Path) -> list[Path]:
    paths = []
    for name in NAMES:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, path)
        paths.append(path)
    return paths


@pytest.mark.slow
def test_files_and_folders_of_any_name_pass_with_the_compile_check(tmp_path):
    paths = _copies(tmp_path, SOLUTION)
    report = grade_many(COURSE, [("puzzle01", p) for p in paths], Options(), jobs=2)
    for path, result in zip(paths, report.results):
        assert result.status == "pass", f"{path.relative_to(tmp_path)}: {result.message}"
        assert result.checks["gpu_compile"].passed, path.name


@pytest.mark.slow
def test_a_compile_failure_in_a_file_of_any_name_names_the_learners_line(tmp_path):
    path = tmp_path / "Łukasz Ñandú" / "José Müller.py"
    path.parent.mkdir()
    shutil.copy(WRONG / "puzzle01_missing_constexpr.py", path)
    result = grade_many(COURSE, [("puzzle01", path)], Options()).results[0]
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "tl.arange(0, B0)" in text)
    assert result.status == "fail"
    assert f"at line {line}: `" in result.message, result.message
    assert "does not compile for a GPU (sm_90)" in result.message
    assert "non-ASCII" not in result.message


@pytest.mark.slow
def test_a_class_whose_students_have_names_of_any_script(tmp_path):
    submissions = tmp_path / "class"
    (submissions / "张 伟").mkdir(parents=True)
    shutil.copy(SOLUTION, submissions / "José Müller.py")  # one file: the student's name is the file's
    shutil.copy(SOLUTION, submissions / "张 伟" / "puzzle01_constant_add.py")
    shutil.copy(SOLUTION, submissions / "bob.py")
    run = grade_class(COURSE, submissions, Options(timeout=20), jobs=2)
    totals = {r.student: r.total for r in run.results}
    assert totals == {"José_Müller": 1, "张_伟": 1, "bob": 1}, totals


def _grade_in_subprocess(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "puzzle01", "--file", str(SOLUTION), *args],
                          capture_output=True, text=True, cwd=PRISTINE, env=env, timeout=300)  # the course as committed


@pytest.mark.slow
def test_a_learner_whose_home_and_temporary_folders_are_not_ascii(tmp_path):
    home = tmp_path / "Usuários" / "joão 家"
    (home / "tmp").mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(home / "tmp"), "XDG_CACHE_HOME": str(home / ".cache")}
    env.pop("TRITON_CACHE_DIR", None)  # Triton's cache under the learner's home, as it is by default
    run = _grade_in_subprocess(env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "5/5 cases pass + GPU compile check" in run.stdout


@pytest.mark.slow
def test_without_the_sandbox_a_home_that_is_not_ascii_grades_too(tmp_path):
    """Outside bubblewrap a worker keeps the learner's environment: HOME, TMPDIR, Triton's cache."""
    home = tmp_path / "Müller 家"
    (home / "tmp").mkdir(parents=True)
    file = home / "Mis núcleos" / "José.py"
    file.parent.mkdir()
    shutil.copy(SOLUTION, file)
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(home / "tmp")}
    env.pop("TRITON_CACHE_DIR", None)
    code = ("import sys; from pathlib import Path; from grader.course.loader import Course; from grader.judge.options import Options;"
            "from grader.judge.session import grade_many;"
            f"r = grade_many(Course(Path({str(PRISTINE)!r})), [('puzzle01', Path({str(file)!r}))], Options(sandbox='off'));"
            "print(r.results[0].status, r.results[0].checks['gpu_compile'].passed, r.results[0].message)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert run.stdout.startswith("pass True"), run.stdout + run.stderr


def test_every_worker_compiles_without_line_info():
    if sandbox_available():
        command = bwrap_command(["true"], Jail(), {}, 3, gpu=False)
        settings = {command[i + 1]: command[i + 2] for i, arg in enumerate(command) if arg == "--setenv"}
        assert settings["TRITON_DISABLE_LINE_INFO"] == "1"
    assert WORKER_ENV == {"TRITON_DISABLE_LINE_INFO": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def test_a_ptxas_complaint_is_the_reason_shown():
    error = ("PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n"
             "ptxas fatal   : Unexpected non-ASCII character encountered on line 22\n"
             "ptxas fatal   : Ptx assembly aborted due to errors\n\n"
             "Repro command: ptxas -lineinfo -v --gpu-name=sm_90a /tmp/x.ptx -o /tmp/x.ptx.o\n")
    from grader.sandbox.compile_errors import describe

    class PTXASError(Exception):
        pass
    text = compile_failure(describe(PTXASError(error[len("PTXASError: "):]), None, "/nowhere.py"), None, "")
    assert text.startswith("the kernel does not compile for a GPU (sm_90): ptxas, NVIDIA's assembler, rejected "
                           "the kernel: Unexpected non-ASCII character encountered on line 22."), text
    assert "Repro command" not in text
    assert "Fix: this is Triton's code generation failing" in text
