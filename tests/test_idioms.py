"""Correct idioms pass, wrong ones fail with their reason: compile-time helpers (`@tl.constexpr`
as FlagGems writes it, `@triton.constexpr_function`), `prune_configs_by` with a function of the
same file, and every autotune config graded on every device. Every compile failure says why.

The hostile corpus holds the passing idioms graded end to end (tests/hostile/puzzle02_constexpr_helpers.py,
puzzle29_prune_configs_by.py); tests/wrong_kernels/puzzle02_autotune_one_wrong_config.py and
puzzle29_pruned_to_dividing_block_k.py the failing ones.
"""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from conftest import COURSE, WRONG
from grader.channel.wire import BufferSpec
from grader.judge.options import Options
from grader.judge.session import grade_many
from grader.sandbox.launch import NotGenuine, unwrap
from grader.sandbox.tuning import AutotunerError, launch, tuned_configs
from grader.source import sniffing
from grader.source.definitions import definitions

HEAD = "import triton\nimport triton.language as tl\nfrom triton import constexpr_function\n\n"
KERNEL = '''
@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    tl.store(z_ptr + offsets, x + ten(B0))
'''


def dropped(source: str) -> dict[int, str]:
    return {d.line: d.reason for d in definitions(HEAD + textwrap.dedent(source)).dropped}


# ---- what the definitions keep ----------------------------------------------------------------

@pytest.mark.parametrize("decorator", ["@tl.constexpr", "@triton.constexpr_function", "@constexpr_function",
                                       "@triton.language.constexpr"])
def test_compile_time_helpers_are_kept(decorator):
    assert dropped(f"{decorator}\ndef ten(n):\n    return 10.0\n") == {}


def test_a_helper_decorator_called_with_arguments_is_refused():
    assert dropped("@tl.constexpr(3)\ndef ten(n):\n    return 10.0\n") == {
        5: "`@tl.constexpr` takes no arguments: write it bare, above `def`"}


AUTOTUNE = '''
def keep(configs, named_args, **kwargs):
    return configs


@triton.autotune(configs=[triton.Config({"B0": 16})], key=["N0"], prune_configs_by={PRUNE})
@triton.jit
def k(x_ptr, N0, B0: tl.constexpr):
    pass
'''


@pytest.mark.parametrize("prune, reason", [
    ('"early_config_prune": keep', None),
    ('"perf_model": keep', "`prune_configs_by`'s `perf_model` would run your code to time configs"),
    ('"early_config_prune": lambda c, a: c', '`prune_configs_by` must be written `{"early_config_prune": fn}`'),
    ('"early_config_prune": triton.jit', '`prune_configs_by` must be written `{"early_config_prune": fn}`'),
    ('"early_config_prune": constexpr_function', '`prune_configs_by` must be written'),
])
def test_prune_configs_by_takes_a_function_of_the_file(prune, reason):
    found = dropped(AUTOTUNE.replace("PRUNE", prune))
    if reason is None:
        assert found == {}
    else:
        assert len(found) == 1 and next(iter(found.values())).startswith(reason), found


LIGER = '''
try:
    from triton.language.extra.libdevice import tanh
except ModuleNotFoundError:
    from triton.language.extra.cuda.libdevice import tanh


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": bn}, num_stages=ns, num_warps=nw)
        for bn in [1024, 2048]
        for ns in [1, 2]
        for nw in range(4, 9, 4)
    ],
    key=["N"],
)
@triton.jit
def k(x_ptr, N, BLOCK_N: tl.constexpr):
    pass
'''


def test_liger_imports_libdevice_in_a_try_and_writes_configs_as_a_comprehension():
    assert dropped(LIGER) == {}


@pytest.mark.parametrize("change, says", [
    (("except ModuleNotFoundError:", "except Exception:"), "`try` at module level is not run"),
    (("    from triton.language.extra.cuda.libdevice import tanh", "    tanh = evil()"), "`try` at module level"),
    (("for bn in [1024, 2048]", "for bn in evil()"), "a comprehension of configs may loop only over literal lists"),
    (("for bn in [1024, 2048]", "for bn in [1024, 2048] if bn > evil()"), "a comprehension of configs may loop only"),
    (("num_warps=nw)", "num_warps=evil(nw))"), "the arguments of `triton.Config` must be literals or the"),
    (("range(4, 9, 4)", "range(4, 400)"), "the comprehension makes 1584 configs: the grader grades every config, "
                                          "so keep it to 64"),
])
def test_only_what_runs_nothing_of_the_learners_is_kept(change, says):
    found = dropped(LIGER.replace(*change))
    assert any(reason.startswith(says) for reason in found.values()), found


# ---- what compile-time helpers and prune functions may do (read before they run) -----------------

FLAGGEMS = '''
from triton.language.core import _unwrap_if_constexpr
BITS = 32


@tl.constexpr
def accumulator(dtype: tl.dtype) -> tl.dtype:
    if dtype.is_bf16() or dtype.is_fp16():
        return tl.float32
    if dtype.is_int():
        return tl.int64
    return dtype


@tl.constexpr
def int_type(num_bits: tl.constexpr, signed: tl.constexpr) -> tl.dtype:
    num_bits = _unwrap_if_constexpr(num_bits)
    return tl.core.get_int_dtype(num_bits, signed)


@triton.constexpr_function
def ten(n):
    total = 0
    for i in range(n):
        total += 1
    return [10.0, 10.0][total % 2] + max(0, BITS - 32) + float(len([b for b in range(2)]) - 2)
'''


def test_library_helpers_pass_the_reading():
    assert sniffing.find(HEAD + FLAGGEMS + KERNEL, "add_kernel") is None


@pytest.mark.parametrize("body, says", [
    ("return 10.0 if isinstance(n, int) else 11.0", "`isinstance` is not one of its arguments"),
    ("return 10.0 + len(str(n)) - len(str(n))", "`str` is not one of its arguments"),
    ("return 10.0 if n is 16 else 11.0", "`is` compares identities"),
    ('return float(f"{n}"[:2] == "16")', "an f-string shows a value's type"),
    ("return n.__class__", "`.__class__` reaches outside"),
    ("return tl.core.builtins.len([]) + 10.0", "`.builtins` reaches outside"),
    ("return helper(n)", "`helper` is not one of its arguments"),
    ("return 10.0 + interpreter_builder.grid_dim[0]", "`interpreter_builder` is not one of its arguments"),
    ("try:\n        return n.value\n    except AttributeError:\n        return 10.0", "`try` statements are not allowed"),
    ("import os\n    return 10.0", "`import` statements are not allowed"),
])
def test_a_helper_that_could_tell_the_interpreter_from_the_compiler_is_refused(body, says):
    source = HEAD + "from triton.runtime.interpreter import interpreter_builder\n\n\n" + \
        f"def helper(n):\n    return n\n\n\n@tl.constexpr\ndef ten(n):\n    {body}\n" + KERNEL
    finding = sniffing.find(source, "add_kernel")
    assert finding is not None and finding.function == "ten", body
    text = sniffing.message(finding)
    assert says in text, text
    assert text.startswith(f"`ten` at line {finding.line}: `")
    assert "A compile-time helper (`@tl.constexpr`, `@triton.constexpr_function`) runs as Python in the " \
           "interpreter and in Triton's compiler, so the grader reads it first" in text


def test_a_helper_called_only_through_another_helper_is_read_too():
    source = HEAD + ("@tl.constexpr\ndef inner(n):\n    return type(n)\n\n\n"
                     "@tl.constexpr\ndef ten(n):\n    return inner(n) and 10.0\n") + KERNEL
    finding = sniffing.find(source, "add_kernel")
    assert finding is not None and finding.function == "inner" and "`type`" in finding.what


def test_a_prune_function_is_read_like_a_helper():
    source = HEAD + "import os\n\n" + AUTOTUNE.replace("PRUNE", '"early_config_prune": keep').replace(
        "    return configs", "    return configs if os.environ.get('TRITON_INTERPRET') else configs[:1]")
    finding = sniffing.find(source, "k")
    assert finding is not None and finding.function == "keep"
    assert sniffing.message(finding).startswith("`keep` at line 9: `return configs if os.environ.get(")
    assert "`.environ` reaches outside the helper's values" in sniffing.message(finding)
    assert "An `early_config_prune` function runs as Python at every launch, in the interpreter and on a GPU " \
           "alike, so the grader reads it first" in sniffing.message(finding)


# ---- the configs a launch grades (grader/sandbox/tuning.py) -------------------------------------

PRUNED = '''
import triton
import triton.language as tl

SEEN = []


def keep(configs, named_args, **kwargs):
    SEEN.append((named_args["x_ptr"].device.type, named_args["N0"], sorted(kwargs)))
    configs[0].kwargs["EXTRA"] = 1  # a copy: the kernel's own configs never change
    return [c for c in configs if c.kwargs["B0"] <= named_args["N0"]] if named_args["N0"] > 0 else RESULT


@triton.autotune(configs=[triton.Config({"B0": 16}), triton.Config({"B0": 64}), triton.Config({"B0": 256})],
                 key=["N0"], prune_configs_by={"early_config_prune": keep}, reset_to_zero=["z_ptr"])
@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    pass
'''


def _load(tmp_path: Path, source: str, result: str = "[]"):
    path = tmp_path / "pruned.py"
    path.write_text(source.replace("RESULT", result))
    spec = importlib.util.spec_from_file_location("pruned_for_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUFFERS = [BufferSpec("x", "input", "float32", (200,), (1,), 0, 800, 800, "x_ptr"),
           BufferSpec("z", "output", "float32", (200,), (1,), 0, 800, 800, "z_ptr")]


def test_prune_sees_tensors_without_values_and_copies_of_the_configs(tmp_path):
    module = _load(tmp_path, PRUNED)
    layers = unwrap(module.add_kernel, "add_kernel")
    kept = tuned_configs(layers, BUFFERS, {"N0": 100}, torch)
    assert [c.kwargs["B0"] for c in kept] == [16, 64]
    assert kept[0] is layers.configs[0] and layers.configs[0].kwargs == {"B0": 16}
    assert module.SEEN == [("meta", 100, ["N0"])]


@pytest.mark.parametrize("result, says", [
    ("[]", "`keep` (early_config_prune) kept no config for this launch, and Triton stops with \"No valid "
           "autotuner configs after pruning\": keep at least one for every size"),
    ("[triton.Config({'B0': 32})]", "`keep` (early_config_prune) returned a config it was not given: it must "
                                    "return a list of some of the configs it is given"),
    ("None", "`keep` (early_config_prune) returned a NoneType"),
])
def test_a_prune_that_keeps_nothing_usable_says_so(tmp_path, result, says):
    layers = unwrap(_load(tmp_path, PRUNED, result).add_kernel, "add_kernel")
    with pytest.raises(AutotunerError) as raised:
        tuned_configs(layers, BUFFERS, {"N0": 0}, torch)
    assert str(raised.value).startswith(says), str(raised.value)
    assert raised.value.line == 8 and raised.value.source == "def keep(configs, named_args, **kwargs):"


def test_each_config_is_launched_below_the_autotuner_with_reset_to_zero(tmp_path):
    layers = unwrap(_load(tmp_path, PRUNED).add_kernel, "add_kernel")
    calls = []

    class Inner:
        def __getitem__(self, grid):
            return lambda *args, **named: calls.append((grid, args[1].clone(), named))
    layers.autotuner.fn = Inner()  # the layer the autotuner itself launches
    z = torch.full((4,), float("nan"))
    launch(layers, "grid", (torch.ones(4), z), {"N0": 4}, layers.configs[1])
    grid, zeroed, named = calls[0]
    assert grid == "grid" and torch.equal(zeroed, torch.zeros(4))
    assert named["B0"] == 64 and named["N0"] == 4 and "num_warps" in named


def test_on_a_gpu_a_config_too_big_for_it_is_passed_over_as_the_tuner_would():
    from triton.runtime.errors import OutOfResources

    from grader.sandbox.tuning import tuner_skips
    try:
        try:
            raise OutOfResources(262144, 232448, "shared memory")
        except OutOfResources as exc:
            raise RuntimeError("launch failed") from exc
    except RuntimeError as wrapped:
        assert tuner_skips(wrapped)
    assert not tuner_skips(ValueError("wrong values"))


def test_a_prune_from_another_file_is_refused(tmp_path):
    (tmp_path / "other.py").write_text("def keep(configs, named_args, **kwargs):\n    return configs\n")
    sys.path.insert(0, str(tmp_path))
    try:
        module = _load(tmp_path, PRUNED.replace("\ndef keep(", "\nfrom other import keep\n\n\ndef unused("))
    finally:
        sys.path.remove(str(tmp_path))
    with pytest.raises(NotGenuine) as raised:
        unwrap(module.add_kernel, "add_kernel")
    assert "an early_config_prune from outside its file" in str(raised.value)
    assert '`prune_configs_by={"early_config_prune": fn}` with `fn` defined in the same file' in str(raised.value)


# ---- graded end to end -----------------------------------------------------------------------------

JIT_HELPER = '''
@triton.jit
def ten(x, n):
    return x + tl.arange(0, n)


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    tl.store(z_ptr + offsets, ten(x, N0))
'''
CONSTEXPR_HELPER = '''
@tl.constexpr
def ten(n):
    return 10.0 + n.bit_length() - n.bit_length()


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    offsets = tl.arange(0, B0)
    x = tl.load(x_ptr + offsets)
    tl.store(z_ptr + offsets, x + ten(B0))
'''


@pytest.mark.slow
def test_a_failing_helper_names_itself_its_line_and_the_reason(tmp_path):
    files = {}
    for name, body in (("jit_helper.py", JIT_HELPER), ("constexpr_helper.py", CONSTEXPR_HELPER)):
        files[name] = tmp_path / name
        files[name].write_text(HEAD + body.lstrip("\n"))
    report = grade_many(COURSE, [("puzzle01", files["jit_helper.py"]), ("puzzle01", files["constexpr_helper.py"])],
                        Options(), jobs=2)
    jit, constexpr = (r.message for r in report.results)
    assert "at line 14: `tl.store(z_ptr + offsets, ten(x, N0))`: in `ten` at line 7: `return x + tl.arange(0, n)`: " \
           "arange's arguments must be of type tl.constexpr. Fix: tl.arange bounds must be compile-time" in jit, jit
    assert "^." not in jit
    assert "at line 14: `tl.store(z_ptr + offsets, x + ten(B0))`: in `ten` at line 7: `return 10.0 + " \
           "n.bit_length() - n.bit_length()`: AttributeError(\"'constexpr' object has no attribute 'bit_length'\"). Fix: a " \
           "`@tl.constexpr` helper is given `tl.constexpr` objects when compiled (plain values in the interpreter): " \
           "decorate it `@triton.constexpr_function` instead" in constexpr, constexpr


@pytest.mark.slow
def test_the_same_helper_as_constexpr_function_passes(tmp_path):
    path = tmp_path / "constexpr_function.py"
    path.write_text(HEAD + CONSTEXPR_HELPER.lstrip("\n").replace("@tl.constexpr", "@triton.constexpr_function"))
    result = grade_many(COURSE, [("puzzle01", path)], Options()).results[0]
    assert result.status == "pass", result.message


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: there the autotuner would pick one config")
def test_on_a_gpu_every_config_is_graded_too():
    path = WRONG / "puzzle02_autotune_one_wrong_config.py"
    result = grade_many(COURSE, [("puzzle02", path)], Options(device="cuda")).results[0]
    assert result.status == "fail"
    assert "with config {B0=128, num_warps=4}: " in result.message and "never written" in result.message


def test_a_notebook_kernel_brings_its_helpers_and_its_prune(tmp_path):
    """check() in a notebook writes the kernel and what it needs into a module (grader.source.capture):
    the prune above the autotuner that names it, the helpers with their decorators, and names
    imported from Triton."""
    from grader.source.capture import source_of
    hostile = Path(__file__).parent / "hostile"
    modules = {}
    for name in ("puzzle29_prune_configs_by", "puzzle02_constexpr_helpers"):
        spec = importlib.util.spec_from_file_location(f"captured_{name}", hostile / f"{name}.py")
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    pruned = source_of(modules["puzzle29_prune_configs_by"].matmul_kernel)
    assert pruned.index("def keep_fitting_tiles(") < pruned.index("@triton.autotune(")
    helpers = source_of(modules["puzzle02_constexpr_helpers"].add_mask2_kernel)
    for text in ("@tl.constexpr\ndef accumulator_type(dtype):", "@triton.constexpr_function\ndef lanes(block):",
                 "from triton.language.core import _unwrap_if_constexpr", "OFFSET = 10.0"):
        assert text in helpers, text
    for i, text in enumerate((pruned, helpers)):
        assert definitions(text).dropped == ()
        path = tmp_path / f"captured{i}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"captured{i}", path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))  # the prune is defined before the decorator names it
