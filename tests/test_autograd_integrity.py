"""An autograd wrapper's results must come from the learner's Triton kernels, and the wrapper must
not be able to tell the grader's look from real use.

Three parts, each tested here beside the corpus (tests/wrong_kernels/puzzle15_*, puzzle22_*):

* the recording (grader/sandbox/kinds/function/record.py): the wrapper runs on tensors without
  values; its operators and launches are written down; host code that needs values fails with
  its line; what PyTorch computes out of the recording's sight reaches the program as a tensor
  no step made;
* the reading of the program (grader/judge/kinds/function/program.py): PyTorch may allocate, view, copy and sum the
  kernels' partial results, nothing else, and every result must be memory a kernel wrote;
* the static wrapper check (grader/source/wrapper_check.py): no reflection that could tell a recording
  from real use.
"""
from __future__ import annotations

import textwrap
import types

import pytest
import torch
import triton
import triton.language as tl

import grader.judge.kinds.function.program as programs
from conftest import COURSE
from grader.channel import wire
from grader.channel.kinds import function as function_wire
from grader.judge.options import Options
from grader.judge.session import grade_many
from grader.source.wrapper_check import find

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

# Keeps its answers between calls, keyed by the input's address, and hands back a stale one: the
# recording sees the cache return a tensor no step of this recording made.
CACHED = HONEST.replace("class WeightedSumFunc", "_seen = {}\n\n\nclass WeightedSumFunc").replace(
    "        return y.reshape(x.shape[:-1])",
    "        _seen.setdefault(x.shape, y)\n        return _seen[x.shape].reshape(x.shape[:-1])")


# Its forward kernel is autotuned over a config that is wrong for rows longer than 32, and its prune
# keeps only the configs whose tile holds a whole row, as Triton's tuner would run it: graded config
# by config, the replay runs only those the prune keeps for each launch.
PRUNED = HONEST.replace("class WeightedSumFunc", '''import triton.language as tl


def _whole_rows(configs, named, **kwargs):
    return [c for c in configs if c.kwargs["D_TILE"] >= named["D"]]


@triton.autotune(configs=[triton.Config({"D_TILE": 32}), triton.Config({"D_TILE": 256})], key=["D"],
                 prune_configs_by={"early_config_prune": _whole_rows})
@triton.jit
def row_dot(x_ptr, w_ptr, y_ptr, D, D_TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, D_TILE)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0)
    w = tl.load(w_ptr + cols, mask=cols < D, other=0.0)
    tl.store(y_ptr + row, tl.sum(x * w))


class WeightedSumFunc''').replace(
    """        weighted_sum_fwd[(triton.cdiv(rows_x.shape[0], 32),)](
            rows_x, weight, y, rows_x.stride(0), rows_x.stride(1), weight.stride(0), y.stride(0),
            rows_x.shape[0], rows_x.shape[1], ROWS_TILE_SIZE=32, D_TILE_SIZE=32)""",
    """        row_dot[(rows_x.shape[0],)](rows_x, weight.contiguous(), y, rows_x.shape[1])""")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wrappers")
    files = {"honest": HONEST, "cached": CACHED, "pruned": PRUNED}
    for name, source in files.items():
        (folder / f"{name}.py").write_text(source)
    targets = [("puzzle15", folder / f"{name}.py") for name in files]
    report = grade_many(COURSE, targets, Options(timeout=60, library=(str(COURSE.root / "solutions"),)), jobs=2)
    return dict(zip(files, report.results))


@pytest.mark.slow  # grades puzzle 15, an autograd puzzle
def test_solution_passes_recorded_and_replayed(solution_results):
    assert solution_results["puzzle15"].status == "pass", solution_results["puzzle15"].message


@pytest.mark.slow  # grades puzzle 15, an autograd puzzle
def test_honest_wrapper_in_another_style_passes(graded):
    assert graded["honest"].status == "pass", graded["honest"].message


@pytest.mark.slow  # grades puzzle 15, an autograd puzzle
def test_a_wrapper_kernel_is_replayed_only_with_the_configs_its_prune_keeps(graded):
    assert PRUNED != HONEST and "row_dot[(rows_x.shape[0],)]" in PRUNED
    assert graded["pruned"].status == "pass", graded["pruned"].message


@pytest.mark.slow  # grades puzzle 15, an autograd puzzle
def test_a_result_kept_from_another_call_is_a_tensor_the_recording_did_not_see_made(graded):
    failing = [c for c in graded["cached"].cases if not c.passed]
    assert failing and failing[0].kind == "torch_compute", graded["cached"].message
    # the second case of a shape gets the first one's result back, which the first call's recording made
    assert "passed on a tensor (shape (200)) that no PyTorch operator the grader recorded made, as an " \
           "argument of `view` (line 22: `return _seen[x.shape].reshape(x.shape[:-1])`)" in failing[0].message
    assert "kept from an earlier call" in failing[0].message


# ---- the recording, in this process (nothing is launched) ----------------------------------------
@triton.jit
def _add_one(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < N) + 1, mask=offsets < N)


_tuned = triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 64})], key=["N"])(
    triton.jit(_add_one.fn))


def _record(forward, backward=None, shape=(40,)):
    """The program of a Function made of ``forward`` and ``backward`` (x -> y of x's shape)."""
    from grader.sandbox.kinds.function.record import record
    backward = backward or (lambda ctx, g: torch.empty_like(g))
    cls = type("Wrapper", (torch.autograd.Function,), {"forward": staticmethod(forward),
                                                       "backward": staticmethod(backward)})
    module = types.ModuleType("learner")
    module.add_one, module.tuned = _add_one, _tuned
    layout = wire.BufferSpec(name="x", role="input", dtype="float32", shape=shape, strides=(1,), guard=0,
                             nbytes=4 * shape[0], total=4 * shape[0])
    return wire.convert(record(cls, module, {__file__: ""}, [layout, layout], "cpu"), function_wire.Program)


def test_the_recording_writes_down_operators_and_launches_with_their_lines():
    def forward(ctx, x):
        y = torch.empty_like(x)
        _add_one[(triton.cdiv(x.shape[0], 16),)](x, y, x.shape[0], BLOCK=16)
        ctx.save_for_backward(x)
        return y.view(-1)
    program = _record(forward)
    ops = [(s.op or ".".join(s.kernel.path), s.phase) for s in program.steps]
    assert ops == [("aten::empty_like.default", "forward"), ("add_one", "forward"), ("aten::view.default", "forward"),
                   ("aten::empty_like.default", "backward")]
    launch = program.steps[1]
    assert launch.grids == ((3,),) and launch.args[:2] == ({"ref": 0}, {"ref": 2}) and launch.kwargs == {"BLOCK": 16}
    assert launch.source == "_add_one[(triton.cdiv(x.shape[0], 16),)](x, y, x.shape[0], BLOCK=16)"
    assert program.saved == (0,) and program.output.ref == 3 and program.metas[3].storage == program.metas[2].storage


def test_an_autotuned_launch_gets_its_grid_for_every_config():
    def forward(ctx, x):
        y = torch.empty_like(x)
        _tuned[lambda meta: (triton.cdiv(meta["N"], meta["BLOCK"]),)](x, y, x.shape[0])
        return y
    program = _record(forward, shape=(100,))
    assert program.launches()[0].grids == ((7,), (2,)) and program.replays() == 2


def test_host_code_that_needs_values_fails_with_its_line():
    from grader.sandbox.kinds.function.record import RecordingFailed

    def forward(ctx, x):
        rows = int(x.sum().item())
        return x.new_empty(rows)
    with pytest.raises(RecordingFailed) as failed:
        _record(forward)
    assert failed.value.phase == "forward"
    assert failed.value.host["op"].startswith("a tensor's value (`.item()`")
    assert failed.value.host["source"] == "rows = int(x.sum().item())"


def test_pytorch_with_the_recording_switched_off_reaches_the_program_as_unseen():
    """The wrapper check refuses the switch before anything runs; were it reached at run time,
    the recording still cannot be fooled: the matmul's result comes from no recorded step."""
    from torch.utils._python_dispatch import _disable_current_modes

    def forward(ctx, x):
        with _disable_current_modes():
            y = x * 2
        return y
    program = _record(forward)
    assert program.unseen is not None and program.unseen.what == "the forward's result"
    finding = programs.check(program, ["x"], "y", [True])
    assert finding.kind == "torch_compute" and "that no PyTorch operator the grader recorded made" in finding.text


def test_a_fake_tensors_address_looks_like_an_allocators():
    seen = []

    def forward(ctx, x):
        y = torch.empty_like(x)
        seen.extend([x.data_ptr(), y.data_ptr(), x[1:].data_ptr()])
        return y
    _record(forward)
    assert all(p % 256 == 0 for p in seen[:2]) and len(set(seen[:2])) == 2 and seen[2] == seen[0] + 4


# ---- reading a program ---------------------------------------------------------------------------
def _meta(storage, shape=(8,)):
    return {"shape": list(shape), "strides": [1] * len(shape), "dtype": "float32", "offset": 0, "storage": storage}


def _program(steps, output=3, grads=(4,), metas=None):
    """Refs 0 (x) and 1 (grad_output) are given; the steps make refs 2 on."""
    metas = metas or [_meta(0), _meta(1), _meta(2), _meta(3), _meta(4)]
    return wire.convert({
        "inputs": 1, "metas": metas, "steps": steps, "output": {"ref": output},
        "grads": [{"ref": g} for g in grads], "saved": [], "attributes": [], "unseen": None}, function_wire.Program)


def _op(name, args, out, phase="forward", line=7, source="..."):
    return {"phase": phase, "op": f"aten::{name}.default", "args": args, "kwargs": {}, "out": out, "line": line,
            "source": source}


def _launch(args, phase="forward"):
    return {"phase": phase, "kernel": {"path": ["k"]}, "args": args, "kwargs": {}, "grids": [[1]]}


def test_a_program_that_only_allocates_launches_and_sums_partials_passes():
    program = _program([
        _op("empty_like", [{"ref": 0}], [2]), _launch([{"ref": 0}, {"ref": 2}]), _op("view", [{"ref": 2}, [8]], [3]),
        _op("empty_like", [{"ref": 0}], [4], "backward"), _launch([{"ref": 1}, {"ref": 4}], "backward"),
    ])
    assert programs.check(program, ["x"], "y", [True]) is None
    assert programs.check(_partials(), ["x"], "y", [True], {"x": 4}) is None


def _partials(phase="backward", dims=(0,), rows=4, returned=4):
    """The forward launches; the backward's kernel writes (rows, 8) partial rows, which the host sums."""
    metas = [_meta(0), _meta(1), _meta(2), _meta(3, (rows, 8)), _meta(4), _meta(5)]
    return _program([
        _op("empty_like", [{"ref": 0}], [2]), _launch([{"ref": 0}, {"ref": 2}]),
        _op("empty", [[rows, 8]], [3], phase), _launch([{"ref": 1}, {"ref": 3}], phase),
        {**_op("sum", [{"ref": 3}, list(dims)], [4], phase, 21, "partial.sum(0)"), "op": "aten::sum.dim_IntList"},
        _op("empty_like", [{"ref": 0}], [5], "backward"), _launch([{"ref": 5}], "backward"),
    ], output=2, grads=(returned,), metas=metas)


@pytest.mark.parametrize("program, allowed, says", [
    (_partials(), {}, "with PyTorch: `aten.sum` (line 21: `partial.sum(0)`) sums on the host. The statement leaves "
                      "the host no reduction: every sum runs in your kernels."),
    (_partials("forward"), {"x": 4}, "the forward reduced a kernel's buffer of shape (4, 8) with PyTorch: `aten.sum` "
                                     "(line 21: `partial.sum(0)`) sums in the forward."),
    (_partials(dims=(1,)), {"x": 4}, "sums over dim 1 of a 2-D tensor, not over the first dim of per-program partial"),
    (_partials(rows=9), {"x": 4}, "sums 9 rows, more than the 4 per-program partial rows"),
    (_partials(returned=5), {"x": 4}, "(line 21: `partial.sum(0)`) is not returned as `grad_x`"),
])
def test_a_reduction_on_the_host_is_held_to_what_the_statement_allows(program, allowed, says):
    finding = programs.check(program, ["x"], "y", [True], allowed)
    assert finding is not None and finding.kind == "torch_compute"
    assert says in finding.text, finding.text
    if allowed:
        assert "The statement leaves the host one reduction, in the backward: `grad_" in finding.text


def test_a_host_sum_is_returned_as_the_gradient_it_finishes_and_feeds_no_kernel():
    steps, metas = list(_partials().steps), list(_partials().metas)
    swapped = _program(steps, output=4, grads=(5,), metas=metas)  # returned as the forward's result
    finding = programs.check(swapped, ["x"], "y", [True], {"x": 4})
    assert finding is not None and "returned as `y`" in finding.text, finding.text
    fed = _program([*steps[:5], _launch([{"ref": 4}, {"ref": 5}], "backward")], output=2, grads=(5,), metas=metas)
    finding = programs.check(fed, ["x"], "y", [True], {"x": 4})
    assert finding is not None and "made a tensor that the launch of `k` reads" in finding.text, finding.text


def test_pytorch_computing_on_an_input_or_a_kernels_buffer_is_named_with_its_line():
    on_input = _program([_op("mul", [{"ref": 0}, 2.0], [2], source="y = x * 2"), _launch([{"ref": 2}]),
                         _launch([{"ref": 1}], "backward")], output=2, grads=())
    finding = programs.check(on_input, ["x"], "y", [])
    assert finding.kind == "torch_compute"
    assert finding.text.startswith("the forward computed with PyTorch: `aten.mul` read an input (line 7: `y = x * 2`)")
    on_buffer = _program([_op("empty_like", [{"ref": 0}], [2]), _launch([{"ref": 0}, {"ref": 2}]),
                          _op("exp", [{"ref": 2}], [3], source="y = y.exp()"), _launch([{"ref": 1}], "backward")],
                         grads=())
    finding = programs.check(on_buffer, ["x"], "y", [])
    assert "`aten.exp` read a kernel's buffer (line 7: `y = y.exp()`)" in finding.text


def test_a_gradient_no_kernel_wrote_is_named_as_never_computed():
    program = _program([_op("empty_like", [{"ref": 0}], [2]), _launch([{"ref": 0}, {"ref": 2}]),
                        _op("view", [{"ref": 2}, [8]], [3]), _launch([{"ref": 1}], "backward"),
                        _op("zeros_like", [{"ref": 0}], [4], "backward", 12, "grad = torch.zeros_like(x)")])
    finding = programs.check(program, ["x"], "y", [True])
    assert finding.kind == "unwritten"
    assert finding.text.startswith("`grad_x` is never written: the backward returns the tensor `zeros_like` made at "
                                   "line 12: `grad = torch.zeros_like(x)`, which no Triton kernel wrote.")


def test_returning_an_input_is_not_a_result():
    program = _program([_launch([{"ref": 0}]), _launch([{"ref": 1}], "backward")], output=0, grads=())
    finding = programs.check(program, ["x"], "y", [])
    assert finding.kind == "torch_compute" and "the forward returns `x` as `y`, which no Triton kernel wrote" in finding.text


def test_a_phase_without_a_launch_says_so():
    program = _program([_launch([{"ref": 0}])], grads=())
    assert programs.check(program, ["x"], "y", []).text == \
        "the backward launched no Triton kernel: compute it with your kernels from the previous puzzles."


def test_a_program_with_a_ref_outside_its_tensors_is_refused_on_the_wire():
    with pytest.raises(wire.WireError, match="a ref outside"):
        _program([_op("view", [{"ref": 0}], [9])])


# ---- the static check ----------------------------------------------------------------------------
def _finding(body: str, header: str = "import torch\n"):
    source = header + textwrap.dedent('''
        class WeightedSumFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, weight):
        ''') + textwrap.indent(textwrap.dedent(body), " " * 8)
    return find(source, "WeightedSumFunc")


def test_static_check_passes_the_solutions_the_stubs_and_honest_idioms():
    for puzzle_id in ("puzzle15", "puzzle22", "puzzle33", "puzzle34"):
        name = COURSE.puzzle(puzzle_id).kernel
        assert find(COURSE.solution_file(puzzle_id).read_text(), name) is None
        assert find(COURSE.puzzle_file(puzzle_id).read_text(), name) is None
    honest = ("key = (x.dtype, x.data_ptr() % 16 == 0)\nmeta = {'BLOCK': 64}\n"
              "sms = torch.cuda.get_device_properties(x.device).multi_processor_count\n"
              "assert x.shape[-1] == weight.shape[0], f'{x.shape} and {weight.shape}'\n"
              "import os\nprint(os.path.basename('a/b'))\nimport numpy as np\nn = int(np.prod(x.shape[:-1]))")
    assert _finding(honest) is None


@pytest.mark.parametrize("header, body, says", [
    ("from torch._subclasses.fake_tensor import FakeTensor\n", "if isinstance(x, FakeTensor): pass",
     "`FakeTensor` (from `torch._subclasses.fake_tensor.FakeTensor`) reaches PyTorch's internals"),
    ("", "if type(x) is torch.Tensor: pass", "`type` asks for an object's Python type"),
    ("", "if x.__class__.__name__ == 'Tensor': pass", "`.__class__` asks for an object's Python type"),
    ("import inspect\n", "frames = inspect.stack()", "`inspect` (from `inspect`) reads the call stack"),
    ("import sys\n", "caller = sys._getframe(1)", "`._getframe` reads the call stack"),
    ("import os\n", "if os.environ.get('X'): pass", "`.environ` reads the process's environment"),
    ("", "mode = torch._C._len_torch_dispatch_stack()", "`._C` reaches PyTorch's internals"),
    ("", "switch = getattr(torch, '_' + 'C')", "`getattr` reads an attribute named at run time"),
    ("", "name = type(weighted_sum_fwd.run).__qualname__", "`.__qualname__` reads a function's qualified name"),
    ("import gc\n", "objects = gc.get_objects()", "`gc` (from `gc`) reaches objects through the garbage collector"),
    ("", "if 'Fake' in repr(x): pass", "`'Fake'` names 'fake', which only the grader's tools are about"),
    ("", "text = repr(x)", "`repr` turns an object into text"),
    ("", "if x.is_meta: pass", "`.is_meta` asks whether a tensor has memory"),
    ("", "import operator\nget = operator.attrgetter('_C')", "`import operator` reads attributes named by strings"),
])
def test_static_check_names_the_line(header, body, says):
    finding = _finding(body, "import torch\n" + header)
    assert finding is not None
    assert says in finding.what
    assert finding.function == "WeightedSumFunc.forward"
    assert finding.source.split(":")[0] in body or body.split("\n")[0] in finding.source


def test_static_check_follows_helpers_and_ignores_unrelated_code():
    header = "import torch\nimport inspect\n\n\ndef unused():\n    return inspect.stack()\n\n\ndef helper():\n" \
             "    return type(1)\n"
    finding = _finding("return helper()", header)
    assert finding is not None and finding.function == "helper"
    assert _finding("return unused", "import torch\n") is None


# ---- asking which device it runs on (issues 32, 45) -----------------------------------------------
@pytest.mark.parametrize("body", [
    "if x.device.type == 'cpu': pass", "gpu = x.is_cuda", "y = x * 2 if x.is_cpu else x",
    "if torch.cuda.is_available(): pass", "kind = x.device.type", "if x.device == torch.device('cuda', 0): pass",
    "dev = x.device\nif dev != 'cpu': pass", "if 'cuda' in str(x.device): pass",
    "n = 1 if x.get_device() < 0 else 2", "name = str(x.device)",
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'",  # Liger's infer_device()
    "assert x.is_cuda and torch.cuda.device_count() > 0, 'x must be on a GPU'",
])
def test_asking_which_device_is_library_code_and_passes_the_check(body):
    """Wherever it is graded, the wrapper sees a GPU (grader.sandbox.world), so a question of the
    device takes the path it takes where the wrapper is used: nothing to refuse
    (tests/test_one_world.py runs such wrappers)."""
    assert _finding(body) is None, body


def test_allocating_on_the_inputs_device_is_not_asking_which():
    body = ("y = torch.empty(3, device=x.device)\nz = x.new_empty((2, 2))\nw = torch.zeros_like(x, device=x.device)\n"
            "sms = torch.cuda.get_device_properties(x.device).multi_processor_count\n"
            "assert x.device == weight.device, 'x and weight on one device'")
    assert _finding(body) is None


# ---- strides of a dimension of size 1 (issue 32) -------------------------------------------------
def test_a_size_one_dimensions_stride_is_no_difference_between_recording_and_replay():
    """``empty_like`` of ``q.transpose(1, 2).contiguous()`` with one head: fake tensors give the head's
    dimension another stride than real ones do. That stride addresses nothing, so the replay does not
    hold the wrapper to it; a stride of a longer dimension still must agree."""
    from grader.sandbox.kinds.function.record import record
    from grader.sandbox.kinds.function.replay import Disagrees, replay, same_strides

    def forward(ctx, q):
        return torch.empty_like(q.transpose(1, 2).contiguous()).transpose(1, 2).contiguous()

    cls = type("Wrapper", (torch.autograd.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(lambda ctx, g: torch.empty_like(g))})
    shape, strides = (2, 1, 3, 8), (24, 24, 8, 1)
    layout = wire.BufferSpec(name="q", role="input", dtype="float32", shape=shape, strides=strides, guard=0,
                             nbytes=4 * 48, total=4 * 48)
    program = wire.convert(record(cls, types.ModuleType("learner"), {__file__: ""}, [layout, layout], "cpu"),
                           function_wire.Program)
    made = program.metas[program.steps[-1].out[0]] if program.steps else None
    q, g = torch.randn(shape), torch.randn(shape)
    returned, _ = replay(program, [q, g], "cpu", types.ModuleType("learner"))  # raises Disagrees if held to it
    assert made is not None and tuple(returned[0].shape) == shape
    assert same_strides((2, 1, 3), (3, 3, 1), (3, 1, 1)) and not same_strides((2, 2, 3), (6, 3, 1), (3, 6, 1))
    with pytest.raises(Disagrees, match=r"strides \(24, 24, 1, 3\)"):  # a stride that addresses something still counts
        replay(program, [q.transpose(2, 3).contiguous().transpose(2, 3), g], "cpu", types.ModuleType("learner"))


@pytest.mark.slow  # grades puzzle 33, an autograd puzzle (its cases have B == 1 and H == 1)
def test_a_correct_attention_wrapper_passes_with_one_batch_or_one_head(tmp_path):
    """Puzzle 33's solution, allocating `o` through a transposed copy of `q`, as a wrapper working in
    (B, N, H, D) order might: with H == 1 the replay's real strides differ from the recording's in the
    head's dimension only, which addresses nothing. It used to fail, blaming the learner."""
    source = COURSE.solution_file("puzzle33").read_text()
    wrapper = source.replace("        o = torch.empty_like(q)\n",
                             "        o = torch.empty_like(q.transpose(1, 2).contiguous()).transpose(1, 2).contiguous()\n")
    assert wrapper != source
    path = tmp_path / "puzzle33_transposed_alloc.py"
    path.write_text(wrapper)
    cases = COURSE.puzzle("puzzle33").cases
    assert any(c.sizes["H"] == 1 for c in cases) and any(c.sizes["B"] == 1 for c in cases)
    report = grade_many(COURSE, [("puzzle33", path)], Options(timeout=120, library=(str(COURSE.root / "solutions"),)))
    assert report.results[0].status == "pass", report.results[0].message
