"""A check that cannot run on this machine is said, never skipped (issue 32, "Machines").

On a GPU every small case runs again in Triton's interpreter, each load and store checked. Where
the interpreter is broken here (a probe says so), the grade refuses with the fix; where one
case's run beside cannot finish, that case is neither a pass nor a fail, and says why. Both are
simulated on the CPU: the probe is replaced, and the interpreter beside the grade is a stand-in
(or a real worker, with the grade's own run left without its bounds hooks, as a GPU has none).
"""
from __future__ import annotations

import pytest

from conftest import ROOT, WRONG
from grader.channel import wire
from grader.channel.worker_pool import WorkerProcess, WorkerTimedOut
from grader.judge import machine
from grader.judge.grade import PuzzleGrader
from grader.judge.kinds import kind_of
from grader.judge.options import Options
from grader.judge.results import Status


class Beside:
    """The interpreter beside the GPU, answering every request with ``answer(message)``."""

    def __init__(self, answer) -> None:
        self.answer, self.asked = answer, []

    def request(self, message, blobs=(), timeout=None, reply_bytes=None):
        self.asked.append(message)
        return self.answer(message)

    def recycle(self) -> None:
        pass

    def kill(self) -> None:
        pass


def _ran(failure):
    return wire.Ran(runs=(wire.KernelRun(label="", reversed=False, seconds=0.1, printed="", failure=failure),)), []


def _grade(course, path, beside, puzzle_id="puzzle01", **options):
    worker = WorkerProcess("cpu")
    try:
        return PuzzleGrader(course, puzzle_id, path, worker, Options(compile_check=False, **options),
                            bounds=beside, kind=kind_of(course.puzzle(puzzle_id))).grade()
    finally:
        worker.close()


SOLUTION = ROOT / "solutions" / "puzzle01_constant_add.py"


def test_a_machine_whose_interpreter_is_broken_refuses_with_the_fix(course, monkeypatch):
    """numpy 2.5.2 beside triton 3.6: the check beside the GPU would fail in silence; the grade says so."""
    monkeypatch.setattr(machine, "interpreter_fault", lambda: "a loop over a run-time bound raised TypeError: x")
    versions = {"triton": "3.6.0", "numpy": "2.5.2"}
    monkeypatch.setattr(machine, "_version", lambda name: versions[name])
    beside = Beside(lambda message: pytest.fail("nothing runs on a machine that cannot check"))
    result = PuzzleGrader(course, "puzzle23", WRONG / "puzzle23_target_load_unmasked.py", beside, Options(),
                          bounds=beside, kind=kind_of(course.puzzle("puzzle23"))).grade()
    assert result.status == Status.UNSUPPORTED and not beside.asked
    assert result.message == (
        "not graded on this machine: the bounds check that runs each case again in Triton's interpreter, beside "
        "the GPU, cannot run here (triton 3.6.0, numpy 2.5.2): a loop over a run-time bound raised TypeError: x. "
        "Without it a load out of bounds whose value is never used would pass unseen. Fix: pip install "
        "numpy==2.3.5   (triton 3.6's interpreter breaks with numpy 2.4 and later); `python -m grader doctor` "
        "checks the setup")
    versions["numpy"] = "2.4.6"
    versions["triton"] = "3.7.1"
    assert machine.fix() == "pip install -c constraints.txt triton numpy   (the tested pair)"


def test_the_probe_passes_on_the_tested_set():
    assert machine._run_probe() is None


@pytest.mark.slow  # grades puzzle 1's solution in a real worker
@pytest.mark.parametrize("answer, says", [
    (lambda m: _ran(wire.Failure("interpreter_limit", error="`tl.inline_asm_elementwise` runs PTX", line=7,
                                 source="z = tl.inline_asm_elementwise(...)")),
     "could not run: it cannot run `tl.inline_asm_elementwise` runs PTX at line 7: "
     "`z = tl.inline_asm_elementwise(...)`. A load out of bounds whose value is never used shows on no GPU, so "
     "without that check this case is neither a pass nor a fail"),
    (lambda m: (_ for _ in ()).throw(WorkerTimedOut()), "could not run: it did not finish within 30 s (in case classic[seed=0])"),
    (lambda m: _ran(wire.Failure("exception", error="NotImplementedError: not supported in interpreter mode",
                                 line=8, source="t = tl.extra.cuda.globaltimer()")),
     "could not run: it raised NotImplementedError: not supported in interpreter mode at line 8"),
    (lambda m: _ran(wire.Failure("crash", error="Segmentation fault", fatal=True)),
     "could not run: it ended in a crash in case classic[seed=0]: Segmentation fault"),
])
def test_a_case_whose_check_beside_cannot_run_is_neither_pass_nor_fail(course, monkeypatch, answer, says):
    monkeypatch.setattr(machine, "interpreter_fault", lambda: None)
    beside = Beside(answer)
    result = _grade(course, SOLUTION, beside)
    assert result.status == Status.INTERPRETER_LIMIT, result.message
    first = result.cases[0]
    assert first.kind == "interpreter_limit" and says in first.message, first.message
    assert "the values are right on the GPU, but the bounds check" in result.message
    small = [c for c, spec in zip(result.cases, course.puzzle("puzzle01").cases) if not spec.large]
    assert len(small) > 1 and all(c.kind == "interpreter_limit" for c in small)  # each says it, one tried
    assert len([m for m in beside.asked if isinstance(m, wire.Run)]) == 1


@pytest.mark.slow  # grades puzzle 1's solution in a real worker
def test_an_error_of_the_kernel_in_the_interpreter_beside_fails_as_on_the_cpu(course, monkeypatch):
    monkeypatch.setattr(machine, "interpreter_fault", lambda: None)
    raised = wire.Failure("exception", error="BlockTruth: the truth of a block (shape (32,)) was asked", line=9,
                          source="mask=(i < n) and (i >= 0)")
    result = _grade(course, SOLUTION, Beside(lambda m: _ran(raised)))
    assert result.status == Status.FAIL and result.cases[0].kind == "exception"
    assert ("the kernel raised BlockTruth: the truth of a block (shape (32,)) was asked at line 9: "
            "`mask=(i < n) and (i >= 0)`.") in result.message
    assert "which the grader's CPU run fails the same way" in result.message


@pytest.mark.slow  # grades puzzle 23's wrong kernel in two real workers
def test_a_discarded_load_out_of_bounds_is_found_beside_a_run_without_hooks(course, monkeypatch):
    """The issue's case: the grade's own run has no bounds hooks (as on a GPU), the interpreter
    beside it has; the load of the target's logit for an ignored row fails there."""
    monkeypatch.setattr(machine, "interpreter_fault", lambda: None)
    beside = WorkerProcess("cpu")
    try:
        result = _grade(course, WRONG / "puzzle23_target_load_unmasked.py", beside, "puzzle23", check_bounds=False)
    finally:
        beside.close()
    failing = [c for c in result.cases if not c.passed]
    assert result.status == Status.FAIL and failing[0].kind == "out_of_bounds", result.message
    assert "Found by the bounds check that runs each case in the interpreter beside the GPU" in failing[0].message


@pytest.mark.slow  # grades puzzle 2's wrong kernel in two real workers
def test_a_read_of_another_programs_part_is_found_beside_as_on_the_cpu(course, monkeypatch):
    """A large case beside a GPU runs whole in the interpreter, as the CPU grade does: a program
    that loads a block another program stores fails on both machines (the values alone are right)."""
    monkeypatch.setattr(machine, "interpreter_fault", lambda: None)
    beside = WorkerProcess("cpu")
    try:
        result = _grade(course, WRONG / "puzzle02_reads_neighbours_block.py", beside, "puzzle02", check_bounds=False)
    finally:
        beside.close()
    failing = [c for c in result.cases if not c.passed]
    assert result.status == Status.FAIL and [c.kind for c in failing] == ["race"], result.message
    assert failing[0].label.startswith("past_16_bit_offsets")
    assert "a race: program (1, 0, 0) loaded z(0) at line 22" in failing[0].message
    assert "which it had not stored itself: another program of the same launch, (0, 0, 0), stored it" in \
        failing[0].message


def test_the_wall_clock_backstop_grows_with_the_load(monkeypatch):
    """The limit is CPU time; the wall clock waits at least three times as long, and more per
    unit of load per core: at load 8 on 2 cores a 30 s case is waited for 6 minutes."""
    from grader.channel import worker_pool
    monkeypatch.setattr(worker_pool, "usable_cpus", lambda: 2)
    monkeypatch.setattr(worker_pool.os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    assert worker_pool.backstop(30.0) == 360.0
    monkeypatch.setattr(worker_pool.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert worker_pool.backstop(30.0) == 90.0


def test_the_load_is_counted_per_cpu_the_container_may_use(monkeypatch, tmp_path):
    """A runner limited to 2 CPUs of a 64-core host: os.cpu_count() says 64, the cgroup's quota 2.
    Dividing the load by 64 would wait too short a time for a starved correct kernel."""
    from grader.channel import worker_pool
    monkeypatch.setattr(worker_pool.os, "cpu_count", lambda: 64)
    monkeypatch.setattr(worker_pool.os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    monkeypatch.setattr(worker_pool, "CGROUP", tmp_path)
    assert worker_pool.usable_cpus() == 64  # no quota file: the host's count
    (tmp_path / "cpu.max").write_text("200000 100000\n")
    assert worker_pool.usable_cpus() == 2
    (tmp_path / "cpu.max").write_text("150000 100000\n")  # 1.5 CPUs: the load is spread over 2
    assert worker_pool.usable_cpus() == 2
    (tmp_path / "cpu.max").write_text("max 100000\n")
    monkeypatch.setattr(worker_pool.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert worker_pool.usable_cpus() == 3  # no quota, an affinity of 3 CPUs
    (tmp_path / "cpu.max").write_text("200000 100000\n")
    monkeypatch.setattr(worker_pool.os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    assert worker_pool.backstop(20.0) == 240.0  # load 4 per usable CPU: 12 times the CPU limit


def test_a_timeout_says_which_clock_ran_out():
    from grader.judge import failures
    assert failures.word(failures.Timeout(30.0)).startswith("the kernel did not finish within 30 s of CPU time.")
    assert failures.word(failures.Timeout(30.0, wall=360.0)).startswith(
        "the kernel did not finish within 360 s of wall-clock time (the limit is 30 s of CPU time, waited for "
        "longer on a busy machine).")


def test_the_cpu_limit_travels_beside_the_typed_request():
    header = wire.header(wire.Exit())
    assert wire.cpu_limit(header) is None
    header[wire.CPU_LIMIT] = 30.0
    assert wire.cpu_limit(header) == 30.0 and wire.parse_request(header) == wire.Exit()


@pytest.mark.slow  # grades puzzle 1 twice in a real worker
def test_inline_ptx_is_graded_where_nothing_depends_on_it_and_beside_a_gpu_only_accesses_count(course):
    """Two stand-ins for the PTX: outputs equal under both -> graded on values (a wrong constant
    fails); outputs that differ -> the interpreter's limit; beside a GPU (accesses_only) only the
    accesses must stay in bounds under both, so a correct kernel computing with PTX is checked."""
    import msgspec
    wrong = _grade(course, WRONG / "puzzle01_inline_asm_times_zero.py", None)
    assert wrong.status == Status.FAIL and wrong.cases[0].kind == "mismatch"

    sent = []
    worker = WorkerProcess("cpu")
    try:
        grader = PuzzleGrader(course, "puzzle01", ROOT / "tests" / "hostile" / "puzzle01_inline_asm.py", worker,
                              Options(compile_check=False), kind=kind_of(course.puzzle("puzzle01")))
        request = worker.request

        def recording(message, blobs=(), **kwargs):
            sent.append((message, list(blobs)))
            return request(message, blobs, **kwargs)
        worker.request = recording
        limited = grader.grade()
        assert limited.status == Status.INTERPRETER_LIMIT
        assert ("runs PTX, which the interpreter cannot execute, and the outputs depend on what it computes at "
                "line 15") in limited.message
        message, blobs = next((m, b) for m, b in sent if isinstance(m, wire.Run))
        reply, _ = worker.request(msgspec.structs.replace(message, accesses_only=True, reorder=False), blobs,
                                  timeout=60)
    finally:
        worker.close()
    assert isinstance(reply, wire.Ran) and reply.runs[0].failure is None


def test_a_stand_in_is_a_pure_function_of_its_operands_and_its_seed():
    import numpy as np

    from grader.sandbox.interpreter.filling import as_dtype, values
    x = np.arange(4096, dtype=np.float32)
    a, b = values(1, [x], x.shape, 1)[0], values(2, [x], x.shape, 1)[0]
    assert (a == values(1, [x.copy()], x.shape, 1)[0]).all() and (a != b).all()
    assert (values(1, [x[::-1].copy()], x.shape, 1)[0][::-1] == a).all()  # per element: order does not matter
    floats = as_dtype(a, np.dtype(np.float32))
    assert (np.abs(floats) > 100).any() and (np.abs(floats) < 1).any() and (floats < 0).any()
    halves = as_dtype(b, np.dtype(np.float16))
    assert np.isfinite(halves).all() and (halves * 0 == 0).all()
    assert as_dtype(a, np.dtype(np.int32)).dtype == np.int32
