"""A kernel that crashes or hangs costs its own puzzle, never the grader or the next puzzle."""

import pytest

from grader.judge.options import Options
from grader.judge.session import grade_many

# A plain Python call inside a kernel: only the interpreter runs it (with the GPU compile check
# off, as here), and it takes the worker process down.
CRASH = '''
import os
import triton
import triton.language as tl


def boom():
    os.abort()


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    boom()
'''

HANG = '''
import triton
import triton.language as tl


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    i = 0
    while i < N0:
        i = i * 1
'''


@pytest.mark.slow  # waits for a hang to time out
def test_crash_and_hang_are_reported_and_grading_goes_on(tmp_path, course):
    crash, hang = tmp_path / "crash.py", tmp_path / "hang.py"
    crash.write_text(CRASH)
    hang.write_text(HANG)
    targets = [("puzzle01", crash), ("puzzle02", hang), ("puzzle03", course.solution_file("puzzle03"))]
    report = grade_many(course, targets, Options(timeout=3, compile_check=False), jobs=1)
    crashed, hung, fine = report.results

    assert crashed.status == "fail"
    assert crashed.cases[0].kind == "crash"
    assert "the process running the kernel died (signal 6" in crashed.cases[0].message
    assert all(c.kind == "skipped" and "not run: classic[seed=0] crashed" in c.message for c in crashed.cases[1:])

    assert hung.status == "fail"
    assert hung.cases[0].kind == "timeout"
    assert "the kernel did not finish within 3 s of CPU time" in hung.cases[0].message
    assert hung.cases[1].kind == "skipped"

    assert fine.status == "pass", fine.message


@pytest.mark.slow  # grades on a pool of its own
def test_unmasked_store_far_out_is_caught_before_memory_is_touched(tmp_path, course):
    """A store a million elements past the end would corrupt the heap; the bounds check stops it first."""
    path = tmp_path / "far.py"
    path.write_text('''
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    tl.store(z_ptr + offsets + 1000000, tl.load(x_ptr + offsets))
''')
    report = grade_many(course, [("puzzle01", path)], Options(compile_check=False))
    (result,) = report.results
    case = result.cases[0]
    assert case.kind == "out_of_bounds"
    assert case.message.startswith(
        "case classic[seed=0] (N0=32, B0=32): out-of-bounds store of `z` in program (0, 0, 0) at line 9: "
        "`tl.store(z_ptr + offsets + 1000000, tl.load(x_ptr + offsets))`: 32 of 32 active lanes fall outside "
        "`z` (shape (32,), 32 elements); the first is flat index 1000000, past its end.")
