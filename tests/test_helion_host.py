"""Host work in a Helion kernel, found by what runs (grader.sandbox.kinds.helion.host), and host code
that branches on whether an interpreter runs it (grader.judge.kinds.helion.interpreter_check). The wrong kernels of each hole are
in tests/wrong_kernels/ (puzzle35_helion_*, puzzle36_helion_*_outside, puzzle40_helion_helper_*),
graded by test_wrong_kernels.py; here are the pieces, and correct kernels that must pass."""
from __future__ import annotations

import pytest

from conftest import COURSE, HAVE_HELION, NO_HELION, ROOT
from grader.judge import failures
from grader.judge.kinds.helion import failures as helion_failures
from grader.judge.kinds.helion import interpreter_check
from grader.judge.options import Options
from grader.judge.results import Status

needs_helion = pytest.mark.skipif(not HAVE_HELION, reason=NO_HELION)
CORRECT = sorted((ROOT / "tests" / "helion_host").glob("puzzle*.py"))


# ---- what counts as touching data ------------------------------------------------------------
def test_allocations_views_and_constant_fills_touch_no_data():
    import torch

    from grader.sandbox.kinds.helion.host import touches_data
    aten = torch.ops.aten
    x = torch.ones(4)
    fresh = torch.empty(4)
    for op in (aten.empty_like.default, aten.new_empty.default, aten.zeros_like.default, aten.full.default,
               aten.empty.memory_format, aten.view.default, aten.transpose.int, aten.slice.Tensor,
               aten.expand.default, aten.unsqueeze.default, aten.sym_size.int):
        assert not touches_data(op, (x,), set()), op
    allocated = {fresh.untyped_storage().data_ptr()}
    assert not touches_data(aten.fill_.Scalar, (fresh, 0.0), allocated)
    assert not touches_data(aten._to_copy.default, (fresh,), allocated)  # a constant moved to the device


def test_arithmetic_copies_in_place_ops_and_item_touch_data():
    import torch

    from grader.sandbox.kinds.helion.host import touches_data
    aten = torch.ops.aten
    x = torch.ones(4)
    for op in (aten.add.Tensor, aten.mul.Tensor, aten.masked_fill.Scalar, aten.copy_.default, aten.mul_.Tensor,
               aten.add.out, aten.sum.default, aten.clone.default, aten._local_scalar_dense.default,
               aten._to_copy.default, aten.mm.default):
        assert touches_data(op, (x,), set()), op
    # a constant written into an input, not into a tensor the host code allocated
    assert touches_data(aten.fill_.Scalar, (x, 0.0), set())


def test_a_generated_line_maps_to_the_first_line_of_its_statement():
    from grader.sandbox.kinds.helion.host import _source_line
    generated = ["def k(x, *, _launcher=None):",
                 "    # src[mine.py:11]: if x.device.type == 'cpu':",
                 "    # src[mine.py:12]:     s = s + 1",
                 "    if x.device.type == 'cpu':",
                 "        # src[mine.py:12]: s = s + 1",
                 "        s = s + 1",
                 "    _helion_own = 1"]
    assert _source_line(generated, 3, "/a/mine.py") == 11
    assert _source_line(generated, 5, "/a/mine.py") == 12
    assert _source_line(generated, 6, "/a/mine.py") is None  # Helion's own line
    assert _source_line(generated, 5, "/a/other.py") is None


# ---- the words ----------------------------------------------------------------------------------
def test_host_work_names_the_line_the_ops_the_tensors_and_the_helper():
    text = failures.word(helion_failures.HostWork("helion_add", 17, "s = combine(x, y)", ops=("add",), tensors=("x", "y"),
                                           called="combine", called_line=12, called_source="return a + b"))
    assert "outside its `hl.tile` loops (line 17: `s = combine(x, y)`)" in text
    assert "PyTorch ran `add` on `x`, `y` there, on the host, inside `combine` (line 12: `return a + b`)" in text
    assert "Fix: move the computation into the `hl.tile` loop" in text
    bare = failures.word(helion_failures.HostWork("helion_add", 13, "z = x + y"))
    assert "ran" not in bare and "(line 13: `z = x + y`)" in bare


# ---- the device, and the interpreter ----------------------------------------------------------
KERNEL = '''\
import os

import torch


def helper(a):
    {helper}


def k(x, y, bias):
    z = torch.empty([4], device=x.device)
    {host}
    return helper(z)
'''


@pytest.mark.parametrize("host, helper, line, says", [
    ("pass", 'return a if os.environ.get("HELION_INTERPRET") else a + 1', 7,
     "`helper` at line 7: `return a if os.environ.get(\"HELION_INTERPRET\") else a + 1` decides by `HELION_INTERPRET` (the interpreter's switch)"),
    ("quick = os.getenv('TRITON_INTERPRET')\n    z = z if quick else y", "return a", 13,
     "decides by `quick` (assigned from it)"),
    ("z = y if helion.runtime.ref_mode else z", "return a", 12,
     "decides by `helion.runtime.ref_mode` (whether Helion's interpreter runs)"),
])
def test_a_condition_on_the_interpreter_is_refused_with_its_line(host, helper, line, says):
    found = interpreter_check.find(KERNEL.format(host=host, helper=helper), "k")
    assert found is not None and found.line == line, found
    text = interpreter_check.message(found)
    assert says in text and "must do the same work on both" in text and "Fix: remove the condition" in text


@pytest.mark.parametrize("host", [
    "if bias is not None:\n        z = z + bias",        # no device in it
    "assert x.device == y.device",                      # the inputs together: the same everywhere
    "w = torch.empty_like(x, device=x.device)",         # allocation beside the input
    # a tensor allocated beside the input, then written at an index and read: nothing asks where
    "w = torch.empty([4], device=x.device)\n    w[z > 0] = z[w > 0]\n    z = z if w.sum() else y",
    # the device itself: host code sees a GPU wherever it is graded (grader.sandbox.world)
    'if x.device.type == "cpu":\n        z = z + 1', "z = x if x.is_cuda else y",
    "gpu = torch.cuda.is_available()\n    cpu = not gpu\n    assert gpu or z",
])
def test_what_does_not_ask_for_the_interpreter_is_not_refused(host):
    assert interpreter_check.find(KERNEL.format(host=host, helper="return a"), "k") is None


# ---- correct kernels pass ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def graded():
    """Correct kernels that allocate, view and check outside their loops (Helion's layer_norm
    shape: `if bias is not None:`), graded in one run."""
    from grader.judge.session import grade_many
    report = grade_many(COURSE, [(p.name[:8], p) for p in CORRECT], Options(timeout=60), jobs=2)
    return dict(zip((p.name for p in CORRECT), report.results))


@pytest.mark.slow
@needs_helion
@pytest.mark.parametrize("name", [p.name for p in CORRECT])
def test_allocation_views_and_checks_outside_the_loops_pass(graded, name):
    result = graded[name]
    assert result.status == Status.PASS, result.message


# ---- the recorder, on a plain function standing for Helion's host code --------------------------
def _host(x, y, *, _launcher):
    z = torch_module().empty_like(x)                     # allocation: allowed
    v = x.view(-1).t() if x.dim() == 1 else x            # views and shape questions: allowed
    _launcher(v, y, z)                                   # the device loop: not host work
    return _twice(y) if v.numel() < 0 else z


def _twice(t):
    return (lambda u: u + u)(t)


def _steered(x, y, *, _launcher):
    n = len(x.tolist())                                  # the data leaves PyTorch: no aten op marks it
    _launcher(x, y)
    return n


def _helper_after(x, y, *, _launcher):
    _launcher(x, y)
    return _twice(y)


def torch_module():
    import torch
    return torch


def _record(host):
    import inspect

    from grader.sandbox.kinds.helion.host import _copies, _recorded, _Recorder
    torch = torch_module()
    copies, names = _copies(host, (torch.ones(4), torch.ones(4)))

    def launch(*tensors):  # a launcher that computes: the device's work, not the host's
        torch.add(tensors[0], tensors[1])
    recorder = _Recorder(host.__code__, lambda frame: frame.f_lineno, inspect.getsourcefile(host), names, launch)
    return _recorded(lambda: host(*copies, _launcher=launch), recorder)


@pytest.mark.slow  # a dispatch mode's first use imports torch._dynamo (seconds; the worker has it with Helion)
def test_the_recorder_sees_what_touches_data_wherever_it_is_called_from():
    assert _record(_host) is None  # allocation, views, and what the launcher does
    steered = _record(_steered)
    assert steered.ops == ("tolist",) and steered.tensors == ("x",) and "x.tolist()" in steered.source
    helped = _record(_helper_after)
    assert helped.ops == ("add",) and helped.tensors == ("y",) and helped.source == "return _twice(y)"
    assert helped.called == "<lambda>" and helped.called_source == "return (lambda u: u + u)(t)"
