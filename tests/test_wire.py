"""The worker wire and the result model's vocabulary: typed messages, statuses and failure kinds."""
from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import ClassVar

import pytest

from grader.judge.failures import FailureKind
from grader.judge.results import CaseResult, CheckResult, PuzzleResult, Status, to_dict

ROOT = Path(__file__).resolve().parent.parent


def test_statuses_and_kinds_read_as_the_plain_strings_they_replace():
    case = CaseResult(name="a", sizes={}, blocks={}, seed=0, grid=(1,), passed=False, kind="mismatch")
    result = PuzzleResult(puzzle="p", title="t", status="fail", source="s", device="cpu", cases=(case,))
    assert case.kind is FailureKind.MISMATCH and result.status is Status.FAIL
    assert f"{case.kind} {result.status}" == "mismatch fail" and case.kind == "mismatch"
    assert json.loads(json.dumps(to_dict(result)))["cases"][0]["kind"] == "mismatch"
    assert json.dumps(to_dict(result)).count('"fail"') == 1


def test_an_unknown_status_or_kind_is_refused():
    with pytest.raises(ValueError, match="unknown failure kind 'mismatched'"):
        CaseResult(name="a", sizes={}, blocks={}, seed=0, grid=(1,), passed=False, kind="mismatched")
    with pytest.raises(ValueError, match="unknown failure kind"):
        CheckResult(False, "x", "oops")
    with pytest.raises(ValueError, match="unknown status 'passed'"):
        PuzzleResult(puzzle="p", title="t", status="passed", source="s", device="cpu")


def test_every_kind_the_grader_and_the_corpus_name_is_a_failure_kind():
    """Kinds written as literals (``kind="..."``, ``Comparison(False, "...")``, ``CheckResult(False, ..., "...")``)
    and every kind the wrong-kernel corpus expects."""
    named = set()
    for path in (ROOT / "grader").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            callee = ast.unparse(node.func)
            for keyword in node.keywords:
                if keyword.arg == "kind" and isinstance(keyword.value, ast.Constant) and callee != "Puzzle":
                    named.add(keyword.value.value)
            if callee in ("Comparison", "CheckResult") and len(node.args) >= 2 + (callee == "CheckResult"):
                value = node.args[1 + (callee == "CheckResult")]
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    named.add(value.value)
    for path in (ROOT / "tests" / "wrong_kernels").glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "EXPECT_KIND":
                named.add(node.value.value)
    named.discard(None)
    assert named and named <= {k.value for k in FailureKind}, named - {k.value for k in FailureKind}


# ---- the wire: checked when sent, checked when read ----------------------------------------
from grader.channel import (
    wire,  # noqa: E402
    wire_measure,
)
from grader.channel.kinds import function as function_wire
from grader.channel.worker_pool import WorkerDied, WorkerProcess  # noqa: E402


def _run_request(**change) -> wire.Run:
    fields = dict(file="k.py", kernel="add_kernel", puzzle_file="p.py", values={"N0": 200}, named={"B0": 32},
                  buffers=(wire.BufferSpec(name="x", role="input", dtype="float32", shape=(200,), strides=(1,),
                                           guard=1024, nbytes=800, total=2880, param="x_ptr"),))
    return wire.Run(**{**fields, **change})


def _sent(message) -> dict:
    """``message``'s header as the other side reads it: through JSON, with the protocol's blob count."""
    return json.loads(json.dumps({**wire.header(message), "blobs": 0}))


def test_a_request_goes_through_json_unchanged_and_a_typo_or_a_wrong_type_is_refused():
    request = _run_request(check_bounds=False)
    header = _sent(request)
    assert wire.parse_request(header) == request and header["op"] == "run" and header["check_bounds"] is False
    with pytest.raises(wire.WireError, match="unknown field `check_bound`"):
        wire.parse_request({**header, "check_bound": False})
    with pytest.raises(wire.WireError, match=r"Expected `bool`, got `int` - at `\$.check_bounds`"):
        wire.parse_request({**header, "check_bounds": 1})
    with pytest.raises(wire.WireError, match="missing required field `kernel`"):
        wire.parse_request({k: v for k, v in header.items() if k != "kernel"})
    with pytest.raises(wire.WireError, match=r"Invalid value 'rnu' - at `\$.op`"):
        wire.parse_request({**header, "op": "rnu"})
    with pytest.raises(wire.WireError, match=r"Invalid enum value 'scratch' - at `\$.buffers\[0\].role`"):
        wire.parse_request({**header, "buffers": [{**header["buffers"][0], "role": "scratch"}]})
    with pytest.raises(wire.WireError, match=r"at `\$.buffers\[0\].role`"):  # the sender is held to it too
        wire.header(_run_request(buffers=(wire.BufferSpec("x", "scratch", "float32", (200,), (1,), 1024, 800, 2880),)))


def test_a_rule_across_fields_is_kept_when_built_and_when_read():
    with pytest.raises(wire.WireError, match="BufferSpec 'x': guard 1024 and 800 bytes exceed 2000"):
        wire.BufferSpec("x", "input", "float32", (200,), (1,), 1024, 800, 2000)
    header = _sent(_run_request())
    with pytest.raises(wire.WireError, match="^BufferSpec 'x': guard 1024 and 800 bytes exceed 2000$"):
        wire.parse_request({**header, "buffers": [{**header["buffers"][0], "total": 2000}]})
    with pytest.raises(wire.WireError, match="^Program: a ref outside the 1 the program has$"):
        wire.convert({"inputs": 0, "metas": [{"shape": [], "strides": [], "dtype": "float32", "offset": 0,
                                             "storage": 0}], "steps": [], "output": {"ref": 3}, "grads": [],
                      "saved": []}, function_wire.Program)


def test_a_str_or_int_of_a_class_of_its_own_is_sent_as_plain_json():
    class Version(str):
        pass

    class Count(int):
        pass
    timing = {"sizes": {"batch": [4096], "D": 1024}, "blocks": {}, "outputs": [{"dtype": "float32", "shape": [4096]}],
              "copy_ms": 0.01, "ms": 1.0, "baseline_ms": 2.0, "ms_rounds": [1.0, 1.5, 1.25],
              "baseline_ms_rounds": [2.0, 2.0, 2.5]}
    benched = wire_measure.Benched(device="GPU", copy=wire_measure.CopyBandwidth(gb_per_s=1000, cached=True, bytes=Count(8)),
                           result=wire.convert(timing, wire_measure.BenchTiming), statistic="median",
                           versions={"torch": Version("2.11.0+cu130")})
    header = _sent(benched)
    assert type(wire.envelope(benched)["versions"]["torch"]) is str and header["copy"]["bytes"] == 8
    parsed = wire.parse_reply(wire_measure.Benched, header)
    assert parsed.versions == {"torch": "2.11.0+cu130"} and parsed.copy.gb_per_s == 1000.0
    assert wire.envelope(parsed)["result"] == timing  # no figure a puzzle lacks is sent as null
    with pytest.raises(wire.WireError, match="a value of type object cannot go on the wire"):
        wire.header(wire.Loaded(params=(), line=None, defaults={"B0": object()}))


def test_a_float_that_is_not_finite_goes_on_the_wire():
    """A kernel's ``float("-inf")`` default reaches the grader as -inf, not as null."""
    loaded = wire.Loaded(params=(), line=3, defaults={"NEG": float("-inf"), "B0": 32})
    assert wire.parse_reply(wire.Loaded, _sent(loaded)).defaults == {"NEG": float("-inf"), "B0": 32}


def test_a_size_of_several_dims_goes_on_the_wire():
    bench = wire_measure.Bench(puzzle_file="p.py", file="k.py", graphs=True, sizes={"batch": (4, 50), "D": 96}, traffic=8,
                       inputs=(wire_measure.TensorShape("float32", (4, 50, 96)),), values={"batch": (4, 50), "D": 96})
    header = _sent(bench)
    parsed = wire.parse_request(header)
    assert header["values"] == {"batch": [4, 50], "D": 96} and parsed.values == {"batch": (4, 50), "D": 96}
    assert _sent(parsed) == header


@pytest.mark.parametrize("header, says", [
    ({"reply": "ran"}, "missing required field `runs`"),
    ({"reply": "ran", "runs": []}, "^Ran: no runs$"),
    ({"reply": "ran", "runs": [{"label": "", "reversed": False, "seconds": "fast", "printed": ""}]},
     r"Expected `float`, got `str` - at `\$.runs\[0\].seconds`"),
    ({"reply": "ran", "runs": [{"label": "", "reversed": False, "seconds": 0, "printed": "", "verdict": "pass"}]},
     r"unknown field `verdict` - at `\$.runs\[0\]`"),
    ({"reply": "failure", "kind": "pass"}, r"Invalid enum value 'pass' - at `\$.kind`"),
    ({"reply": "failure", "kind": "out_of_bounds"}, "an access comes with kind 'out_of_bounds'"),
    ({"reply": "failure", "kind": "race"}, "a crossing comes with kind 'race'"),
    ({"reply": "failure", "kind": "exception", "access": {"op": "load", "tensor": "x", "shape": [1], "numel": 1,
                                                          "first_index": 1, "bad_lanes": 1, "lanes": 1,
                                                          "program": [0]}}, "and only with it"),
    ({"reply": "compiled", "variants": 1}, r"Invalid value 'compiled' - at `\$.reply`"),
    ({"runs": []}, "missing required field `reply`"),
    (["ok"], "Expected `object`, got `array`"),
])
def test_a_reply_that_is_not_what_its_request_allows_is_refused(header, says):
    with pytest.raises(wire.WireError, match=says):
        wire.parse_reply(wire.Ran, header)


def test_replies_of_every_operation_go_through_json_unchanged():
    access = {"op": "store", "tensor": "z", "shape": [200], "numel": 200, "first_index": 200, "bad_lanes": 24,
              "lanes": 32, "program": [6, 0, 0], "line": 9, "source": "tl.store(z_ptr + i, x)", "via": None}
    tensor = {"tensor": True, "type": "", "shape": [4, 8], "dtype": "float32"}
    meta = {"shape": [4, 8], "strides": [8, 1], "dtype": "float32", "offset": 0, "storage": 0}
    step = {"phase": "forward", "args": [{"ref": 0}, [32]], "kwargs": {}, "file": "", "line": 12,
            "source": "y = x.view(32)", "op": "aten::view.default", "out": [2], "kernel": None, "grids": [],
            "compiled": False, "options": {}}
    launch = {**step, "op": "", "out": [], "kernel": {"path": ["add_kernel"], "hops": 0}, "grids": [[4], [2]]}
    program = {"inputs": 1, "metas": [meta, meta, {**meta, "shape": [32], "strides": [1]}], "steps": [step, launch],
               "output": {"ref": 2, "type": ""}, "grads": [{"ref": None, "type": "NoneType"}], "saved": [0, None],
               "attributes": [], "unseen": None}
    failure = {"reply": "failure", "kind": "out_of_bounds", "error": "", "line": None, "source": "", "defined": [],
               "reason": "", "access": access, "config": "", "fatal": False, "crossing": None}
    replies = [
        (wire.Loaded, {"reply": "loaded", "params": [{"name": "x_ptr", "constexpr": False}], "line": 3,
                       "provided": [], "defaults": {"B0": 32, "scale": 0.5, "flag": True}, "configs": [],
                       "heuristics": []}),
        (wire.Ran, {"reply": "ran", "runs": [{"label": "", "reversed": False, "seconds": 0.5, "printed": "",
                                              "failure": failure, "overlaps": [], "early_reads": [],
                                              "unwritten_reads": [{"tensor": "z", "index": 2, "program": [0, 0, 0],
                                                                   "shape": [40], "line": 7, "source": "tl.load(z)"}],
                                              "crossings": [{"tensor": "z", "index": 3, "shape": [40],
                                                             "program": [1, 0, 0], "other": [0, 0, 0],
                                                             "loaded": True, "line": 9, "source": "tl.load(z)"}],
                                              "atomics": False, "trace": None,
                                              "heuristics": {}, "launches": [
                                                  {"grid": [40, 1, 1], "programs": 40, "runs": 3, "serial": "",
                                                   "crossed": True},
                                                  {"grid": [8, 2, 1], "programs": 16, "runs": 1,
                                                   "serial": "a store into one of the case's inputs",
                                                   "crossed": False}]}]}),
        (function_wire.Recorded, {"reply": "recorded", "seconds": 1.0, "printed": "hi", "program": program, "failure": None,
                         "host": None, "phase": "forward"}),
        (function_wire.Replayed, {"reply": "replayed", "seconds": 1.0, "printed": "", "returned": [tensor, {
                         **tensor, "tensor": False, "shape": [], "dtype": "", "type": "NoneType"}], "failure": None,
                         "label": "", "disagrees": "", "launches": [
                             {"grid": [3, 6, 1], "programs": 18, "runs": 2, "serial": "", "crossed": False}]}),
        (wire.Compiled, {"reply": "compiled", "variants": 2, "stats": [
            {"label": "", "registers": 40, "spill_bytes": 0, "shared": 0, "num_warps": 4, "num_stages": 3,
             "tensor_cores": "wgmma", "alu": 120, "slow": 4, "loops": 1, "loop_shared": 0}],
         "ttir": "module {\n}"}),
        (wire_measure.Profiled, {"reply": "profiled", "launches": [{
            "kernel": "k", "group": 0, "config": "", "grid": [4, 1, 1], "interpreted": 2, "num_warps": 4,
            "num_stages": 3, "accesses": [{"tensor": "x", "op": "load", "line": 7, "source": "tl.load(x)",
                                           "requests": 2, "lanes": 256, "active": 200, "bytes": 800, "sectors": 26,
                                           "program_unique": 26, "union": 26, "tensor_bytes": 1600,
                                           "same_address": 0, "conflicts": 0, "fresh": 20}],
            "dots": [{"precision": "fp16", "calls": 1, "flops": 1024, "shape": [16, 16, 2]}], "alu": 512, "sfu": 0,
            "seconds": 0.1, "path": ["k"], "hops": 1, "arguments": [{"pointer": "float32"}, 4],
            "keywords": {"B": 128}, "planned": 4, "loops_sampled": 1, "reductions": 2}], "torch_ops": [{"name": "aten.sum.dim_IntList", "count": 1, "bytes": 64}],
            "seconds": 0.2, "printed": "", "failure": None}),
        (wire.Compiled, failure | {"kind": "compile", "access": None, "config": "BLOCK: 64"}),
    ]
    for cls, header in replies:
        reply = wire.parse_reply(cls, {**header, "blobs": 0})
        assert isinstance(reply, cls if header["reply"] != "failure" else wire.Failure)
        assert wire.envelope(reply) == header
    assert wire.parse_reply(function_wire.Replayed, replies[3][1]).blobs_expected() == 1
    assert wire.parse_reply(function_wire.Recorded, replies[2][1]).program.replays() == 2
    assert wire.parse_reply(wire.Loaded, replies[0][1]).defaults == {"B0": 32, "scale": 0.5, "flag": True}
    ran = wire.parse_reply(wire.Ran, replies[1][1])
    assert ran.head.failure.access == wire.convert(access, wire.OutOfBoundsAccess) and ran.head.failure.access.program \
        == (6, 0, 0)
    with pytest.raises(TypeError, match="not a reply: Run"):
        wire.envelope(_run_request())


class _Dummy:
    def kill(self):
        pass


class _Channel:
    """A worker that is already up and answers ``header``."""

    def __init__(self, header):
        self.header = header

    def read_message(self, timeout=None, most=None):
        return self.header, []


def test_a_malformed_reply_is_the_workers_failure_and_the_worker_is_killed(monkeypatch):
    worker = WorkerProcess("cpu")
    killed = []
    monkeypatch.setattr(worker, "start", lambda: None)
    monkeypatch.setattr(worker, "kill", lambda: killed.append(True))
    monkeypatch.setattr("grader.channel.worker_pool.write_message", lambda *a, **k: None)
    worker.channel, worker._worker_ready = type("S", (), {"fileno": lambda self: -1})(), True
    worker.reader = _Channel({"reply": "ran", "runs": [{"label": "", "reversed": False, "seconds": 0.1,
                                                        "printed": "", "verdict": "pass"}], "blobs": 0})
    with pytest.raises(WorkerDied) as died:
        worker.request(_run_request())
    assert died.value.corrupted and died.value.stderr_tail == \
        "malformed reply: Ran or Failure: Object contains unknown field `verdict` - at `$.runs[0]`"
    assert killed


def test_the_worker_refuses_a_request_with_a_typo_and_keeps_serving():
    class Typo(wire.Request, tag="load"):  # a load with one field too many, as a typo in the grader would send
        REPLY: ClassVar[type] = wire.Loaded
        file: str
        kernel: str
        check_bound: bool = True

    worker = WorkerProcess("cpu")
    try:
        refused, _ = worker.request(Typo(file=str(ROOT / "solutions/puzzle01_constant_add.py"), kernel="add_kernel"),
                                    timeout=60)
        loaded, _ = worker.request(wire.Load(file=str(ROOT / "solutions/puzzle01_constant_add.py"),
                                             kernel="add_kernel"), timeout=60)
    finally:
        worker.close()
    assert isinstance(refused, wire.Failure) and refused.kind == "error"
    assert "WireError: request: Object contains unknown field `check_bound`" in refused.error
    assert isinstance(loaded, wire.Loaded)


# ---- one reply handler for kernel and autograd puzzles -------------------------------------
class _Worker:
    """Answers Load with a kernel, and every other request with ``answer(message)``."""

    def __init__(self, answer):
        self.answer, self.killed, self.asked, self.warm = answer, 0, [], frozenset()

    def request(self, message, blobs=(), timeout=None, reply_bytes=None):
        self.asked.append(message)
        if isinstance(message, wire.Load):
            params = () if "puzzle15" in message.file else tuple(
                wire.KernelParam(n, c) for n, c in (("x_ptr", False), ("z_ptr", False), ("N0", False), ("B0", True)))
            return wire.Loaded(params=params, line=1), []
        return self.answer(message)

    def malformed(self, error):
        self.killed += 1
        raise WorkerDied(None, f"malformed reply: {error}", corrupted=True)

    def kill(self):
        self.killed += 1

    def recycle(self):
        pass


def _grade(course, puzzle_id, answer, device="cpu"):
    from grader.judge.grade import PuzzleGrader
    from grader.judge.kinds import kind_of
    from grader.judge.options import Options
    worker = _Worker(answer)
    solution = ROOT / "solutions" / course.puzzle_file(puzzle_id).name
    return PuzzleGrader(course, puzzle_id, solution, worker, Options(compile_check=False, device=device),
                        kind=kind_of(course.puzzle(puzzle_id))).grade(), worker


COMPILE_ERROR = wire.Failure("compile", error="CompilationError: at 4:8:\n    y = x[0]\n        ^\nunsupported "
                             "tensor index: constexpr[0]", line=12, source="y = x[0]")


@pytest.mark.parametrize("puzzle_id", ["puzzle01", "puzzle15"])
def test_a_compile_error_reads_the_same_for_a_kernel_and_an_autograd_puzzle(course, puzzle_id):
    """On a GPU a kernel that does not compile fails its case as ``compile``, whether the
    grader launched it or the learner's autograd wrapper did (which was once an ``exception``)."""
    answer = (lambda m: (COMPILE_ERROR, [])) if puzzle_id == "puzzle15" else \
        (lambda m: (wire.Ran(runs=(wire.KernelRun(label="", reversed=False, seconds=0.25, printed="",
                                                   failure=COMPILE_ERROR),)), []))
    result, _ = _grade(course, puzzle_id, answer, device="cuda")
    first = result.cases[0]
    assert result.status == "fail" and first.kind == "compile"
    assert first.message.endswith("the kernel does not compile for this GPU at line 12: `y = x[0]`: unsupported "
                                  "tensor index: constexpr[0].")
    assert all(c.kind is None or c.kind == "compile" for c in result.cases), [c.message for c in result.cases]


@pytest.mark.parametrize("puzzle_id", ["puzzle01", "puzzle15", "puzzle35"])
def test_a_timeout_and_a_crash_read_the_same_for_every_kind(course, puzzle_id):
    """A kernel, an autograd and a Helion puzzle: the case that timed out or crashed is named in
    every case it stops (a Helion crash once said "not run: crashed")."""
    from grader.channel.worker_pool import WorkerTimedOut

    def timeout(message):
        raise WorkerTimedOut()
    result, _ = _grade(course, puzzle_id, timeout)
    first, rest = result.cases[0], result.cases[1:]
    assert first.kind == "timeout" and first.seconds == 30.0 and "did not finish within 30 s" in first.message
    assert rest and all(c.kind == "skipped" and c.message.endswith(f"{first.label} timed out") for c in rest)

    result, worker = _grade(course, puzzle_id, lambda m: (wire.Failure("crash", error="CUDA error: boom",
                                                                       fatal=True), []))
    first, rest = result.cases[0], result.cases[1:]
    assert first.kind == "crash" and "the kernel crashed its process (CUDA error: boom)" in first.message
    assert worker.killed == 1 and rest
    assert all(c.kind == "skipped" and c.message == f"not run: {first.label} crashed" for c in rest)


def test_a_reply_without_the_bytes_it_announces_is_a_crash_never_a_pass(course):
    """A run that says it succeeded but sends no buffers back has nothing to be judged on."""
    result, worker = _grade(course, "puzzle01", lambda m: (wire.Ran(runs=(wire.KernelRun(
        label="", reversed=False, seconds=0.1, printed=""),)), []))
    first = result.cases[0]
    assert result.status == "fail" and first.kind == "crash" and worker.killed == 1
    assert "garbage into the grader's channel (malformed reply: 0 blobs for 1 run(s) of 2 buffers)" in first.message


def test_a_worker_error_is_a_grader_error(course):
    result, _ = _grade(course, "puzzle15", lambda m: (wire.Failure("error", error="Traceback: boom"), []))
    assert result.status == "error" and "worker error: Traceback: boom" in result.message


def test_a_deeply_nested_header_is_a_broken_channel_not_a_grader_crash():
    import os
    import struct

    from grader.channel.protocol import ChannelClosed, Reader
    header = b"[" * 50_000  # fits in a pipe buffer; json gives up far sooner
    read, write = os.pipe()
    try:
        os.write(write, struct.pack(">Q", len(header)) + header)
        with pytest.raises(ChannelClosed, match="unreadable message"):
            Reader(read).read_message(timeout=5)
    finally:
        os.close(read)
        os.close(write)


NOT_CONSTEXPR_WRAPPER = '''import torch
import triton
import triton.language as tl


@triton.jit
def row_dot_kernel(x_ptr, w_ptr, y_ptr, D):
    row = tl.program_id(0)
    cols = tl.arange(0, D)
    x = tl.load(x_ptr + row * D + cols)
    tl.store(y_ptr + row, tl.sum(x * tl.load(w_ptr + cols)))


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        rows = x.reshape(-1, x.shape[-1]).contiguous()
        y = x.new_empty(rows.shape[0])
        row_dot_kernel[(rows.shape[0],)](rows, weight, y, rows.shape[1])
        ctx.save_for_backward(x, weight)
        return y.reshape(x.shape[:-1])

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output[..., None] * weight, (grad_output[..., None] * x).reshape(-1, x.shape[-1]).sum(0)
'''


@pytest.mark.slow  # grades in a real worker
def test_an_autograd_wrappers_kernel_that_does_not_compile_fails_as_compile_in_the_interpreter(course, tmp_path):
    """The interpreter would run `tl.arange(0, D)` with a runtime D as Python; the compile check
    of the wrapper's launches, as a GPU would compile them, fails the case instead."""
    from grader.channel.worker_pool import CompileChecker
    from grader.judge.grade import PuzzleGrader
    from grader.judge.kinds import kind_of
    from grader.judge.options import Options
    wrapper = tmp_path / "puzzle15_weighted_sum_function.py"
    wrapper.write_text(NOT_CONSTEXPR_WRAPPER)
    worker, compiler = WorkerProcess("cpu"), CompileChecker("compile")
    try:
        result = PuzzleGrader(course, "puzzle15", wrapper, worker, Options(), compiler,
                              kind=kind_of(course.puzzle("puzzle15"))).grade()
    finally:
        worker.close()
        compiler.close()
    first = result.cases[0]
    assert result.status == "fail" and first.kind == "compile", first.message
    assert "GPU compile check of `row_dot_kernel` launched at line 19: `row_dot_kernel[(rows.shape[0],)](rows, " \
           "weight, y, rows.shape[1])`" in first.message
    assert "at line 9: `cols = tl.arange(0, D)`" in first.message


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="a GPU compiles; the interpreter does not")
def test_an_autograd_wrappers_kernel_that_does_not_compile_fails_as_compile_on_a_gpu(course, tmp_path):
    from grader.judge.grade import PuzzleGrader
    from grader.judge.kinds import kind_of
    from grader.judge.options import Options
    wrapper = tmp_path / "puzzle15_weighted_sum_function.py"
    wrapper.write_text(NOT_CONSTEXPR_WRAPPER)
    worker = WorkerProcess("cuda")
    try:
        result = PuzzleGrader(course, "puzzle15", wrapper, worker, Options(device="cuda"),
                              kind=kind_of(course.puzzle("puzzle15"))).grade()
    finally:
        worker.close()
    first = result.cases[0]
    assert result.status == "fail" and first.kind == "compile", first.message
    assert "the kernel does not compile for this GPU at line 9: `cols = tl.arange(0, D)`" in first.message


@pytest.mark.slow  # grades a puzzle's solution in a real worker
@pytest.mark.parametrize("puzzle_id", ["puzzle01", "puzzle15"])
def test_on_a_gpu_a_stray_load_the_interpreter_beside_it_finds_fails_the_case(course, puzzle_id):
    """The GPU run passes (its values are right) and the interpreter's run of the same case finds a
    load out of bounds: the case fails as out of bounds, saying where the finding came from."""
    from grader.judge.grade import PuzzleGrader
    from grader.judge.kinds import kind_of
    from grader.judge.options import Options
    access = {"op": "load", "tensor": "x", "shape": [200], "numel": 200, "first_index": 200, "bad_lanes": 24,
              "lanes": 32, "program": [6, 0, 0], "line": 9, "source": "x = tl.load(x_ptr + i)", "via": None}
    stray = wire.Failure("out_of_bounds", access=wire.convert(access, wire.OutOfBoundsAccess))

    def beside(message):
        if isinstance(message, wire.Run):
            run = wire.KernelRun(label="", reversed=False, seconds=0.1, printed="", failure=stray)
            return wire.Ran(runs=(run,)), []
        return function_wire.Replayed(seconds=0.1, printed="", failure=stray), []

    solution = ROOT / "solutions" / course.puzzle_file(puzzle_id).name
    interpreter = _Worker(beside)
    worker = WorkerProcess("cpu")  # the real one: it grades the solution, which passes
    try:
        result = PuzzleGrader(course, puzzle_id, solution, worker, Options(compile_check=False),
                              bounds=interpreter, kind=kind_of(course.puzzle(puzzle_id))).grade()
    finally:
        worker.close()
    first = result.cases[0]
    assert result.status == "fail" and first.kind == "out_of_bounds", first.message
    assert "in program (6, 0, 0)" in first.message and "Found by the bounds check that runs each case in the " \
                                                       "interpreter beside the GPU" in first.message
    assert any(isinstance(m, (wire.Run, function_wire.Replay)) and m.check_bounds for m in interpreter.asked)


def test_a_message_the_reader_would_refuse_is_not_written(monkeypatch):
    """The worker learns its reply cannot go (and sends a Failure instead) rather than dying on
    a closed pipe once the grader refused the stream, as puzzle 15's 3 GiB --bench reply did."""
    import os

    from grader.channel import protocol
    read, write = os.pipe()
    try:
        with pytest.raises(protocol.MessageTooLarge, match=r"4097 blobs of 0 bytes.*past the channel's limits"):
            protocol.write_message(write, {"op": "x"}, [b""] * 4097)
        monkeypatch.setattr(protocol, "MAX_MESSAGE", 10)
        with pytest.raises(protocol.MessageTooLarge, match="2 blobs of 13 bytes, the largest 9"):
            protocol.write_message(write, {"op": "x"}, [b"a" * 4, memoryview(b"b" * 9)], most=10)
        protocol.write_message(write, {"op": "x"}, [b"a" * 5, b"b" * 5], most=10)  # at the limit: written, read back
        header, blobs = protocol.Reader(read).read_message(timeout=5, most=10)
        # a request that allows its reply more (a --bench size's outputs): both sides hold to that
        protocol.write_message(write, {"op": "y"}, [b"c" * 12], most=12)
        with pytest.raises(protocol.ChannelClosed, match="frame of 12 bytes"):  # one blob past all it may hold
            protocol.Reader(read).read_message(timeout=5, most=10)
        protocol.write_message(write, {"op": "y"}, [b"c" * 6, b"d" * 6], most=12)
        with pytest.raises(protocol.ChannelClosed, match="message of more than 10 bytes"):
            protocol.Reader(read).read_message(timeout=5, most=10)
    finally:
        os.close(read)
        os.close(write)
    assert header == {"op": "x", "blobs": 2} and blobs == [b"aaaaa", b"bbbbb"]


def test_a_requests_allowance_for_its_reply_rides_in_its_header_and_never_lowers_the_default():
    sent = wire.header(wire.Exit()) | {wire.REPLY_BYTES: 3 << 31}
    assert wire.reply_bytes(sent, 1 << 31) == 3 << 31 and wire.parse_request(sent) == wire.Exit()
    for odd in (1 << 20, True, "3", None, -5):
        assert wire.reply_bytes({wire.REPLY_BYTES: odd}, 1 << 31) == 1 << 31


def test_a_checked_call_may_repeat_only_an_earlier_one():
    shape = wire_measure.TensorShape(dtype="float32", shape=(2,))
    assert wire_measure.CheckedCall(call=3, calls=4, input_set=0, outputs=(shape,), same_as=0).same_as == 0
    with pytest.raises(wire.WireError, match="call 3 cannot repeat call 3"):
        wire_measure.CheckedCall(call=3, calls=4, input_set=0, outputs=(shape,), same_as=3)
