"""Provenance at the boundaries of learner Python (issue 45, item 2): PyTorch's dispatch switches and
tensor-subclass machinery refused before anything runs, however reached by name
(grader.source.sniffing.internals); and Helion host code's tensors judged by where their memory
came from (grader.sandbox.kinds.helion.host), which no spelling escapes. The graded cases are in
tests/hostile/ (puzzle35_modes_off*, puzzle35_subclass_adds*, puzzle36_*)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from grader.source import host_escapes, sniffing


def _found(tmp_path: Path, source: str, helpers: dict | None = None):
    for name, text in (helpers or {}).items():
        (tmp_path / f"{name}.py").write_text(text)
    path = tmp_path / "kernels.py"
    path.write_text(source)
    return sniffing.check_file(path, None)


@pytest.mark.parametrize("source, says", [
    ("import torch\ndef f(x):\n    with torch.utils._python_dispatch._disable_current_modes():\n        return x + 1\n",
     "`f` at line 3: `with torch.utils._python_dispatch._disable_current_modes():`: `_disable_current_modes` "
     "switches off PyTorch's dispatch modes"),
    ("from torch._C import _DisableTorchDispatch as quietly\n",
     "`kernels.py` at line 1: `from torch._C import _DisableTorchDispatch as quietly`: `_DisableTorchDispatch` "
     "switches off PyTorch's dispatch"),
    ("import torch\ndef f(x):\n    return getattr(torch.Tensor, '_make_subclass')(torch.Tensor, x)\n",
     "`f` at line 3: `return getattr(torch.Tensor, '_make_subclass')(torch.Tensor, x)`: `'_make_subclass'` names "
     "`_make_subclass`, which makes a tensor subclass"),
    ("import torch\nclass A(torch.Tensor):\n    def __torch_function__(cls, *a):\n        pass\n",
     "`kernels.py` at line 3: `def __torch_function__(cls, *a):`: `__torch_function__` makes a tensor subclass "
     "that runs its own code for every function"),
    ("import torch\nmodes = torch._C\n", "`kernels.py` at line 2: `modes = torch._C`: `_C` reaches PyTorch's C++ "
                                          "internals"),
])
def test_dispatch_internals_are_refused_with_the_line_and_the_fix(tmp_path, source, says):
    found = _found(tmp_path, source)
    text = sniffing.message(found)
    assert text.startswith(says), text
    assert "Fix: delete it; outside your kernels, only allocate outputs (`torch.empty_like(x)`)" in text


def test_a_helper_module_of_the_learners_own_is_read_too(tmp_path):
    helper = "import torch\n\ndef made(x):\n    return type('A', (torch.Tensor,), {'__torch_dispatch__': 1})\n"
    found = _found(tmp_path, "import mine\n\ndef f(x):\n    return mine.made(x)\n", {"mine": helper})
    assert sniffing.message(found).startswith(
        "`made` of `mine.py` at line 4: `return type('A', (torch.Tensor,), {'__torch_dispatch__': 1})`: "
        "`'__torch_dispatch__'` names `__torch_dispatch__`, which makes a tensor subclass")


def test_honest_code_and_prose_that_names_them_pass(tmp_path):
    source = ('"""Not `__torch_dispatch__`: one kernel, no `torch._C`."""\nimport torch\n\n_C = 4\n\n'
              "def f(x):\n    out = torch.empty_like(x)\n    return out.view(-1), x.stride(0), _C\n")
    assert host_escapes.internals(tmp_path / "k.py", source, ast.parse(source)) is None


def test_memory_from_nowhere_is_worded_as_host_work_with_its_tensor_and_line():
    from grader.judge.kinds.helion.failures import HostWork, _host_work
    text = _host_work(HostWork("helion_add", 12, "for tile in hl.tile(x.size(0)):", ops=("made unseen", "handed to the loops"),
                               tensors=("w",)))
    assert text.startswith("`helion_add` hands its `hl.tile` loops `w` (line 12: `for tile in hl.tile(x.size(0)):`), "
                           "whose memory is not an input's, a view of one, or an allocation of its host code")
    assert "Fix: outside the loops, only allocate the outputs (`torch.empty_like(x)`" in text
    text = _host_work(HostWork("k", 9, "return product", ops=("made unseen", "returned"), tensors=("product",)))
    assert text.startswith("`k` returns `product` (line 9: `return product`), whose memory")


def test_the_unseen_op_is_the_one_the_words_know():
    from grader.sandbox.kinds.helion.host import LAUNCHED, RETURNED, UNSEEN
    assert (UNSEEN, RETURNED, LAUNCHED) == ("made unseen", "returned", "handed to the loops")


# ---- outputs: an atomic reads what it updates --------------------------------------------------
def _log():
    import numpy as np

    from grader.sandbox.bounds import Region
    from grader.sandbox.write_log import WriteLog
    region = Region("z", 1000, 32, 1000, 1032, 4, (8,), "z_ptr", "output")
    return WriteLog([region], {0: np.full(8, np.nan, dtype=np.float32)}), np


def test_an_atomic_on_an_element_nobody_stored_is_a_read_of_nothing_yet():
    log, np = _log()
    where = lambda: (7, "tl.atomic_add(z_ptr + offs, 0.0)")  # noqa: E731
    log.store(0, np.array([1008, 1012], dtype=np.uint64), None, np.array([True, True]), True, where)
    assert log.early_reads == [{"tensor": "z", "index": 2, "program": (0, 0, 0), "shape": [8], "line": 7,
                                "source": "tl.atomic_add(z_ptr + offs, 0.0)"}]


def test_an_atomic_after_a_store_reads_what_was_stored():
    log, np = _log()
    where = lambda: (7, "")  # noqa: E731
    addresses, on = np.array([1008], dtype=np.uint64), np.array([True])
    log.store(0, addresses, np.array([1.0], dtype=np.float32), on, False, where)
    log.store(1, addresses, None, on, True, where)
    assert log.early_reads == []


def test_an_atomic_early_read_is_worded_as_one():
    from grader.judge import failures
    from grader.judge.failures import FailureKind
    text = failures.word(failures.ReadEarly(FailureKind.NONFINITE, "z", (0,), 2, (8,), 7,
                                            "tl.atomic_add(z_ptr + offs, 0.0)"))
    assert text.startswith("read `z` before storing to it: program (0,) updated z(2) atomically at line 7: "
                           "`tl.atomic_add(z_ptr + offs, 0.0)`, and an atomic reads the element it updates, which no "
                           "program had stored yet."), text


# ---- autograd: what backward reaches of forward's must come through ctx ---------------------------
def _record(forward, backward):
    import types

    import torch

    from grader.channel import wire
    from grader.channel.kinds import function as function_wire
    from grader.sandbox.kinds.function.record import record
    cls = type("Wrapper", (torch.autograd.Function,), {"forward": staticmethod(forward),
                                                       "backward": staticmethod(backward)})
    layout = wire.BufferSpec(name="x", role="input", dtype="float32", shape=(40,), strides=(1,), guard=0,
                             nbytes=160, total=160)
    return wire.convert(record(cls, types.ModuleType("learner"), {__file__: ""}, [layout, layout], "cpu"),
                        function_wire.Program)


class _Stash:
    kept = None


def test_a_tensor_of_the_forwards_kept_on_a_class_is_smuggled_with_its_line():
    import torch

    def forward(ctx, x):
        _Stash.kept = torch.empty_like(x)
        return x.view(-1)

    def backward(ctx, g):
        return _Stash.kept.view(-1)
    program = _record(forward, backward)
    assert program.unseen is not None and program.unseen.phase == "backward"
    assert program.unseen.source == "return _Stash.kept.view(-1)"
    from grader.judge.kinds.function import program as programs
    text = programs.check(program, ["x"], "y", [True]).text
    assert text.startswith("the backward reached a tensor (shape (40)) that the forward made, as an argument of "
                           "`view` (line "), text
    assert "Fix: save it with `ctx.save_for_backward(...)` and read it from `ctx.saved_tensors`" in text


@pytest.mark.parametrize("keep", ["closure", "saved"])
def test_what_is_saved_inputs_grad_output_and_backwards_own_are_not(keep):
    import torch

    def forward(ctx, x):
        made = torch.empty_like(x)
        if keep == "saved":
            ctx.save_for_backward(made)
        else:
            ctx.later = lambda: made
        return x.view(-1)

    def backward(ctx, g):
        (made,) = ctx.saved_tensors if keep == "saved" else (ctx.later(),)
        return made.view(-1) + g.view(-1) + torch.ones_like(g)
    program = _record(forward, backward)
    assert (program.unseen is None) == (keep == "saved")


def test_a_forward_that_saves_only_where_a_gradient_is_wanted_saves():
    def forward(ctx, x):
        if x.requires_grad:
            ctx.save_for_backward(x)
        return x.view(-1)
    program = _record(forward, lambda ctx, g: ctx.saved_tensors[0].view(-1))
    assert program.saved == (0,) and program.unseen is None


def test_the_smuggled_words_are_the_recordings():
    from grader.judge.failures.wrappers import SMUGGLED as WORDED
    from grader.sandbox.kinds.function.tape import SMUGGLED
    assert WORDED == SMUGGLED


@pytest.mark.parametrize("source, refused", [
    ("import helpers as _C\n\ndef f(x):\n    return _C.scale(x)\n", False),  # the learner's own name
    ("from mypkg import _C as ext\n", False),  # another package's extension module
    ("from torch import _C as tc\n", True),
    ("import torch._C as _C\n", True),
    ("from torch._C import _DisableTorchDispatch\n", True),
])
def test_underscore_c_is_refused_only_where_it_reaches_torch(tmp_path, source, refused):
    found = host_escapes.internals(tmp_path / "k.py", source, ast.parse(source))
    assert (found is not None) is refused, found
    if refused:
        assert found.what.endswith("PyTorch's C++ internals") or "_DisableTorchDispatch" in found.what


def test_a_class_question_in_a_helper_module_the_host_code_calls_is_refused(tmp_path):
    helper = ("import torch\n\ndef pick(x):\n    return 1 if type(x) is torch.Tensor else 2\n\n"
              "def unused(x):\n    return type(x)\n")
    host = ("import helion\nimport helion.language as hl\n{imports}\n\n@helion.kernel()\n"
            "def add(x):\n    n = {call}(x)\n    out = torch.empty_like(x)\n    return out\n")
    for imports, call in [("from shapes import pick", "pick"), ("import shapes as sh", "sh.pick")]:
        found = _found(tmp_path, host.format(imports=imports, call=call), {"shapes": helper})
        assert sniffing.message(found).startswith(
            "`pick` of `shapes.py` at line 4: `return 1 if type(x) is torch.Tensor else 2`: `type(x)` asks for a "
            "value's Python class. Graded on a CPU, your host code gets tensors that act as a GPU's"), found
    never_called = host.format(imports="import shapes", call="len")
    assert _found(tmp_path, never_called, {"shapes": helper}) is None
