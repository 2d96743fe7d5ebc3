"""The Helion kind (grader.judge.kinds.helion, grader.sandbox.kinds.helion.run): a @helion.kernel graded in
Helion's interpreter and, tile by tile, as the Triton Helion generates, that Triton compiled
for sm_90. The corpus (tests/wrong_kernels/puzzle35_*) is graded by test_wrong_kernels.py; here
are the rest: the pilot's solution and stub, what is not a Helion kernel, what Helion's
interpreter cannot run, and the pieces that need no helion at all (they run everywhere)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import COURSE, HAVE_HELION, NO_HELION, ROOT
from grader.judge import failures
from grader.judge.failures import FailureKind
from grader.judge.kinds.helion import failures as helion_failures
from grader.judge.options import Options
from grader.judge.results import Status

needs_helion = pytest.mark.skipif(not HAVE_HELION, reason=NO_HELION)

INLINE_TRITON = '''\
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        a = x[tile]
        b = y[tile]
        z[tile] = hl.inline_triton("{0} + {1}", args=(a, b), output_like=a)
    return z
'''

INLINE_PTX = INLINE_TRITON.replace(
    '"{0} + {1}"', '\'tl.inline_asm_elementwise("add.f32 $0, $1, $2;", "=r,r,r", [{0}, {1}], '
    'dtype=tl.float32, is_pure=True, pack=1)\'')

PLAIN = '''\
import torch


def helion_add(x, y):
    return x + y
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The pilot's solution and stub, a plain function and a kernel Helion's interpreter cannot
    run, graded in one run (each worker imports helion once: seconds)."""
    from grader.judge.session import grade_many
    folder = tmp_path_factory.mktemp("helion")
    (folder / "inline.py").write_text(INLINE_TRITON)
    (folder / "plain.py").write_text(PLAIN)
    (folder / "inline_ptx.py").write_text(INLINE_PTX)
    targets = {"solution": COURSE.solution_file("puzzle35"), "stub": COURSE.puzzle_file("puzzle35"),
               "inline": folder / "inline.py", "plain": folder / "plain.py",
               "inline_ptx": folder / "inline_ptx.py"}
    report = grade_many(COURSE, [("puzzle35", path) for path in targets.values()], Options(timeout=60), jobs=2)
    return dict(zip(targets, report.results))


@pytest.mark.slow
@needs_helion
def test_the_pilot_solution_passes_and_its_triton_compiles_for_sm_90(graded):
    result = graded["solution"]
    assert result.status == Status.PASS, result.message
    assert result.checks["gpu_compile"].passed, result.checks["gpu_compile"].message
    assert "Helion's Triton compiles for sm_90" in result.checks["gpu_compile"].message
    # what the kernel became: Helion's Triton, with the case's tile size and its mask
    assert "@triton.jit" in result.generated and "_BLOCK_SIZE_0 = tl.constexpr(32)" in result.generated
    assert "mask_0 = indices_0 < 200" in result.generated


@pytest.mark.slow
@needs_helion
def test_the_pilot_stub_is_not_attempted(graded):
    assert graded["stub"].status == Status.NOT_ATTEMPTED, graded["stub"].message


@pytest.mark.slow
@needs_helion
def test_a_plain_function_is_told_what_a_helion_kernel_is(graded):
    result = graded["plain"]
    assert result.status == Status.FAIL
    assert result.checks["load"].kind == FailureKind.SIGNATURE
    assert "`helion_add` is a plain function, not a Helion kernel" in result.message
    assert "@helion.kernel" in result.message and "hl.tile" in result.message


@pytest.mark.slow
@needs_helion
def test_inline_triton_is_judged_by_the_tiled_run_where_helions_interpreter_lacks_it(graded):
    """Helion's interpreter has no hl.inline_triton; its Triton runs in the tiled run, which judges."""
    result = graded["inline"]
    assert result.status == Status.PASS, result.message


@pytest.mark.slow
@needs_helion
def test_what_neither_interpreter_can_run_is_not_a_fail(graded):
    result = graded["inline_ptx"]
    assert result.status == Status.INTERPRETER_LIMIT, result.message
    assert "`tl.inline_asm_elementwise` (\"add.f32 $0, $1, $2;\") runs PTX" in result.message
    assert "not a mistake of yours" in result.message and "line 12" in result.message


@pytest.mark.slow
@needs_helion
def test_grading_a_triton_puzzle_never_imports_helion():
    """Neither the grader's process nor the worker's: Helion's import costs seconds, and only its
    track pays it. The worker's side runs as a worker of the zygote does (TRITON_INTERPRET set,
    then prepare), loading and running puzzle 1's solution."""
    script = textwrap.dedent(f'''
        import os, sys
        os.environ["TRITON_INTERPRET"] = "1"
        sys.path.insert(0, {str(ROOT)!r})
        from grader.course.loader import Course
        from grader.judge.options import Options
        from grader.judge.session import grade_many
        from grader.sandbox.worker import Worker, prepare
        from grader.channel import wire
        course = Course(__import__("pathlib").Path({str(COURSE.root)!r}))
        result = grade_many(course, [("puzzle01", course.solution_file("puzzle01"))], Options()).results[0]
        prepare("cpu")
        worker = Worker("cpu", os.open(os.devnull, os.O_WRONLY))
        loaded, _ = worker.op_load(wire.Load(file=str(course.solution_file("puzzle01")), kernel="add_kernel"), [])
        print(result.status, type(loaded).__name__, sorted(m for m in sys.modules if m.split(".")[0] == "helion"))
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "pass Loaded []"


# ---- what needs no helion -------------------------------------------------------------------
@pytest.mark.slow
@needs_helion
def test_reading_a_helion_puzzle_file_does_not_import_helion():
    """The command reads a Helion puzzle file for its PUZZLE with helion stood in for (its import
    is seconds of CPU, and only the worker runs the kernel); afterwards helion imports for real."""
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from grader.course.loader import Course
        course = Course(__import__("pathlib").Path({str(COURSE.root)!r}))
        puzzle = course.puzzle("puzzle42")
        print(puzzle.kernel, sorted(m for m in sys.modules if m.split(".")[0] == "helion"))
        import helion.language as hl
        print(type(hl.tile).__module__.split(".")[0], hl.__file__ is not None)
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines() == ["helion_causal_attention []", "builtins True"]


def test_only_the_kernels_of_helions_module_go_to_the_compile_check():
    from grader.judge.kinds.helion.gpu_compile import kernel_only
    generated = textwrap.dedent('''\
        import triton
        import triton.language as tl
        from helion.runtime import default_launcher as _default_launcher

        _BLOCK_SIZE_0 = tl.constexpr(32)

        @triton.jit
        def _helion_add(x, z):
            tl.store(z, tl.load(x))

        def add(x, *, _launcher=_default_launcher):
            z = torch.empty_like(x)
            _launcher(_helion_add, (1,), x, z, num_warps=4, num_stages=1)
            return z
    ''')
    kept = kernel_only(generated)
    assert "def _helion_add(x, z):" in kept and "_BLOCK_SIZE_0 = tl.constexpr(32)" in kept
    assert "def add(" not in kept and "default_launcher" not in kept and "_launcher(" not in kept
    # line for line: a compile error's line is the generated module's
    assert kept.splitlines().index("def _helion_add(x, z):") == generated.splitlines().index("def _helion_add(x, z):")


def test_the_learners_module_helions_host_code_reads_is_not_imported_by_the_compile_check():
    """A kernel reading a module-level constant: Helion passes it to the Triton kernel as an
    argument, and imports the learner's module (by the worker's name for it) for the host code."""
    from grader.judge.kinds.helion.gpu_compile import kernel_only
    generated = textwrap.dedent('''\
        import triton
        import triton.language as tl
        import _learner_23d92e7fffee as _source_module

        @triton.jit
        def _helion_softmax(x, z, _source_module_attr_LOG2E):
            tl.store(z, tl.load(x) * _source_module_attr_LOG2E)

        def softmax(x, *, _launcher=_default_launcher):
            _launcher(_helion_softmax, (1,), x, z, _source_module.LOG2E, num_warps=4, num_stages=1)
    ''')
    kept = kernel_only(generated)
    assert "_learner_" not in kept and "def _helion_softmax(" in kept


def test_a_default_argument_that_is_a_lambda_or_a_function_above_is_imported():
    """Helion's examples/matmul.py: `epilogue=lambda acc, tile: acc`; or a function of the file."""
    from grader.source.definitions import definitions
    kept = definitions("import helion\n\ndef ident(acc, tile):\n    return acc\n\n@helion.kernel\n"
                       "def k(x, e=lambda acc, tile: acc, f=ident):\n    return x\n")
    assert not kept.dropped, kept.dropped
    for bad in ("e=open('x')", "e=lambda a, b=open('x'): a", "e=later"):
        dropped = definitions(f"import helion\n\n@helion.kernel\ndef k(x, {bad}):\n    return x\n\n"
                              f"def later():\n    pass\n").dropped
        assert any("default value of `e` is not a literal" in d.reason for d in dropped), bad


def test_helion_messages_name_the_line_and_the_fix():
    outside = failures.word(helion_failures.HostWork("helion_add", 14, "s = x + y"))
    assert "computed with PyTorch outside its `hl.tile` loops (line 14: `s = x + y`)" in outside
    assert "Triton kernel" in outside and "Fix: move the computation into the `hl.tile` loop" in outside
    none = failures.word(helion_failures.HostWork("helion_add", 9, "def helion_add(...)", loops=False))
    assert "has no `hl.tile` loop" in none and "Fix: put the work inside" in none
    rejected = failures.word(helion_failures.HelionRejected(
        "Helion's compiler: RuntimeError: The size of tensor a (u0) must match the size of tensor b (200)",
        16, "z[tile] = x[tile] + y"))
    assert rejected.startswith("the kernel does not compile for a GPU (sm_90): Helion's compiler rejects it at line 16")
    assert "Fix: a tile's values (`x[tile]`) and a whole tensor (`x`) do not broadcast" in rejected
    count = failures.word(helion_failures.ReturnCount("helion_add", 2, ("z",)))
    assert count == "`helion_add` returned 2 values; expected 1 (z). Fix: `return z`, the tensors the kernel " \
                    "allocated and filled."


def test_helions_decorator_is_kept_by_definitions_only_imports():
    from grader.source.definitions import definitions
    kept = definitions('import helion\n\n@helion.kernel(autotune_effort="none")\ndef k(x):\n    return x\n')
    assert not kept.dropped and "@helion.kernel" in kept.text
    written = definitions('import helion\n\n@helion.kernel(config=helion.Config(block_sizes=[32], num_warps=4))\n'
                          'def k(x):\n    return x\n')
    assert not written.dropped
    config = definitions('import helion\nc = object()\n\n@helion.kernel(config=c)\ndef k(x):\n    return x\n')
    assert any("option `config` of `helion.kernel` must be written out as `helion.Config(" in d.reason
               for d in config.dropped)


def test_without_helion_its_puzzles_are_unsupported_not_failed(monkeypatch):
    """A course file that imports helion where it is not installed: the puzzle is unsupported,
    with the extra to install (the second CI stack, with triton 3.9, has no helion)."""
    from grader.course import loader
    from grader.judge.session import load_failure
    monkeypatch.setitem(sys.modules, "helion", None)  # import helion -> ModuleNotFoundError
    loader.load_puzzle.cache_clear()
    try:
        error = COURSE.load_error("puzzle35")
    finally:
        loader.load_puzzle.cache_clear()
    assert error is not None and error.kind == "unsupported"
    assert "needs helion, which is not installed here: `pip install -e '.[helion]' -c constraints.txt`" \
        in error.message
    result = load_failure(COURSE, "puzzle35", COURSE.puzzle_file("puzzle35"), error, Options())
    assert result.status == Status.UNSUPPORTED and not result.checks


def test_the_doctor_says_how_to_add_helion():
    from grader.app.doctor import package_finding
    from grader.course.kinds import SPECS
    missing = package_finding(SPECS["helion"], None)
    assert missing.severity == "warning" and missing.message == (
        "helion is not installed: the Helion track's puzzles are graded `unsupported` (the other tracks do not "
        "need it).")
    assert missing.fix == "pip install -e '.[helion]' -c constraints.txt"


def test_a_helion_puzzle_is_benched_and_named_as_such():
    from grader.judge.kinds import named
    assert not named("helion").bench.missing and "compiled by Helion" in named("helion").bench.what
    assert json.dumps(named("helion").called) == '"a Helion puzzle"'


UNWRITTEN_TAIL = '''\
import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        if tile.begin + tile.block_size <= x.size(0):
            z[tile] = x[tile] + y[tile]
    return z
'''


@pytest.mark.slow
@needs_helion
def test_bench_times_the_kernel_helion_compiled_and_checks_what_it_returned(tmp_path):
    """--bench's test path: the kernel compiled by Helion with the Bench's one config, each
    launch run in Triton's interpreter, its outputs judged; a kernel that leaves the tail
    tile unwritten is caught on a call whose outputs reuse the block the call before wrote."""
    from grader.judge.bench.run import run_bench
    from grader.judge.session import Grading
    (tmp_path / "tail.py").write_text(UNWRITTEN_TAIL)
    solution = COURSE.solution_file("puzzle35")
    with Grading(COURSE, [solution, tmp_path / "tail.py"], Options(device="cpu", compile_check=False),
                 now=False) as grading:
        good = run_bench(grading, "puzzle35", solution, sizes=[{"N0": 5000}], calls=2)
        bad = run_bench(grading, "puzzle35", tmp_path / "tail.py", sizes=[{"N0": 5000}], calls=2)
    assert good.ok, good.error
    row = good.rows[0]
    assert row.correct and row.ms > 0 and row.baseline_ms > 0 and good.baseline == "torch.add"
    assert "compiled by Helion" in good.what and good.blocks == {"B0": 1024}
    assert bad.ok and not bad.rows[0].correct and "`z`" in bad.rows[0].wrong


# ---- Helion's own examples, and kernels whose tiled run cannot run ------------------------
CORPUS = ROOT / "tests" / "helion_corpus"
EXAMPLES = sorted(CORPUS.glob("puzzle*.py"))
UNTILED = sorted((CORPUS / "untiled").glob("puzzle*.py"))
LOWERING = sorted((CORPUS / "lowering").glob("puzzle*.py"))


@pytest.fixture(scope="module")
def corpus():
    """Every corpus file graded in one run (two workers): Helion's examples and the untiled."""
    from grader.judge.session import grade_many
    files = EXAMPLES + UNTILED + LOWERING
    report = grade_many(COURSE, [(f.name[:8], f) for f in files], Options(timeout=300), jobs=2)
    return {f: r for f, r in zip(files, report.results)}


def _host_work_xfail(path, result):
    if path.name == "puzzle39_layer_norm.py" and "`if bias is not None:`" in result.message:
        pytest.xfail("host-work check: helion-host branch")


@pytest.mark.slow
@needs_helion
@pytest.mark.parametrize("path", EXAMPLES, ids=[f.stem for f in EXAMPLES])
def test_helions_own_examples_pass(path, corpus):
    """Each names the example and commit it comes from; adapted only to the puzzle's signature."""
    head = path.read_text().splitlines()[0]
    assert head.startswith(("# From pytorch/helion examples/", "# Written for this corpus, after pytorch/helion")), head
    result = corpus[path]
    _host_work_xfail(path, result)
    assert result.status == Status.PASS, result.message


@pytest.mark.slow
@needs_helion
def test_a_tile_size_the_kernel_fixes_is_graded_at_that_size_and_said(corpus):
    result = corpus[CORPUS / "puzzle35_add_fixed_block.py"]
    assert result.status == Status.PASS, result.message
    assert "the kernel fixes its tile size: `tile` at 64: graded at that size, its tail runs in case" in result.message


@pytest.mark.slow
@needs_helion
@pytest.mark.parametrize("path", UNTILED, ids=[f.stem for f in UNTILED])
def test_a_wrong_kernel_whose_tiled_run_cannot_run_never_passes(path, corpus):
    """Right in Helion's interpreter (one tile per loop), wrong as tiled: where Triton's interpreter
    cannot run the generated code the case is the interpreter's limit, with where and why."""
    result = corpus[path]
    assert result.status in (Status.FAIL, Status.INTERPRETER_LIMIT), result.message
    if result.status == Status.INTERPRETER_LIMIT:
        assert "could not run the Triton Helion generated for this case, tile by tile" in result.message
        assert "not judged on Helion's own interpreter alone" in result.message
        assert "line " in result.message and "--device cuda" in result.message
    else:
        assert "tile by tile" in result.message, result.message


@pytest.mark.slow
@needs_helion
@pytest.mark.parametrize("path", LOWERING, ids=[f.stem for f in LOWERING])
def test_where_helions_lowering_and_its_interpreter_disagree_both_are_shown(path, corpus):
    result = corpus[path]
    assert result.status == Status.FAIL, result.message
    assert "Helion's interpreter, which runs each hl.tile loop as one tile, gives the spec's values" in result.message
    assert "tiled " in result.message and "interpreter " in result.message
    assert "the compiler may be at fault" in result.message


@pytest.mark.slow
@needs_helion
def test_a_cases_tile_sizes_reach_the_kernels_own_loops_whatever_their_number(tmp_path):
    """Each tunable block size takes the case's size for a loop of the same extent, in order; an
    extent the case does not tile gets a power of two below it (a tail); a fixed size is kept."""
    import importlib.util

    import torch

    from grader.sandbox.kinds.helion.config import case_config
    from grader.sandbox.kinds.helion.run import _compiler_copy
    (tmp_path / "kernels.py").write_text(textwrap.dedent('''\
        import helion
        import helion.language as hl
        import torch

        @helion.kernel(autotune_effort="none")
        def chunks(x):  # two loops where the case gives three sizes
            z = torch.empty_like(x)
            for rows in hl.tile(x.size(0)):
                for cols in hl.tile(x.size(1)):
                    z[rows, cols] = x[rows, cols] * 2
            return z

        @helion.kernel(autotune_effort="none")
        def passes(x):  # three passes over the row, the block size registered
            z = torch.empty_like(x)
            bn = hl.register_block_size(x.size(1))
            for rows in hl.tile(x.size(0)):
                for cols in hl.tile(x.size(1), block_size=bn):
                    z[rows, cols] = x[rows, cols]
                for cols in hl.tile(x.size(1)):
                    z[rows, cols] += 1
                for cols in hl.tile(x.size(1)):
                    z[rows, cols] += 1
            return z

        @helion.kernel(autotune_effort="none")
        def fixed(x):
            z = torch.empty_like(x)
            for rows, cols in hl.tile([x.size(0), x.size(1)], block_size=[2, 64]):
                z[rows, cols] = x[rows, cols]
            return z
    '''))
    spec = importlib.util.spec_from_file_location("kernels_for_tiles", tmp_path / "kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = torch.randn(6, 200)

    def config(kernel, blocks, extents):
        return case_config(_compiler_copy(kernel).bind((x,)), blocks, extents, ("B0", "B1", "B2"))

    chunks, note, _ = config(module.chunks, (4, 64, 32), (6, 200, 200))
    assert chunks.config["block_sizes"] == [4, 64] and "`cols`: B1=64" in note
    passes, note, _ = config(module.passes, (4, 64, 32), (6, 200, 200))
    assert passes.config["block_sizes"] == [64, 4, 32, 32], note  # the registered size first; a third pass takes B2 again
    untold, note, _ = config(module.chunks, (4,), (6,))
    assert untold.config["block_sizes"] == [4, 128] and "over 200, which the case does not tile" in note
    _, note, kept = config(module.fixed, (4, 64, 32), (6, 200, 200))
    assert [(f.extent, f.size) for f in kept] == [(6, 2), (200, 64)] and "64, fixed by the kernel" in note


def test_a_fixed_tile_size_no_case_leaves_a_tail_of_gets_one_more_case():
    from types import SimpleNamespace

    from grader.judge.kinds.helion.run import HelionRunner
    puzzle = COURSE.puzzle("puzzle35")
    exact = next(c for c in puzzle.cases if c.name == "exact_multiple")  # N0=256
    runner = HelionRunner(SimpleNamespace(puzzle=puzzle, options=Options()))
    runner.fixed = {("`tile`", 64): {"tails": [], "whole": [(exact, 256)]}}
    more = runner.tail_cases()
    assert [(c.name, dict(c.sizes)) for c in more] == [("exact_multiple_tail_of_tile", {"N0": 257})]
    assert "no case has a tail of it" in runner.pass_note()
    assert runner.next_pass({}, aborted=False) == more and runner.next_pass({}, aborted=False) == []  # once
    runner.fixed[("`tile`", 64)]["tails"].append((more[0], 257))
    assert runner.tail_cases() == []
    assert "`tile` at 64: graded at that size, its tail runs in case exact_multiple_tail_of_tile" in runner.pass_note()


def test_helion_words_for_a_dropped_dimension_and_a_wrong_dtype():
    dropped = failures.word(helion_failures.HelionRejected(
        "Helion's compiler: RuntimeError: The size of tensor a (u1) must match the size of tensor b (u0) at "
        "non-singleton dimension 1", 12, "e = torch.exp(row - torch.amax(row, dim=1))"))
    assert "a reduction dropped its dimension" in dropped and "keepdim=True" in dropped and "[:, None]" in dropped
    assert "a whole tensor" not in dropped
    dtype = failures.word(helion_failures.HelionWrongOutput("helion_softmax", "z", (8, 1000), "float32",
                                                     (8, 1000), "float16"))
    assert dtype.startswith("`helion_softmax` returned `z` as (8, 1000) float32, expected (8, 1000) float16")
    assert "allocate it as float16" in dtype and "reshape" not in dtype and "forward" not in dtype
    both = failures.word(helion_failures.LoweringDisagrees("y", "wrong values in `y`", (((2, 0), 1.28273, 1.28311),)))
    assert "(2, 0): tiled 1.28273, interpreter 1.28311" in both and "the compiler may be at fault" in both


def test_a_tiled_run_that_cannot_run_is_the_interpreters_limit_at_the_learners_line(tmp_path):
    """Whatever Triton's interpreter lacks (today's libdevice function, tomorrow's op): the
    generated line that raised, the learner's line Helion lowered it from, never a pass."""
    from grader.sandbox.kinds.helion.tiled import tiled_limit
    learner = tmp_path / "mine.py"
    learner.write_text("\n" * 15 + "        z[tile] = x[tile] + torch.erfinv(x[tile] * 0)\n")
    generated = tmp_path / "generated.py"
    generated.write_text("def kernel():\n    # src[mine.py:16]: z[tile] = x[tile] + torch.erfinv(x[tile] * 0)\n"
                         "    v_5 = lacking(v_4)\n")
    namespace = {"lacking": lambda v: 1 / 0, "v_4": 0}
    exec(compile(generated.read_text(), str(generated), "exec"), namespace)
    try:
        namespace["kernel"]()
    except ZeroDivisionError as error:
        limit = tiled_limit(error, {str(generated)}, str(learner), "`tile`: B0=32")
        host = tiled_limit(error, set(), str(learner), "`tile`: B0=32")  # no launch began
    assert limit.kind == "interpreter_limit" and limit.line == 16
    assert limit.source == "z[tile] = x[tile] + torch.erfinv(x[tile] * 0)"
    assert "could not run the Triton Helion generated for this case, tile by tile (`tile`: B0=32)" in limit.error
    assert "`v_5 = lacking(v_4)`, is Helion's lowering of your step" in limit.error
    assert "not judged on Helion's own interpreter alone" in limit.error
    assert host.kind == "exception" and "raised before launching it (on a GPU too)" in host.error


def test_the_sm_90_compile_takes_each_launch_as_its_case_brings_it_and_keeps_the_first_refusal():
    """Beside the cases: every launch queued is taken (none left behind to block), the first
    refusal is the check's result, nothing after it is compiled; no launch starts no checker."""
    import contextlib
    import queue

    from grader.channel import wire
    from grader.channel.kinds import helion as helion_wire
    from grader.judge.kinds.helion.gpu_compile import compile_generated
    asked = []

    class Fake:  # the grader, as the check asks it
        options = Options()

        @contextlib.contextmanager
        def checker_session(self):
            asked.append("session")
            yield "checker"

        def ask(self, message, timeout=None, worker=None):
            asked.append(message.kernel)
            if message.kernel == "bad":
                return wire.Failure("compile", error="tl.dot needs 16", source="x = tl.dot(a, b)"), []
            return wire.Compiled(variants=1), []

    def launch(name):
        return ("@triton.jit\ndef k():\n    pass\n",
                helion_wire.HelionLaunch(kernel=name, signature={}, constexprs={}, options={}, grid=(1,)), f"case {name}")
    launches = queue.SimpleQueue()
    for item in (launch("good"), launch("bad"), launch("later"), None):
        launches.put(item)
    result = compile_generated(Fake(), launches)
    assert not result.passed and "the Triton Helion generated for case bad" in result.message
    assert asked == ["session", "good", "bad"] and launches.empty()
    empty = queue.SimpleQueue()
    empty.put(None)
    assert compile_generated(Fake(), empty) is None and asked == ["session", "good", "bad"]


NAN_REDUCTIONS = '''
import torch
import triton
import triton.language as tl
from helion.runtime.triton import helpers
from triton.runtime import interpreter

from grader.sandbox.kinds.helion.cpu import interpreted_launch


def slow(self, input):
    raise AssertionError("reduced element by element")


interpreter.ReduceOps.generic_reduce = slow


@triton.jit
def extremes(x, hi, lo, R: tl.constexpr, C: tl.constexpr):
    rows, cols = tl.arange(0, R), tl.arange(0, C)
    block = tl.load(x + rows[:, None] * C + cols[None, :])
    tl.store(hi + rows, helpers.max_propagate_nan(block, 1))
    tl.store(lo + rows, helpers.min_propagate_nan(block, 1))


x = torch.randn(4, 8)
x[1, 5] = float("nan")
hi, lo = torch.empty(4), torch.empty(4)
interpreted_launch(extremes, (1,), (x, hi, lo, 4, 8), {})
torch.testing.assert_close(hi, x.amax(1), equal_nan=True)
torch.testing.assert_close(lo, x.amin(1), equal_nan=True)
print("ok", hi.isnan().tolist())
'''


@needs_helion
def test_helions_nan_propagating_maxima_are_reduced_by_numpy_with_the_gpus_nan(tmp_path):
    """torch.amax in a Helion kernel becomes tl.reduce with Helion's own combine, which Triton's
    interpreter would run element by element; here it is numpy's, and a NaN still wins."""
    script = tmp_path / "nan_reductions.py"  # @triton.jit reads its source from a file
    script.write_text(NAN_REDUCTIONS)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[-2] == "ok [False, True, False, False]"
