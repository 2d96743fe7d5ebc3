"""One semantics: the interpreter computes what an sm_90 GPU computes (docs/interpreter-vs-gpu.md),
and what it cannot run is an honest ``interpreter_limit``, never the learner's failure."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from conftest import COURSE, ROOT
from grader.channel import wire
from grader.judge import messages
from grader.judge.options import Options
from grader.judge.results import CaseResult, ExitCode, PuzzleResult, Report, Status, StudentResult
from grader.judge.session import grade_many
from grader.report import batch_files, html, json_report, text
from grader.sandbox.interpreter.libdevice import compute
from grader.sandbox.interpreter.limits import InterpreterLimit, find_limit
from grader.sandbox.interpreter.semantics import bf16_to_f32, f32_to_bf16, float_to_int, to_tf32

PROBE = ROOT / "benchmarks" / "interpreter_vs_gpu.py"


@pytest.fixture(scope="module")
def probes(tmp_path_factory) -> dict:
    """The GPU probe script, run in the interpreter with the grader's patches (one process)."""
    out = tmp_path_factory.mktemp("probes") / "follow.json"
    run = subprocess.run([sys.executable, str(PROBE), "--device", "interpreter", "--follow-gpu", "--json", str(out)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    return {row["probe"]: row for row in json.loads(out.read_text())["rows"]}


@pytest.mark.slow  # runs the probe script in a subprocess
def test_every_difference_the_grader_follows_agrees_with_the_gpu(probes):
    followed = {name: row for name, row in probes.items() if row["status"] == "followed"}
    for must in ("maximum(x, nan)", "minimum(x, nan)", "tl.max with NaN", "NaN test with maximum, +10/+11",
                 "fp32 -> bf16 rounds to nearest even", "bf16 add, mul", "bf16 tl.dot",
                 "float argument: fp32 scalar, .to()", "libdevice.tanh", "float -> int32 out of range, NaN",
                 "clamp(nan, lo, hi)", "int argument 2**31 + 5, times 2", "bf16 tl.atomic_add",
                 "bf16 tl.full, where, exp, cumsum"):
        assert must in followed, must
    wrong = {name: (row["value"], row["expected"], row["error"]) for name, row in followed.items() if not row["agrees"]}
    assert not wrong, wrong


@pytest.mark.slow  # runs the probe script in a subprocess
def test_a_nan_test_built_on_maximum_adds_11_as_on_a_gpu(probes):
    assert probes["NaN test with maximum, +10/+11"]["value"] == [11.0] * 4
    row = probes["maximum(x, nan, propagate_nan=ALL)"]  # asked for, the NaN propagates
    assert math.isnan(row["value"][0]) and row["value"][1] == 1.0


@pytest.mark.slow  # runs the probe script in a subprocess
def test_inline_ptx_is_the_interpreters_limit(probes):
    error = probes["tl.inline_asm_elementwise"]["error"]
    assert "InterpreterLimit" in error and "runs PTX, which the interpreter cannot execute" in error


def test_a_kernel_the_interpreter_cannot_run_is_neither_passed_nor_failed():
    """Through the worker: the limit is caught there, the grader words it, the exit code is 0."""
    path = ROOT / "tests" / "hostile" / "puzzle01_inline_asm.py"
    report = grade_many(COURSE, [("puzzle01", path)], Options(), jobs=1)
    result = report.results[0]
    assert result.status == "interpreter_limit", result.message
    assert result.cases[0].kind == "interpreter_limit" and result.checks["gpu_compile"].passed
    assert "`tl.inline_asm_elementwise` (\"add.f32 $0, $1, 0f41200000;\") runs PTX, which the interpreter cannot " \
           "execute, and the outputs depend on what it computes at line 15" in result.message
    assert result.message.endswith("it compiles for sm_90; grade it on a GPU: python -m grader puzzle01 --device cuda")
    assert {c.kind for c in result.cases[1:]} <= {"skipped"}
    assert report.exit_code == ExitCode.OK


def test_bf16_rounds_to_nearest_even():
    values = np.array([1 + 3 * 2 ** -9, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5, 3.4e38, np.inf], dtype=np.float32)
    assert bf16_to_f32(f32_to_bf16(values)).tolist() == [1.0078125, 1.0, 1.015625, -2.5, np.inf, np.inf]
    nan = bf16_to_f32(f32_to_bf16(np.array([np.nan, -np.nan], dtype=np.float32)))
    assert np.isnan(nan).all()


def test_tf32_keeps_ten_mantissa_bits():
    assert to_tf32(np.array([1 + 3 * 2 ** -12, 1 + 2 ** -10, -3.0], dtype=np.float32)).tolist() == [1.0, 1 + 2 ** -10, -3.0]


@pytest.mark.parametrize("dtype, values, want", [
    (np.int32, [1e10, -1e10, np.nan, -2.7], [2 ** 31 - 1, -2 ** 31, 0, -2]),
    (np.int8, [300.0, -300.0, 127.9, -0.5, np.nan], [44, -44, 127, 0, 0]),  # the 32-bit cast's low bits
    (np.uint32, [-5.0, 5e9, 3.9, np.nan], [0, 2 ** 32 - 1, 3, 0]),
    (np.int64, [1e30, -1e30, 2.5, np.inf, np.nan], [2 ** 63 - 1, -2 ** 63, 2, 2 ** 63 - 1, -2 ** 63]),
])
def test_float_to_int_truncates_as_an_h100_does(dtype, values, want):
    """Measured on an H100 with triton 3.6 (benchmarks/interpreter_vs_gpu.py)."""
    got = float_to_int(np.array(values, dtype=np.float32), np.dtype(dtype))
    assert got.dtype == dtype and got.tolist() == want


@pytest.mark.parametrize("symbol, args, want", [
    ("__nv_tanhf", [0.5], math.tanh(0.5)), ("__nv_erff", [0.3], math.erf(0.3)), ("__nv_powf", [2.0, 10.0], 1024.0),
    ("__nv_fast_expf", [1.0], math.e), ("__nv_roundf", [-2.5], -3.0), ("__nv_rintf", [2.5], 2.0),
    ("__nv_rsqrtf", [4.0], 0.5), ("__nv_fmaxf", [np.nan, 1.0], 1.0), ("__nv_fdiv_rn", [1.0, 4.0], 0.25),
    ("__nv_atan2f", [1.0, 1.0], math.pi / 4), ("__nv_remainderf", [5.0, 3.0], -1.0), ("__nv_tgammaf", [5.0], 24.0),
])
def test_libdevice_functions_compute_in_numpy(symbol, args, want):
    got = compute(symbol, [np.array([a], dtype=np.float32) for a in args], np.dtype(np.float32))
    assert got.dtype == np.float32 and got[0] == pytest.approx(want, rel=1e-6)


def test_libdevice_conversions_and_predicates():
    x = np.array([2.5, -2.5, np.nan, 1e12], dtype=np.float32)
    assert compute("__nv_float2int_rn", [x], np.dtype(np.int32)).tolist() == [2, -2, 0, 2 ** 31 - 1]
    assert compute("__nv_float2int_rd", [x], np.dtype(np.int32)).tolist()[:2] == [2, -3]
    assert compute("__nv_isnanf", [x], np.dtype(np.int32)).tolist() == [0, 0, 1, 0]
    assert compute("__nv_popc", [np.array([7, -1], dtype=np.int32)], np.dtype(np.int32)).tolist() == [3, 32]


def test_a_libdevice_function_without_a_counterpart_is_a_limit_with_its_name():
    with pytest.raises(InterpreterLimit, match=r"libdevice's `byte_perm` has no counterpart in the grader's "
                                               r"interpreter"):
        compute("__nv_byte_perm", [np.array([1], dtype=np.int32)] * 3, np.dtype(np.int32))


@pytest.mark.parametrize("symbol, function, args", [
    ("j0", "j0", [0.5, 2.0]), ("j1", "j1", [0.5, 2.0]), ("y0", "y0", [0.5, 2.0]), ("y1", "y1", [0.5, 2.0]),
    ("erfinv", "erfinv", [-0.5, 0.25]), ("erfcinv", "erfcinv", [0.5, 1.5]), ("erfcx", "erfcx", [0.5, 3.0]),
    ("normcdfinv", "ndtri", [0.1, 0.9]), ("cyl_bessel_i0", "i0", [0.5, 2.0]), ("lgamma", "gammaln", [-2.5, 0.5]),
])
@pytest.mark.parametrize("dtype, suffix", [(np.float32, "f"), (np.float64, "")])
def test_libdevice_functions_numpy_lacks_run_through_scipy(symbol, function, args, dtype, suffix):
    import scipy.special
    x = np.array(args, dtype=dtype)
    got = compute(f"__nv_{symbol}{suffix}", [x], np.dtype(dtype))
    want = getattr(scipy.special, function)(x.astype(np.float64)).astype(dtype)
    assert got.dtype == dtype and got.tolist() == want.tolist()


def test_bessel_of_integer_order_takes_the_order_first():
    got = compute("__nv_jnf", [np.array([2, 3], dtype=np.int32), np.array([0.5, 2.0], dtype=np.float32)],
                  np.dtype(np.float32))
    assert got.tolist() == pytest.approx([0.0306040235, 0.1289432495], rel=1e-6)


def test_the_limit_is_found_behind_tritons_wrapping():
    try:
        try:
            raise InterpreterLimit("inline PTX")
        except InterpreterLimit as inner:
            raise RuntimeError("InterpreterError(...)") from inner
    except RuntimeError as outer:
        assert find_limit(outer).what == "inline PTX"
    assert find_limit(ValueError("x")) is None


def _limited(puzzle="puzzle05") -> PuzzleResult:
    text_ = messages.interpreter_limit(wire.Failure("interpreter_limit", error="`tl.inline_asm_elementwise` runs PTX",
                                                    line=9, source="y = tl.inline_asm_elementwise(...)"), puzzle,
                                       compiled=True)
    case = CaseResult("classic", {"N0": 32}, {"B0": 32}, 0, (1,), False, "interpreter_limit", f"case x: {text_}")
    return PuzzleResult(puzzle, "Title", "interpreter_limit", "f.py", "cpu", cases=(case,), message=case.message)


def test_the_message_names_the_limit_the_line_and_the_gpu_command():
    message = _limited().message
    for phrase in ("the grader's interpreter cannot run this kernel: `tl.inline_asm_elementwise` runs PTX at line 9: "
                   "`y = tl.inline_asm_elementwise(...)`", "not a mistake of yours", "neither a pass nor a fail",
                   "it compiles for sm_90; grade it on a GPU: python -m grader puzzle05 --device cuda"):
        assert phrase in message, message
    unchecked = messages.interpreter_limit(wire.Failure("interpreter_limit", error="x"), "puzzle15", compiled=False)
    assert "it compiles" not in unchecked and "python -m grader puzzle15 --device cuda" in unchecked


def test_an_interpreter_limit_is_not_a_fail_and_every_reporter_says_so():
    result = _limited()
    assert result.status == Status.INTERPRETER_LIMIT == "interpreter_limit" and not result.passed
    passed = PuzzleResult("puzzle01", "T", "pass", "f.py", "cpu")
    report = Report((passed, result))
    assert report.exit_code == ExitCode.OK
    assert report.summary.interpreter_limit == 1 and report.summary.failed == 0
    rendered = text.render(report)
    assert "? puzzle05 Title: not graded here, the interpreter cannot run it (not a fail)" in rendered
    assert "1/2 passed, 1 to grade on a GPU (the interpreter cannot run them)" in rendered
    assert json.loads(json_report.render(report))["summary"]["interpreter_limit"] == 1
    assert "not graded here (not a fail)" in html.render(result)
    assert Report((result, PuzzleResult("puzzle02", "T", "fail", "f.py", "cpu"))).exit_code == ExitCode.FAILED


def test_a_class_counts_interpreter_limits_apart_and_lists_them():
    student = StudentResult("ada", (_limited("puzzle05"), PuzzleResult("puzzle01", "T", "pass", "f.py", "cpu")), (), 1.0)
    ids = ["puzzle01", "puzzle05"]
    summary = batch_files.summary([student], ids, 3.0, "out")
    assert "ada" in summary and "1/2  (1 to grade on a GPU: puzzle05)" in summary
    assert "1 outcome(s) the interpreter could not decide (the kernels compile for sm_90; grade them with " \
           "--device cuda):\n  ada puzzle05: case x: the grader's interpreter cannot run this kernel" in summary
    assert batch_files.grades_csv([student], ids).splitlines()[1] == "ada,1,gpu,1,,ada"  # the id as submitted last
    assert 'skipped="1"' in batch_files.junit_xml([student])
    gradescope = json.loads(batch_files.gradescope(student))["tests"]
    assert [t["max_score"] for t in gradescope] == [0, 1]
    assert json.loads(batch_files.results_json([student], ids, 1.0))["students"][0]["interpreter_limit"] == ["puzzle05"]


def test_integer_division_and_remainder_by_zero_set_every_bit_as_a_gpu_does():
    from grader.sandbox.interpreter.rules import divide, remainder
    x, zero = np.array([7, -7, 0, 9], dtype=np.int32), np.array([0, 0, 0, 2], dtype=np.int32)
    assert divide(x, zero).tolist() == [-1, -1, -1, 4] and remainder(x, zero).tolist() == [-1, -1, -1, 1]
    assert divide(np.array([-7], np.int32), np.array([2], np.int32)).tolist() == [-3]  # truncates, as compiled
    u = np.array([7, 250], dtype=np.uint8)
    assert divide(u, np.zeros(2, np.uint8)).tolist() == [255, 255]
    assert remainder(u, np.zeros(2, np.uint8)).tolist() == [255, 255]


KERNELS = '''
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
from grader.sandbox.interpreter.semantics import install
install()

@triton.jit
def scalars(x_ptr, z_ptr, zero, N: tl.constexpr):
    i = tl.arange(0, N)
    if tl.program_id(0) == 0 and zero == 0:
        tl.store(z_ptr + i, tl.load(x_ptr + i) // zero + tl.load(x_ptr + i) % (zero + 5))

@triton.jit
def blocks(x_ptr, z_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(z_ptr + i, tl.load(x_ptr + i), mask=(i < 3) and (i > 0))

x, z = torch.tensor([7, -7, 0, 9], dtype=torch.int32), torch.zeros(4, dtype=torch.int32)
scalars[(1,)](x, z, 0, 4)
print(z.tolist())
try:
    blocks[(1,)](x, z, 4)
except Exception as exc:
    print(exc)
'''


def test_and_on_blocks_is_refused_in_the_interpreter_and_scalars_keep_their_truth(tmp_path):
    """A block's truth would be True in the interpreter and elementwise compiled: refused, naming `&`."""
    import subprocess
    import sys
    from pathlib import Path
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS)
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(root)})
    lines = done.stdout.splitlines()
    assert lines[0] == "[1, -3, -1, 3]", done.stderr[-2000:]  # 7 // 0 + 7 % 5 = -1 + 2, ...
    assert "the truth of a block (shape (4,)) was asked, by `and`, `or`, `not`" in lines[1]
    assert "Combine masks with `&`, `|` and `~`" in lines[1]


def test_half_conversions_are_numpys_bit_for_bit_and_warn_as_numpy_does():
    """interpreter/halves.py converts fp32 <-> fp16 through torch, with numpy's bits: every fp16
    pattern, a million random fp32 patterns (NaN payloads, overflow, subnormals) and the warning."""
    import warnings

    import numpy as np

    from grader.sandbox.interpreter.halves import from_half, to_half
    every = np.arange(65536, dtype=np.uint16).view(np.float16).reshape(64, 1024)
    assert np.array_equal(from_half(every).view(np.uint32), every.astype(np.float32).view(np.uint32))
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32).reshape(256, -1)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        mine = to_half(bits)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = bits.astype(np.float16)
    assert np.array_equal(mine.view(np.uint16), want.view(np.uint16))
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs] == ["overflow encountered in cast"]
    across = np.transpose(rng.standard_normal((8, 64, 96)).astype(np.float32), (0, 2, 1))  # numpy keeps its layout
    assert to_half(across).strides == across.astype(np.float16).strides
