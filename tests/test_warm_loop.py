"""The warm loop (issue 21): a notebook's checks share one grading context, whose zygotes stay
warm and whose compile checker remembers; every check still runs in fresh workers; the compile
check runs beside the cases, and its failure cancels them; the command line shows the first
failure as soon as it is known. Speed itself is measured by benchmarks/latency.py, never here."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from conftest import COURSE, ROOT
from grader.channel import wire
from grader.judge.options import Options
from pristine import PRISTINE

SOLUTION_01 = (ROOT / "solutions" / "puzzle01_constant_add.py").read_text()
WRONG_01 = SOLUTION_01.replace("x + 10.0", "x + 11.0")


def _payload_in_the_kernel(payload: str) -> str:
    """Puzzle 01's solution whose kernel calls ``_payload()``: Python that the interpreter runs."""
    return SOLUTION_01.replace("    tl.store(", "    _payload()\n    tl.store(", 1) + payload


# Replaces the worker's case runner: were the worker kept for the next check, every kernel after it
# would fail.
PATCHING_01 = _payload_in_the_kernel('''

def _payload():
    from grader.channel import wire
    from grader.sandbox import worker
    worker.Worker.op_run = lambda self, msg, blobs: (wire.Failure("exception", error="patched"), [])
''')

# Kills the zygote that forked its worker.
KILLING_01 = _payload_in_the_kernel('''

def _payload():
    import os
    import signal
    os.kill(os.getppid(), signal.SIGKILL)
''')

# Python that is not Triton (a call of a plain function) runs in the interpreter, and right; the
# compile check fails it.
NOT_TRITON_01 = SOLUTION_01.replace("x + 10.0", "_plus_ten(x)") + '''

def _plus_ten(x):
    return x + 10.0
'''


def test_a_zygote_warms_what_a_fork_asks_once_and_ignores_the_unknown(monkeypatch):
    from grader.sandbox import kinds, warmup
    done = []
    monkeypatch.setattr(warmup.Warmth, "_run", lambda self, step: done.append(step))
    warmth = warmup.prepare("cpu", (), kinds.warm_steps())  # as the worker prepares a zygote
    # fake tensors: 1 s that kernel puzzles never use; helion: seconds that only its track pays
    assert done == ["interpreter"] and warmth.pending == ["fake_tensors", "helion"]
    warmth.warm(["fake_tensors", "no_such_step"])
    warmth.warm(["fake_tensors"])
    assert done == ["interpreter", "fake_tensors"] and warmth.pending == ["helion"]
    warmth.warm(["helion"])
    assert done == ["interpreter", "fake_tensors", "helion"] and warmth.pending == []
    assert warmup.prepare("cuda", (), kinds.warm_steps()).pending == []  # fake tensors would initialise CUDA in the zygote
    done.clear()
    compile_only = warmup.prepare("compile", (), kinds.warm_steps())
    assert done == ["compiler"] and compile_only.pending == ["torch", "helion"] and not compile_only.warm_idle()
    warmup.prepare("compile", ["torch"], kinds.warm_steps())  # a learner's puzzle file imports torch: before it is ready
    assert done == ["compiler", "compiler", "torch"]


def test_the_compile_checkers_import_torch_first_where_the_files_do(tmp_path):
    from grader.judge.session import _compile_warm
    solution, puzzle_file = tmp_path / "a.py", tmp_path / "b.py"
    solution.write_text(SOLUTION_01)
    puzzle_file.write_text((PRISTINE / "puzzles" / "puzzle01_constant_add.py").read_text())
    assert _compile_warm([solution]) == frozenset()
    assert _compile_warm([solution, puzzle_file, tmp_path / "missing.py"]) == {"torch"}
    # a Helion puzzle's file: helion too, which only the interpreter's zygote imports as it starts
    helion_file = PRISTINE / "puzzles" / "puzzle35_helion_vector_add.py"
    assert _compile_warm([helion_file]) == {"torch", "helion"}
    from grader.judge.options import Options as Asked
    from grader.judge.session import start_workers
    crew, = start_workers(Asked(device="cpu"), None, 1, now=False, compile_warm=frozenset({"torch", "helion"}))
    assert crew.worker.warm == {"helion"} and crew.compiler.worker.warm == {"torch"}


def test_helions_import_keeps_its_autotuners_scikit_learn_out_and_lets_it_in_after(monkeypatch):
    """Helion's autotuner would import scikit-learn (and SciPy), a second of its import, for a
    surrogate the grader never runs: kept out while helion is imported, then let in again."""
    import sys

    from grader.sandbox.kinds import helion as helion_wing
    seen = []
    monkeypatch.setitem(sys.modules, "helion", type(sys)("helion"))
    monkeypatch.setitem(sys.modules, "helion.language", type(sys)("helion.language"))
    monkeypatch.setitem(sys.modules, "grader.sandbox.kinds.helion.run", type(sys)("helion_run"))
    monkeypatch.delitem(sys.modules, "sklearn", raising=False)
    real_import = __builtins__["__import__"] if isinstance(__builtins__, dict) else __builtins__.__import__

    def importing(name, *args, **kwargs):
        if name.startswith("helion"):
            seen.append(sys.modules.get("sklearn", "absent"))
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr("builtins.__import__", importing)
    helion_wing.warm()
    assert seen and all(entry is None for entry in seen)  # an import of sklearn raises ImportError then
    assert "sklearn" not in sys.modules


def _stage_asked(monkeypatch, tmp_path, source: str) -> set[str]:
    """The stages the compile check asks for when grading ``source`` as puzzle 01 (nothing runs)."""
    from grader.channel.worker_pool import CompileChecker
    from grader.judge.grade import PuzzleGrader
    from grader.judge.kinds import kind_of
    path = tmp_path / "puzzle01_constant_add.py"
    path.write_text(source)
    checker = CompileChecker("compile")
    asked = []
    monkeypatch.setattr(checker.worker, "request", lambda message, blobs=(), timeout=None:
                        (asked.append(message.stage), (wire.Compiled(variants=1), []))[1])
    grader = PuzzleGrader(COURSE, "puzzle01", path, None, Options(), checker, kind=kind_of(COURSE.puzzle("puzzle01")))
    info = wire.Loaded(params=[wire.KernelParam(n, c) for n, c in
                               (("x_ptr", False), ("z_ptr", False), ("N0", False), ("B0", True))], line=1)
    from grader.channel.binding import Param
    from grader.judge.kinds.kernel.gpu_compile import compile_check
    assert compile_check(grader.state, [Param(p.name, p.constexpr) for p in info.params], info).passed
    return set(asked)


def test_the_compile_check_stops_after_llvm_unless_the_file_needs_ptxas(monkeypatch, tmp_path):
    assert _stage_asked(monkeypatch, tmp_path, SOLUTION_01) == {"llir"}
    asm = SOLUTION_01.replace("x + 10.0", 'tl.inline_asm_elementwise("mov.f32 $0, $1;", "=r,r", [x], '
                                          'dtype=tl.float32, is_pure=True, pack=1) + 10.0')
    assert _stage_asked(monkeypatch, tmp_path, asm) == {"cubin"}  # ptxas reads the learner's PTX


def test_the_compile_checker_remembers_by_file_and_request(monkeypatch, tmp_path):
    from grader.channel.worker_pool import CompileChecker
    from grader.judge.grade import PuzzleGrader
    from grader.judge.kinds import kind_of
    path = tmp_path / "puzzle01_constant_add.py"
    checker = CompileChecker("compile")
    asked = []
    monkeypatch.setattr(checker.worker, "request", lambda message, blobs=(), timeout=None:
                        (asked.append(message), (wire.Compiled(variants=1), []))[1])
    params = [wire.KernelParam(n, c) for n, c in (("x_ptr", False), ("z_ptr", False), ("N0", False), ("B0", True))]
    from grader.channel.binding import Param
    from grader.judge.kinds.kernel.gpu_compile import compile_check

    def check(source: str) -> int:
        path.write_text(source)
        grader = PuzzleGrader(COURSE, "puzzle01", path, None, Options(), checker, kind=kind_of(COURSE.puzzle("puzzle01")))
        before = len(asked)
        assert compile_check(grader.state, [Param(p.name, p.constexpr) for p in params],
                             wire.Loaded(params=params, line=1)).passed
        return len(asked) - before
    first = check(SOLUTION_01)
    assert first >= 1  # one per distinct specialisation of the small cases
    assert check(SOLUTION_01) == 0  # unchanged: nothing compiled again
    assert check(SOLUTION_01 + "\n# edited\n") == first  # any change to the file: compiled again


@pytest.mark.slow  # grades in workers
def test_a_failed_compile_check_is_the_verdict_with_every_case_beside_it(tmp_path):
    from grader.judge.session import grade_many
    path = tmp_path / "puzzle01_constant_add.py"
    path.write_text(NOT_TRITON_01)
    results = [grade_many(COURSE, [("puzzle01", path)], Options()).results[0] for _ in range(2)]
    for result in results:
        assert result.status == "fail" and result.first_failure.kind == "compile", result.message
        assert result.message.startswith("GPU compile check (B0=32): the kernel does not compile for a GPU"), \
            result.message
        assert [c.passed for c in result.cases] == [True] * len(COURSE.puzzle("puzzle01").cases)
    # Every case runs to its end, whenever the check fails: the report does not depend on timing.
    assert [c.kind for c in results[0].cases] == [c.kind for c in results[1].cases]


@pytest.mark.slow  # grades in workers
def test_one_context_grades_again_and_again_in_fresh_workers(tmp_path):
    """As a notebook's checks: a kernel that patches its worker, then one that kills its zygote,
    change nothing for the checks after them. (No compile check here: it would fail these kernels,
    and might cancel their cases before the payload runs.)"""
    from grader.judge.session import Grading
    folder = tmp_path / "checks"
    folder.mkdir()
    path = folder / "puzzle01_notebook.py"
    with Grading(COURSE, [folder / "_"], Options(compile_check=False)) as grading:
        def check(source: str):
            path.write_text(source)
            return grading.grade([("puzzle01", path)]).results[0]

        def passes() -> None:
            result = check(SOLUTION_01)
            assert result.status == "pass", result.message
        passes()
        patched = check(PATCHING_01)
        assert patched.status == "pass", patched.message  # its own cases ran before it patched anything
        passes()
        killed = check(KILLING_01)
        assert killed.status == "fail" and killed.first_failure.kind == "crash", killed.message
        wrong = check(WRONG_01)
        assert wrong.status == "fail" and wrong.first_failure.kind == "mismatch"
        passes()


@pytest.mark.slow  # grades in workers
def test_a_context_compiles_an_unchanged_kernel_once(tmp_path):
    from grader.judge.session import Grading
    path = tmp_path / "puzzle01_notebook.py"
    path.write_text(SOLUTION_01)
    with Grading(COURSE, [path], Options()) as grading:
        compiler = grading.crews[0].compiler
        asked = []
        request = compiler.worker.request
        compiler.worker.request = lambda message, *args, **kwargs: (asked.append(message), request(message, *args,
                                                                                                    **kwargs))[1]
        assert grading.grade([("puzzle01", path)]).results[0].status == "pass"
        compiled = len(asked)
        assert compiled >= 1 and grading.grade([("puzzle01", path)]).results[0].status == "pass"
        assert len(asked) == compiled


@pytest.mark.slow  # checks in workers
def test_a_notebooks_checks_share_one_context_and_draw_with_it(tmp_path, monkeypatch):
    monkeypatch.chdir(PRISTINE / "notebooks")  # the course found from here: as committed, whatever a learner solved
    from grader.app import notebook
    from grader.app.learner import ProgressFile
    (tmp_path / "wrong_cell.py").write_text(WRONG_01)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace = vars(__import__("wrong_cell"))
    progress = ProgressFile(tmp_path / ".progress.json")
    monkeypatch.setattr(notebook, "_kept", notebook._Kept())
    try:
        first = notebook.check(namespace["add_kernel"], "puzzle01", device="cpu", progress=progress)
        second = notebook.check(namespace["add_kernel"], "puzzle01", device="cpu", progress=progress)
        assert not first.passed and not second.passed
        assert len(notebook._kept.contexts) == 1
        assert "<img" in second.html  # the picture, traced by the kept workers
    finally:
        notebook._kept.close()


@pytest.mark.slow  # runs the command line
def test_the_command_line_prints_each_failure_once(tmp_path):
    """Not on a terminal, no early line: the report alone says the failure, once (issue 34). On a
    terminal the early line is transient (tests/test_messages.py)."""
    path = tmp_path / "mine.py"
    path.write_text(WRONG_01)
    run = subprocess.run([sys.executable, "-m", "grader", "puzzle01", "--file", str(path), "--device", "cpu"],
                         cwd=PRISTINE, capture_output=True, text=True)  # the course as committed
    assert run.returncode == 1
    assert "first failing case" not in run.stderr, run.stderr
    assert "0/5 cases pass" in run.stdout
    assert (run.stdout + run.stderr).count("case classic[seed=0] (N0=32, B0=32): wrong values in `z`") == 1


def test_a_lone_student_is_graded_on_every_job(tmp_path):
    from grader.judge import classroom as batch
    seen = []

    def grade_student(course, student, options, memory_mb, threads):
        return seen.append(threads) or batch.StudentResult(student.name, (), (), 0.0)
    students = [type("S", (), {"name": n, "problems": ()})() for n in ("ada",)]
    batch._grade_here(COURSE, students, Options(), 2, 1024, lambda result: None, grade_student)
    students.append(type("S", (), {"name": "bob", "problems": ()})())
    batch._grade_here(COURSE, students, Options(), 2, 1024, lambda result: None, grade_student)
    assert seen == [2, 1, 1]


@pytest.mark.slow  # grades in workers
def test_a_jail_started_by_a_grading_thread_outlives_it(tmp_path):
    """bwrap dies with the thread that started it: every jail is started by one long-lived thread,
    so that a zygote started (or restarted) during one grade serves the next."""
    from grader.judge.session import Grading
    path = tmp_path / "puzzle01_notebook.py"
    path.write_text(SOLUTION_01)
    with Grading(COURSE, [path], Options(compile_check=False), now=False) as grading:  # started by the pool
        assert grading.grade([("puzzle01", path)]).results[0].status == "pass"
        zygote = grading.crews[0].worker.confined.proc
        time.sleep(0.5)
        assert zygote.poll() is None
        assert grading.grade([("puzzle01", path)]).results[0].status == "pass"
        assert grading.crews[0].worker.confined.proc is zygote


def test_a_compile_failure_is_reported_with_the_cases_that_ran_beside_it():
    from grader.judge.results import CaseResult, CheckResult, PuzzleResult
    from grader.report.text import render_puzzle

    def case(name, passed, kind=None, message=""):
        return CaseResult(name=name, sizes={"N0": 32}, blocks={"B0": 32}, seed=0, grid=(1,), passed=passed,
                          kind=kind, message=message)
    compile_failure = "GPU compile check (B0=32): the kernel does not compile for a GPU (sm_90): ..."
    result = PuzzleResult(puzzle="puzzle01", title="Constant add", status="fail", source="x.py", device="cpu",
                          cases=(case("classic", True), case("wider", False, "mismatch", "case wider: wrong values"),
                                 case("narrow", False, "skipped", "not run: the kernel does not compile for a GPU")),
                          checks={"gpu_compile": CheckResult(False, compile_failure, "compile")}, message=compile_failure)
    assert result.telling_failure is result.checks["gpu_compile"] is result.first_failure
    assert render_puzzle(result).splitlines() == [
        "✗ puzzle01 Constant add: does not compile for a GPU (the interpreter ran 2 of 3 case(s) beside the check, "
        "1 passing: none counts until it compiles)",
        f"    {compile_failure}"]


def test_a_zygote_whose_grader_went_away_ends_without_pythons_shutdown(tmp_path):
    """Python's shutdown of a process that imported torch and helion took seconds, which a command
    waited for as it ended (twice: the interpreter's zygote, then the checker's). A zygote whose
    control socket closes reaps its worker and ends at once, with status 0: an exit hook never runs."""
    import os
    import socket
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    marker = tmp_path / "shutdown-ran"
    (hooks / "sitecustomize.py").write_text(
        f"import atexit\natexit.register(lambda: open({str(marker)!r}, 'w').close())\n")
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hooks), str(ROOT)]))
    zygote = subprocess.Popen([sys.executable, "-m", "grader.sandbox.zygote", "--device", "compile",
                               "--control-fd", str(theirs.fileno())], pass_fds=(theirs.fileno(),), env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    theirs.close()
    try:
        assert b'"ready"' in ours.recv(1 << 16)
    finally:
        ours.close()  # the grader goes away
    assert zygote.wait(timeout=60) == 0, zygote.stderr.read().decode()[-2000:]
    assert not marker.exists()
