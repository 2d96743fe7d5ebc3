"""Puzzle 15's wrapper must get its results from the learner's Triton kernels.

Three defences, each tested here beside the corpus (tests/wrong_kernels/puzzle15_*): the
poisoned run (kernel launches replaced by NaN; an honest wrapper's results turn NaN, so it
still passes, and a result computed elsewhere stays correct and fails), the thread count, and
the static check of the wrapper's source.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import COURSE
from grader.options import Options
from grader.session import grade_many
from grader.wrapper_check import find

SOLUTION = COURSE.solution_file("puzzle15")

# An honest wrapper in another style than the solution's: torch.empty, keyword strides,
# contiguous inputs, a float64 sum of the partials cast back.
HONEST = '''
import torch
import triton

from puzzle13_weighted_sum_forward import weighted_sum_fwd
from puzzle14_weighted_sum_backward import weighted_sum_bwd


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        rows_x = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty(rows_x.shape[0], dtype=x.dtype, device=x.device)
        weighted_sum_fwd[(triton.cdiv(rows_x.shape[0], 32),)](
            rows_x, weight, y, rows_x.stride(0), rows_x.stride(1), weight.stride(0), y.stride(0),
            rows_x.shape[0], rows_x.shape[1], ROWS_TILE_SIZE=32, D_TILE_SIZE=32)
        ctx.save_for_backward(x, weight)
        return y.reshape(x.shape[:-1])

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        rows_x = x.reshape(-1, x.shape[-1])
        g = grad_output.contiguous().view(-1)
        tiles = triton.cdiv(rows_x.shape[0], 32)
        grad_x = torch.empty_like(rows_x)
        partial = torch.empty((tiles, rows_x.shape[1]), dtype=torch.float32, device=x.device)
        weighted_sum_bwd[(tiles,)](
            rows_x, weight, g, grad_x, partial, rows_x.stride(0), rows_x.stride(1), weight.stride(0),
            g.stride(0), grad_x.stride(0), grad_x.stride(1), partial.stride(0), partial.stride(1),
            rows_x.shape[0], rows_x.shape[1], ROWS_TILE_SIZE=32, D_TILE_SIZE=32)
        return grad_x.view_as(x), partial.double().sum(dim=0).to(weight.dtype)
'''

# Hides from the static check (the switch is spelled at run time) and from the operator log
# (dispatch modes off): only the poisoned run can tell.
HIDDEN_SWITCH = HONEST.replace(
    "        return y.reshape(x.shape[:-1])",
    "        with getattr(torch._C, '_Disable' + 'Torch' + 'Dispatch')():\n"
    "            return (x * weight).sum(-1)")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wrappers")
    files = {"honest": HONEST, "hidden_switch": HIDDEN_SWITCH}
    for name, source in files.items():
        (folder / f"{name}.py").write_text(source)
    targets = [("puzzle15", folder / f"{name}.py") for name in files]
    report = grade_many(COURSE, targets, Options(timeout=60, library=(str(COURSE.root / "solutions"),)), jobs=2)
    return dict(zip(files, report.results))


@pytest.mark.slow  # grades puzzle 15, an autograd puzzle
def test_solution_passes_with_the_poisoned_run(solution_results):
    # Every grading of puzzle 15 includes the poisoned run: the session's shared result is the one.
    assert solution_results["puzzle15"].status == "pass", solution_results["puzzle15"].message


@pytest.mark.slow  # grades puzzle 15, an autograd puzzle
def test_honest_wrapper_in_another_style_passes(graded):
    assert graded["honest"].status == "pass", graded["honest"].message


@pytest.mark.slow  # grades puzzle 15, an autograd puzzle
def test_poisoned_run_catches_what_the_log_and_the_source_miss(graded):
    first = graded["hidden_switch"].first_failure
    assert first.kind == "torch_compute", first.message
    assert "replaced what the kernels write with NaN" in first.message
    assert "`y` was still correct" in first.message


# ---- the static check ----------------------------------------------------------------------

def _finding(body: str, header: str = "import torch\n"):
    source = header + textwrap.dedent('''
        class WeightedSumFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, weight):
        ''') + textwrap.indent(textwrap.dedent(body), " " * 8)
    return find(source, "WeightedSumFunc")


def test_static_check_passes_the_solution_and_the_stub():
    assert find(SOLUTION.read_text(), "WeightedSumFunc") is None
    assert find(COURSE.puzzle_file("puzzle15").read_text(), "WeightedSumFunc") is None


@pytest.mark.parametrize("header, body, says", [
    ("import os\n", "if os.environ.get('TRITON_INTERPRET'): return x @ weight", "environ"),
    ("from os import getenv\n", "flag = getenv('X')", "environ"),
    ("", "interpreted = 'TRITON_INTERPRET'", "TRITON_INTERPRET"),
    ("import numpy as np\n", "return torch.tensor(np.dot(a, b))", "NumPy"),
    ("", "return x.numpy()", "NumPy"),
    ("", "import numpy", "NumPy"),
    ("from threading import Thread\n", "Thread(target=print).start()", "threads"),
    ("import concurrent.futures\n", "pool = concurrent.futures.ThreadPoolExecutor()", "pool"),
    ("", "with torch._C._DisableTorchDispatch(): pass", "dispatch modes"),
    ("from torch.utils._python_dispatch import _disable_current_modes\n",
     "with _disable_current_modes(): pass", "dispatch modes"),
    ("", "mode = torch.utils._python_dispatch._pop_mode()", "dispatch modes"),
])
def test_static_check_names_the_line(header, body, says):
    finding = _finding("import torch\n" + body, "import torch\n" + header)
    assert finding is not None
    assert says in finding.what
    assert finding.function == "WeightedSumFunc.forward"
    assert body.split(":")[0].strip() in finding.source or finding.source in body


def test_static_check_follows_helpers_and_ignores_unrelated_code():
    header = "import torch\nimport os\n\n\ndef unused():\n    return os.environ\n\n\ndef helper():\n" \
             "    return os.getenv('TRITON_INTERPRET')\n"
    finding = _finding("environ = 1\nreturn helper()", header)
    assert finding is not None and finding.function == "helper"
    assert _finding("environ = 1\nthreads = 2\nreturn unused", "import torch\n") is None
