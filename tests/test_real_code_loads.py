"""Real code loads as written (issue 45, item 3): the module-level data that kernels' decorators and
launches use is kept by the definitions-only import (config lists, dtype dicts, constexpr tables,
constants), evaluated as data and never as code; heuristics may ask `is not None`, and get the
launch's arguments in the sm_90 compile check; Helion's tunables run with their defaults. What is
left out is said with its line, why, and what to write instead (item 4), wherever the learner
meets the missing name.

Kernels written as libraries write them are graded end to end: tests/hostile/puzzle22_mamba_rms_norm.py,
puzzle22_liger_rms_norm.py, puzzle22_heuristic_reads_launch_sizes.py, puzzle02_module_data.py, and
tests/helion_corpus/puzzle37_softmax_exp2_tunable.py, puzzle40_matmul_registered_blocks.py.
"""
from __future__ import annotations

import textwrap

import pytest
import torch
import triton.language as tl

from conftest import COURSE, HAVE_HELION, NO_HELION, ROOT
from grader.judge.options import Options
from grader.judge.session import grade_many
from grader.judge.status import Status
from grader.sandbox.recorded_launch import launch_values, pointer_values
from grader.source.definitions import definitions

HEAD = '''import math
import torch
import triton
import triton.language as tl


def evil(*args, **kwargs):
    open(MARKER, "w").write("ran")
    return [triton.Config({})]
'''
HOSTILE = ROOT / "tests" / "hostile"
HELION_CORPUS = ROOT / "tests" / "helion_corpus"


def load(tmp_path, source: str):
    """``source`` reduced to its definitions, then run as the worker runs a learner's file."""
    result = definitions(HEAD + textwrap.dedent(source))
    path = tmp_path / "learner.py"
    path.write_text(result.text)  # Triton reads a kernel's source from its file
    namespace = {"__name__": "learner", "MARKER": str(tmp_path / "ran")}
    exec(compile(result.text, str(path), "exec"), namespace)
    assert not (tmp_path / "ran").exists(), "the learner's function ran at import"
    return result, namespace


# ---- kept: data, as libraries name it ------------------------------------------------------

MAMBA = '''
configs_autotune = [
    triton.Config({}, num_warps=1),
    triton.Config({}, num_warps=4),
]


@triton.autotune(configs=configs_autotune, key=["N", "HAS_X1"])
@triton.heuristics({"HAS_X1": lambda args: args["X1"] is not None})
@triton.jit
def k(X, X1, N, HAS_X1: tl.constexpr):
    pass
'''


def test_mambas_config_list_named_by_its_decorator_is_kept(tmp_path):
    result, namespace = load(tmp_path, MAMBA)
    assert result.dropped == ()
    tuner = namespace["k"]
    assert [c.num_warps for c in tuner.configs] == [1, 4]
    has_x1 = tuner.fn.values["HAS_X1"]
    assert has_x1({"X1": None}) is False and has_x1({"X1": torch.ones(1)}) is True


@pytest.mark.parametrize("source, name, value", [
    ("T = {torch.float32: tl.float32, torch.float16: tl.float16}", "T", {torch.float32: tl.float32,
                                                                      torch.float16: tl.float16}),
    ("LLAMA: tl.constexpr = tl.constexpr(0)\nMODES = {'llama': LLAMA.value}", "MODES", {"llama": 0}),
    ("LOG2E = math.log2(math.e)", "LOG2E", 1.4426950408889634),
    ("FP16_MAX = torch.finfo(torch.float16).max", "FP16_MAX", 65504.0),
    ("NEG = float('-inf')", "NEG", float("-inf")),
    ("BLOCKS = [2 ** i for i in range(4, 8)]", "BLOCKS", [16, 32, 64, 128]),
    ("WARPS = tuple(w for w in (1, 2, 4, 8) if w > 1)", "WARPS", (2, 4, 8)),
    ("D = {'a': 1}\nBACK = {v: k for k, v in D.items()}", "BACK", {1: "a"}),
    ("BLOCK = 128\nWARPS = 4 if BLOCK > 64 else 2", "WARPS", 4),
    ("SIZES = (1, 2)\nSIZES += (3,)", "SIZES", (1, 2, 3)),
    ("X = 1\nif __name__ == '__main__':\n    X = 2", "X", 1),  # the main block never runs on import
    ("DEVICE = 'cuda'\nprint(DEVICE.upper())", "DEVICE", "cuda"),  # read, not changed, by a line not run
    ("next_power_of_2 = triton.next_power_of_2\nB = next_power_of_2", "B", __import__("triton").next_power_of_2),
    ("CACHE = {}\n@evil\ndef f(k):\n    CACHE[k] = 1", "CACHE", {}),  # a body left out never runs on import
])
def test_module_level_data_is_kept_with_its_value(tmp_path, source, name, value):
    result, namespace = load(tmp_path, source + "\n")
    assert all(d.text in ("print(DEVICE.upper())", "@evil") or "__main__" in d.reason for d in result.dropped), \
        result.dropped
    assert namespace[name] == value


def test_configs_extended_and_comprehended_are_the_decorators(tmp_path):
    source = '''
    configs = [triton.Config({"B": 32}, num_warps=1)]
    configs += [triton.Config({"B": b}, num_warps=w) for b in [16, 64] for w in (2, 4) if b * w <= 128]


    @triton.autotune(configs=configs, key=["N"])
    @triton.jit
    def k(X, N, B: tl.constexpr):
        pass
    '''
    result, namespace = load(tmp_path, source)
    assert result.dropped == ()
    assert [(c.kwargs["B"], c.num_warps) for c in namespace["k"].configs] == [(32, 1), (16, 2), (16, 4), (64, 2)]


# ---- refused: code, with the line, why and what to write instead ------------------------------------

@pytest.mark.parametrize("source, says", [
    ("CONFIGS = make()", ["`CONFIGS` is set by a call (`make(...)`), and a call at module level is not run",
                          "only definitions of data are kept", "Write the value out"]),
    ("X = [evil()]", ["the value of `X` is not data: `evil(...)` is a call",
                      "compute it inside the function that uses it"]),
    ("X = {torch.float16: evil}", ["`evil` is not a constant defined above"]),
    ("X = torch.randn(3)", ["`X` is set by a call (`torch.randn(...)`)"]),
    ("X = torch.cuda.is_available", ["`torch.cuda.is_available` is not a dtype, a constant of `math` or a function "
                                     "that only computes"]),
    ("X = torch._C._DisableTorchDispatch", ["`torch._C._DisableTorchDispatch` is not a dtype"]),  # no aliases
    ("X = [0 for _ in range(100000)]", ["the comprehension makes 100000 items: keep it to 4096"]),
    ("X = [triton.Config({}, pre_hook=evil)]", ["`triton.Config(pre_hook=...)` would run your code"]),
    ("X = 2 ** 10 ** 10", ["raises to a power that is not a small whole number"]),
    ("X = [0] * 10 ** 9", ["`[0] * 10 ** 9` repeats a sequence more than 4096 times"]),
    ("X = [2 ** i for i in [100000]]", ["`2 ** i` raises to a power that is not a small whole number"]),
    ("X = [2 ** i for i in range(3) for i in [100000]]", ["`2 ** i` raises to a power"]),
    ("X = [c for c in evil()]", ["`evil(...)` is a call"]),
])
def test_code_is_refused_by_name_and_never_run(tmp_path, source, says):
    result, namespace = load(tmp_path, source + "\n")
    (dropped,) = [d for d in result.dropped if d.text == source]
    assert all(s in dropped.reason for s in says), dropped.reason
    assert "X" not in namespace and "CONFIGS" not in namespace


def test_a_default_may_not_fill_the_workers_memory_either():
    (dropped,) = [d for d in definitions(HEAD + "\ndef f(x=[0] * 10 ** 9):\n    pass\n").dropped
                  if d.text.startswith("def f")]
    assert dropped.reason.startswith("default value of `x` is not a literal")


@pytest.mark.parametrize("change, line", [
    ("if torch.version.hip:\n    configs = [triton.Config({}, num_warps=2)]", "if torch.version.hip:"),
    ("configs.append(triton.Config({}, num_warps=8))", "configs.append(triton.Config({}, num_warps=8))"),
    ("configs = evil(configs)", "configs = evil(configs)"),
])
def test_a_value_changed_by_a_line_not_run_is_left_out_too(tmp_path, change, line):
    """Graded with the first value, the kernel would run configs the learner's code never has."""
    source = "configs = [triton.Config({}, num_warps=4)]\n" + change + "\n"
    result, namespace = load(tmp_path, source)
    first = next(d for d in result.dropped if d.text == "configs = [triton.Config({}, num_warps=4)]")
    number = HEAD.count("\n") + 2
    assert first.reason.startswith(f"`configs` is changed again at line {number} (`{line}`), which is not run (")
    assert first.reason.endswith("write the final value out in one assignment of data")
    assert "configs" not in namespace
    assert "configs" in result.missing


def test_a_decorator_naming_a_list_left_out_says_that_line(tmp_path):
    """mamba's `pruned_configs_autotune = config_prune(configs_autotune)`: a call of the learner's."""
    source = MAMBA.replace("\n\n\n@triton.autotune(configs=configs_autotune",
                           "\npruned = evil(configs_autotune)\n\n\n@triton.autotune(configs=pruned")
    result, namespace = load(tmp_path, source)
    (kernel,) = [d for d in result.dropped if d.text.startswith("@triton.autotune(configs=pruned")]
    assert kernel.reason.startswith("`configs=pruned` names a value that is not kept (to prune configs, give "
                                    "`prune_configs_by={\"early_config_prune\": fn}` a function of this file")
    number = (HEAD + textwrap.dedent(source)).splitlines().index("pruned = evil(configs_autotune)") + 1
    assert f"line {number}, `pruned = evil(configs_autotune)`, was not run: `pruned` is set by a call (`evil(...)`)" \
        in kernel.reason
    assert "k" not in namespace and result.missing["k"] == kernel


def test_configs_made_by_a_call_are_refused_saying_what_to_write():
    source = MAMBA.replace("configs=configs_autotune", "configs=get_configs(configs_autotune)")
    (dropped,) = [d for d in definitions(HEAD + textwrap.dedent(source)).dropped if d.text.startswith("@triton")]
    assert dropped.reason == ("`configs=get_configs(configs_autotune)` is a call, and a call is not run at import: "
                              "write the list of `triton.Config(...)` out (a comprehension over literals will do), "
                              "and to choose among them give `prune_configs_by={\"early_config_prune\": fn}` a "
                              "function of this file (it runs at launch)")


@pytest.mark.parametrize("rule, kept", [
    ('args["X1"] is not None', True),
    ('args["X1"] is None', True),
    ('args["X1"] is not None and args["N"] > 4', True),
    ('args["X1"] is 3', False),
    ('args["X1"] is args["X2"]', False),
    ('min(MAX_FUSED_SIZE, triton.next_power_of_2(args["N"]))', True),  # a constant kept as data
    ('min(make(), args["N"])', False),
    ('min(LATER, args["N"])', False),  # bound below the kernel: not there when the decorator runs
])
def test_heuristics_may_ask_whether_an_argument_is_none(rule, kept):
    source = HEAD + f'MAX_FUSED_SIZE = 65536\n\n@triton.heuristics({{"H": lambda args: {rule}}})\n@triton.jit\n' \
                    f'def k(X1, X2, N, H: tl.constexpr):\n    pass\n\nLATER = 4\n'
    dropped = definitions(source).dropped
    assert (dropped == ()) == kept, dropped
    if not kept:
        assert "`args[\"name\"] is None` (or `is not None`)" in dropped[0].reason


# ---- the compile check: a launch's arguments, by name --------------------------------------------------

def test_the_compile_check_gives_heuristics_every_argument_of_the_launch():
    def kernel(X, X1, N, eps, OUT, BLOCK):
        pass
    values = launch_values(kernel, [{"pointer": "float16"}, None, 96, 1e-6, {"tl_dtype": "fp16"}], {"BLOCK": 128})
    assert values["X"] is not None and values["X"].dtype == "fp16" and values["X1"] is None
    assert (values["N"], values["eps"], values["OUT"], values["BLOCK"]) == (96, 1e-6, tl.float16, 128)
    assert set(pointer_values({"x_ptr": "*fp32", "N0": "i32", "B0": "constexpr"})) == {"x_ptr"}


# ---- graded end to end ----------------------------------------------------------------------------

MISSING = '''import triton
import triton.language as tl


def make_scale():
    return 10.0


SCALE = make_scale()


@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + SCALE, mask=mask)
'''
NOTE = ("(line 9, `SCALE = make_scale()`, was not run: `SCALE` is set by a call (`make_scale(...)`), and a call "
        "at module level is not run: only definitions of data are kept")


@pytest.mark.parametrize("compile_check", [False, True])
def test_a_missing_name_is_said_with_the_line_left_out(tmp_path, compile_check):
    (tmp_path / "k.py").write_text(MISSING)
    report = grade_many(COURSE, [("puzzle02", tmp_path / "k.py")], Options(device="cpu", compile_check=compile_check))
    (result,) = report.results
    assert result.status == Status.FAIL
    said = result.message if compile_check else result.cases[0].message
    assert NOTE in said and "Write the value out (a comprehension over literals will do)" in said, said
    assert ("NameError('SCALE is not defined')" if compile_check else "NameError: name 'SCALE' is not defined") in said


def test_libraries_kernels_pass_as_written():
    files = ["puzzle02_module_data.py", "puzzle02_heuristic_is_not_none.py", "puzzle22_mamba_rms_norm.py"]
    report = grade_many(COURSE, [(f[:8], HOSTILE / f) for f in files], Options(device="cpu"), jobs=2)
    for name, result in zip(files, report.results):
        assert result.status == Status.PASS, (name, result.message)


@pytest.mark.slow
def test_more_libraries_kernels_pass_as_written():
    files = ["puzzle22_liger_rms_norm.py", "puzzle22_heuristic_reads_launch_sizes.py"]
    report = grade_many(COURSE, [(f[:8], HOSTILE / f) for f in files], Options(device="cpu"), jobs=2)
    for name, result in zip(files, report.results):
        assert result.status == Status.PASS, (name, result.message)


def test_mamba_pruning_its_configs_at_import_is_told_why(tmp_path):
    source = (HOSTILE / "puzzle22_mamba_rms_norm.py").read_text().replace(
        "\n\n\n@triton.autotune(configs=configs_autotune, key=[\"N\", \"HAS_BIAS\", \"HAS_W1\"])",
        "\npruned = [c for c in configs_autotune]\npruned = prune(pruned)\n\n\n"
        "@triton.autotune(configs=pruned, key=[\"N\", \"HAS_BIAS\", \"HAS_W1\"])")
    (tmp_path / "mamba.py").write_text(source)
    report = grade_many(COURSE, [("puzzle22", tmp_path / "mamba.py")], Options(device="cpu", compile_check=False))
    said = report.results[0].cases[0].message
    assert "your forward raised NameError: name '_rms_norm_fwd_1pass_kernel' is not defined (line 20, " \
           "`@triton.autotune(configs=pruned, " in said, said
    assert "`configs=pruned` names a value that is not kept" in said
    assert "line 17, `pruned = prune(pruned)`, was not run: `pruned` is set by a call (`prune(...)`)" in said


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_HELION, reason=NO_HELION)
def test_helions_tunables_run_with_their_defaults():
    files = ["puzzle37_softmax_exp2_tunable.py", "puzzle40_matmul_registered_blocks.py", "puzzle40_matmul_split_k.py"]
    report = grade_many(COURSE, [(f[:8], HELION_CORPUS / f) for f in files], Options(device="cpu"), jobs=2)
    for name, result in zip(files, report.results):
        assert result.status == Status.PASS, (name, result.message)


# ---- a kernel defined in a notebook: its module-level data travels with it ------------------------------

NOTEBOOK_CELL = '''import torch
import triton
import triton.language as tl

configs_autotune = [triton.Config({"B0": 16}, num_warps=1), triton.Config({"B0": 64}, num_warps=4, maxnreg=128)]
OUT = {torch.float32: tl.float32, torch.float16: tl.float16}
INF = float("inf")


@triton.autotune(configs=configs_autotune, key=["N0"])
@triton.jit
def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 10.0, mask=mask)


def out_dtype(x):
    return OUT[x.dtype], INF
'''


def test_a_captured_kernel_brings_the_data_its_decorators_and_helpers_use(tmp_path):
    """``check(kernel)`` in a notebook writes the kernel into a module of its own: the configs its
    decorator names and a helper's dtype table are written out as data, ahead of the definitions."""
    import importlib.util

    from grader.source.capture import source_of
    path = tmp_path / "cell.py"
    path.write_text(NOTEBOOK_CELL)
    spec = importlib.util.spec_from_file_location("cell", path)
    cell = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cell)
    kernel_text, helper_text = source_of(cell.add_mask2_kernel), source_of(cell.out_dtype)
    assert "configs_autotune = [triton.Config({'B0': 16}, num_warps=1, num_stages=3, num_ctas=1), triton.Config(" \
           "{'B0': 64}, num_warps=4, num_stages=3, num_ctas=1, maxnreg=128)]" in kernel_text
    assert kernel_text.index("configs_autotune =") < kernel_text.index("@triton.autotune")
    assert "OUT = {torch.float32: tl.float32, torch.float16: tl.float16}" in helper_text
    assert "INF = float('inf')" in helper_text
    for text in (kernel_text, helper_text):
        result, namespace = load(tmp_path, text)
        assert result.dropped == ()
    assert [c.maxnreg for c in load(tmp_path, kernel_text)[1]["add_mask2_kernel"].configs] == [None, 128]


def _raised_in(filename: str, exc_type=AssertionError) -> BaseException:
    code = compile(f"raise {exc_type.__name__}()", filename, "exec")
    try:
        exec(code, {})
    except exc_type as exc:
        return exc
    raise RuntimeError("nothing raised")


@pytest.mark.parametrize("filename, interpreting, limit", [
    ("/venv/site-packages/helion/language/tunable_ops.py", "1", True),  # Helion's reference, in its interpreter
    ("/venv/site-packages/helion/language/tunable_ops.py", None, False),  # compiled, on a GPU: not the interpreter's
    ("/home/learner/puzzle37.py", "1", False),  # the learner's own assert
])
def test_what_helions_interpreter_cannot_run_is_its_limit_not_the_learners_error(monkeypatch, filename, interpreting,
                                                                                 limit):
    from grader.sandbox.kinds.helion.ref_mode import interpreter_limit
    if interpreting:
        monkeypatch.setenv("HELION_INTERPRET", interpreting)
    else:
        monkeypatch.delenv("HELION_INTERPRET", raising=False)
    said = interpreter_limit(_raised_in(filename))
    if limit:
        assert said == "AssertionError inside Helion's own reference code (helion/language/tunable_ops.py, line 1: ``)"
    else:
        assert said is None
    assert interpreter_limit(RuntimeError("hl.signal does not have a ref mode implementation yet")) == \
        "hl.signal does not have a ref mode implementation yet"


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_HELION, reason=NO_HELION)
def test_a_helion_kernel_missing_a_name_left_out_is_told_which_line(tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text((HELION_CORPUS / "puzzle37_softmax_exp2_tunable.py").read_text().replace(
        "LOG2E = math.log2(math.e)", "LOG2E = compute_log2e()"))
    report = grade_many(COURSE, [("puzzle37", path)], Options(device="cpu"))
    said = report.results[0].cases[0].message
    assert "Helion's compiler rejects it at line 26: `e = torch.exp2(shifted * LOG2E)`: LOG2E is not defined " \
           "(line 13, `LOG2E = compute_log2e()`, was not run: `LOG2E` is set by a call (`compute_log2e(...)`)" \
           in said, said
    assert said.endswith("Fix: write that value at module level as data (numbers, lists, dicts, dtypes), or compute "
                         "it inside the kernel.")


def test_a_compile_time_helper_may_read_a_table_the_file_keeps_as_data():
    """A FlagGems-style `@triton.constexpr_function` reading a module-level table of dtypes."""
    from grader.source.host_helpers import problems
    source = HEAD + textwrap.dedent('''
        ACCUMULATOR = {tl.float16: tl.float32, tl.bfloat16: tl.float32, tl.float32: tl.float32}


        @triton.constexpr_function
        def accumulator(dtype):
            return ACCUMULATOR[dtype]
        ''')
    assert problems(source, {"accumulator"}) is None
    assert "`evil`" in problems(source.replace("return ACCUMULATOR[dtype]", "return evil(dtype)"), {"accumulator"}).what


def test_a_puzzles_kernel_whose_configs_were_left_out_names_both_lines(tmp_path):
    path = tmp_path / "configs.py"
    path.write_text((HOSTILE / "puzzle02_autotune.py").read_text().replace(
        '@triton.autotune(configs=[triton.Config({"B0": 16}, num_warps=2), triton.Config({"B0": 64}, num_warps=4)],',
        'CONFIGS = make_configs()\n\n\n@triton.autotune(configs=CONFIGS,'))
    report = grade_many(COURSE, [("puzzle02", path)], Options(device="cpu"))
    said = report.results[0].message
    assert said.startswith("`add_mask2_kernel` in configs.py was not imported: line 12 "
                           "`@triton.autotune(configs=CONFIGS,")
    assert "`configs=CONFIGS` names a value that is not kept (to prune configs, give `prune_configs_by=" in said
    assert "line 9, `CONFIGS = make_configs()`, was not run: `CONFIGS` is set by a call (`make_configs(...)`)" in said
