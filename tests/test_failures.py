"""The failures' catalogue: one entry per kind, which words its message from the facts a check
found and gives the label every report prints for it."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import torch

from grader.judge import failures, kinds, results
from grader.judge.compare import Comparison, compare_tensor
from grader.judge.failures import CATALOGUE, Entry, FailureKind, StrEnum, Worded, finding, label, word
from grader.judge.kinds.helion import failures as helion_failures
from grader.judge.results import CaseResult, CheckResult, PuzzleResult, Status, to_dict
from grader.report import html, text

ROOT = Path(__file__).resolve().parent.parent
K = FailureKind

# One finding of each kind, and the message a learner reads for it.
SAMPLES = {
    K.MISMATCH: (failures.Mismatch("z", 2, 8, 1.5, 1e-5, 1e-5, (failures.Element((1,), 3.0, 1.5),
                                                                 failures.Element((4,), 0.0, 1.0))),
                 "wrong values in `z`: 2 of 8 elements differ (max abs err 1.5, tolerance atol=1e-05, rtol=1e-05). "
                 "(1): yours 3, expected 1.5; (4): yours 0, expected 1"),
    K.UNWRITTEN: (failures.Unwritten("z", 3, 8, ((5,), (6,), (7,))),
                  "3 of 8 elements of `z` were never written (first at (5), (6), (7)). Every output element must be "
                  "stored: check that the grid and your offsets cover all of `z` and that the store's mask is not "
                  "too strict."),
    K.NONFINITE: (failures.Nonfinite("z", 1, failures.Element((0, 2), float("inf"), 1.0)),
                  "`z` has 1 NaN/Inf value(s) where the spec is finite, first at (0, 2): yours inf, expected 1. "
                  "Look for a division by zero, a log of a non-positive value, or exp() overflowing."),
    K.OUT_OF_BOUNDS: (failures.StrayStore("z", "output", (8,), 8, 2, after=(8, 9)),
                      "out-of-bounds store: the kernel wrote elements 8..9 past its end of output `z` (shape (8,), "
                      "8 elements; 2 stray elements). Fix: mask the store, e.g. `tl.store(z_ptr + offs, value, "
                      "mask=offs < N0)`, so that lanes past the end are switched off."),
    K.INPUT_MODIFIED: (failures.InputModified("x", 2, (1,)),
                       "the kernel wrote into input `x`: 2 element(s) changed, first at (1). Inputs are read-only: "
                       "store only to the output pointer."),
    K.EXCEPTION: (failures.Raised("NameError: name 'y' is not defined", 4, "z = x + y"),
                  "the kernel raised NameError: name 'y' is not defined at line 4: `z = x + y`."),
    K.CRASH: (failures.Crash(-9, "Killed", "cpu"),
              "the process running the kernel died (signal 9: Killed). This is usually an unmasked store far "
              "outside a tensor."),
    K.TIMEOUT: (failures.Timeout(30.0),
                "the kernel did not finish within 30 s of CPU time. Look for a loop whose bound never becomes true "
                "(a `while`, or a `range` over a huge or negative count); raise the limit with --timeout if the kernel is "
                "merely slow."),
    K.SIGNATURE: (failures.NotCallable("add_kernel"),
                  "`add_kernel` is not a Triton kernel: decorate it with @triton.jit."),
    K.COMPILE: (failures.CompileFailed("at 3:8:\nf = lambda v: v\n^\nLambda is not supported", 3, "f = lambda v: v"),
                "the kernel does not compile for a GPU (sm_90) at line 3: `f = lambda v: v`: Lambda is not "
                "supported. Fix: lambdas are not supported in kernels: write the expression inline or as a "
                "separate @triton.jit function."),
    K.NOT_FOUND: (failures.NoKernel("add_kernel", "k.py", ("other_kernel",), "add_kernel(x_ptr, z_ptr, N0)"),
                  "no kernel named `add_kernel` in k.py (it defines other_kernel). "
                  "Expected: @triton.jit def add_kernel(x_ptr, z_ptr, N0)"),
    K.SKIPPED: (failures.Skipped("classic[seed=0] crashed"), "not run: classic[seed=0] crashed"),
    K.SHAPE: (failures.GradCount(1, ("x", "w")),
              "backward returned 1 value(s); it must return one gradient per forward input (x, w)."),
    K.TORCH_COMPUTE: (failures.NoLaunch("backward"),
                      "the backward launched no Triton kernel: compute it with your kernels from the previous "
                      "puzzles."),
    K.SAVED: (failures.CtxAttribute("x"),
              "ctx.x holds a tensor: pass tensors to ctx.save_for_backward, which autograd tracks and frees, not "
              "as attributes of ctx."),
    K.RACE: (failures.Overlap("z", ((0,), (1,)), 3, (8,), 4, "tl.store(z_ptr + i, v)"),
             "a race: programs (0,) and (1,) both store to z(3) at line 4: `tl.store(z_ptr + i, v)`, with "
             "different values and no atomic. The interpreter runs programs one after another, but a GPU runs "
             "them at the same time, so which value stays (or whether an update is lost) depends on timing. Fix: "
             "give every element of `z` to exactly one program, or combine the programs' contributions with "
             "`tl.atomic_add`."),
    K.SNIFFING: (Worded(K.SNIFFING, "`add_kernel` at line 3: `if x.is_cuda:`: reads where it runs. Compute with "
                                    "`tl.*` operations."),
                 "`add_kernel` at line 3: `if x.is_cuda:`: reads where it runs. Compute with `tl.*` operations."),
    K.SYNTAX: (Worded(K.SYNTAX, "puzzles/puzzle01_constant_add.py does not parse: line 4: invalid syntax. Fix the "
                                "line, then grade again."),
               "puzzles/puzzle01_constant_add.py does not parse: line 4: invalid syntax. Fix the line, then grade "
               "again."),
    K.INTERPRETER_LIMIT: (failures.InterpreterLimit("`tl.inline_asm_elementwise` runs PTX", 9, "y = asm(x)",
                                                    "puzzle15", True),
                          "the grader's interpreter cannot run this kernel: `tl.inline_asm_elementwise` runs PTX at "
                          "line 9: `y = asm(x)`. This is a limit of the interpreter, not a mistake of yours, and it "
                          "is neither a pass nor a fail: it compiles for sm_90; grade it on a GPU: "
                          "python -m grader puzzle15 --device cuda"),
    K.BENCH_REJECTED: (failures.ThreadsStarted(1, 0),
                       "--bench refuses this run: your code left 1 thread running after the first call returned. "
                       "Work a thread does after the call returns is not timed; a call must finish its work before "
                       "it returns."),
}

# What the HTML report printed for each kind before the catalogue: its own table for six kinds,
# the kind's name with spaces for the others. The catalogue's labels must read the same.
HTML_BEFORE = {"mismatch": "wrong values", "unwritten": "not written", "nonfinite": "NaN/Inf",
               "out_of_bounds": "out of bounds", "input_modified": "wrote an input",
               "torch_compute": "computed with PyTorch"}


def test_every_kind_has_one_entry_with_a_label_and_a_message():
    assert set(CATALOGUE) == set(FailureKind) == set(SAMPLES)
    for kind, entry in CATALOGUE.items():
        assert entry.label and entry.words, kind
        facts, says = SAMPLES[kind]
        assert facts.kind == kind and type(facts) in entry.words
        assert word(facts) == entry.message(facts) == says


def test_each_kind_of_facts_is_worded_by_its_own_kind_only():
    """A facts class fixed to a kind is listed in that kind's entry and no other; one that
    carries its kind (Worded, ReadEarly) words the kind it names."""
    families = [failures, *(importlib.import_module(f"{wing}.failures") for wing in kinds.WINGS.values()
                            if importlib.util.find_spec(f"{wing}.failures"))]  # a kind's own, in its wing
    facts_classes = {obj for family in families for obj in vars(family).values()
                     if dataclasses.is_dataclass(obj) and isinstance(obj, type) and "kind" in obj.__annotations__}
    listed = {facts for entry in CATALOGUE.values() for facts in entry.words}
    assert facts_classes == listed
    for facts in listed:
        kind = getattr(facts, "kind", None)  # None: a field of each finding, not of the class
        holders = {k for k, entry in CATALOGUE.items() if facts in entry.words}
        assert kind is None or holders == {kind}, (facts.__name__, holders)
    early = failures.ReadEarly(K.NONFINITE, "z", (1,), 5, (8,), 9, "acc = tl.load(z_ptr)")
    assert word(early) == (
        "loaded `z` before storing to it: program (1,) read z(5) at line 9: `acc = tl.load(z_ptr)`, which no program "
        "had stored yet. An output holds garbage until your kernel stores to it (the grader fills it with NaN), so "
        "the value loaded means nothing. Fix: keep the running value in a variable (`acc = tl.zeros([B0], "
        "dtype=tl.float32)`), and store `z` once it is final.")


def test_elements_holding_a_strided_inputs_gap_fill_are_wrong_values_with_the_layouts_look_alike():
    from grader.course.puzzle_parts import LookAlike
    look = LookAlike("`a` read as if its rows were contiguous", lambda *a, **k: (),
                     "in this case `a` is a slice of a wider tensor: step from row to row by its row stride")
    gaps = failures.LooksLike(K.MISMATCH, failures.GapFill("c", 720, 960, ((1, 0), (1, 1))), look)
    assert gaps.kind == K.MISMATCH
    assert word(gaps) == (
        "720 of 960 elements of `c` hold the fill the grader leaves between an input's rows (first at (1, 0), "
        "(1, 1)): your kernel read memory between rows. It looks like `a` read as if its rows were contiguous: in "
        "this case `a` is a slice of a wider tensor: step from row to row by its row stride.")


def test_a_kind_has_one_message_per_kind_of_facts():
    assert word(failures.Timeout(2.5, importing=True)) == (
        "the kernel did not finish within 2.5 s of CPU time. Look for a loop whose bound never becomes true (a `while`, or a "
        "`range` over a huge or negative count); raise the limit with --timeout if the kernel is merely slow. "
        "(while importing the file)")
    assert word(failures.NotCallable("Softmax", "ignored", function=True)) == (
        "`Softmax` must be a subclass of torch.autograd.Function with static forward and backward methods.")
    assert word(failures.NotCallable("add_kernel", "`add_kernel` is a class, not a function.")) == \
        "`add_kernel` is a class, not a function."
    assert word(failures.CheckUnfinished("WorkerTimedOut")) == "the GPU compile check did not finish (WorkerTimedOut)"
    assert word(failures.CheckUnfinished("WorkerDied", "k")) == "the GPU compile check of `k` did not finish (WorkerDied)"
    failed = failures.CompileFailed("weird error.", None, "")
    assert word(failures.CompileCheck("B0=32", failed)) == \
        "GPU compile check (B0=32): the kernel does not compile for a GPU (sm_90): weird error."
    assert word(failures.LaunchCompile("k", 7, "k[grid](x)", "B=8", failed)) == \
        "GPU compile check of `k` launched at line 7: `k[grid](x)` with B=8: " \
        "the kernel does not compile for a GPU (sm_90): weird error."
    assert word(failures.GradShape("grad_x", (8,), (2, 4))) == \
        "backward returned grad_x of shape (8,), expected (2, 4): a gradient has its input's shape."
    assert word(failures.SavedExtra((4,), ("mean",), ("x",))) == (
        "ctx saved a tensor of shape (4,) that is not an input nor one of mean: save only what the backward needs "
        "(x, mean), and recompute the rest.")
    assert word(failures.OrderDependent("z", 1, (((2,), 1.0, 0.0),))) == (
        "a race: running the programs in reverse order changed 1 element(s) of `z` ((2): 1 in order, 0 reversed). "
        "On a GPU programs run at the same time, in no set order, so a program must not depend on what another one "
        "stored. Fix: have each program compute its part from the inputs alone, or combine the programs' "
        "contributions with atomics (`tl.atomic_add`).")


def test_a_check_returns_facts_and_its_message_is_the_catalogues():
    outcome = compare_tensor("z", torch.tensor([1.0, 5.0, 3.0]), torch.tensor([1.0, 2.0, 3.0]), 1e-5, 1e-5)
    assert outcome.facts == failures.Mismatch("z", 1, 3, 3.0, 1e-5, 1e-5, (failures.Element((1,), 5.0, 2.0),))
    assert outcome.kind == K.MISMATCH and outcome.message == word(outcome.facts) and outcome.finding == ""
    nan = compare_tensor("z", torch.tensor([1.0, float("nan")]), torch.tensor([1.0, 2.0]), 1e-5, 1e-5)
    assert nan.kind == K.NONFINITE and nan.finding == finding(nan.facts) == (
        "`z` has 1 NaN/Inf value(s) where the spec is finite, first at (1): yours nan, expected 2.")
    assert nan.message.startswith(nan.finding + " Look for a division by zero")
    legacy = Comparison(False, "mismatch", "2 tensor(s) came back, 1 expected")  # as grader.judge.bench.run builds one
    assert legacy.message == "2 tensor(s) came back, 1 expected" and legacy.facts is None


def test_labels_are_what_the_html_report_printed_before_the_catalogue():
    for kind in FailureKind:
        assert label(kind) == HTML_BEFORE.get(kind, kind.replace("_", " ")), kind
    assert label(None) == "failed"


def test_the_kinds_that_point_at_the_fault_are_shown_first():
    """The catalogue says which kinds' messages point at the line, access or element at fault:
    results.most_telling shows those before wrong values, NaN, timeouts and crashes."""
    pointing = {kind for kind, entry in CATALOGUE.items() if entry.points}
    assert pointing == {K.OUT_OF_BOUNDS, K.RACE, K.INPUT_MODIFIED, K.EXCEPTION, K.COMPILE, K.SIGNATURE, K.SHAPE,
                        K.TORCH_COMPUTE, K.SAVED, K.SNIFFING, K.SYNTAX, K.NOT_FOUND}
    wrong, crash = (CheckResult(False, word(SAMPLES[k][0]), k) for k in (K.MISMATCH, K.CRASH))
    race = CheckResult(False, word(SAMPLES[K.RACE][0]), K.RACE)
    assert results.most_telling([wrong, crash, race]) is race and results.most_telling([crash, race]) is race


def _failing(kind: str, message: str) -> PuzzleResult:
    case = CaseResult(name="classic", sizes={"N0": 8}, blocks={"B0": 8}, seed=0, grid=(1,), passed=False,
                      kind=kind, message=message)
    return PuzzleResult(puzzle="puzzle01", title="Constant Add", status=Status.FAIL, source="k.py", device="cpu",
                        cases=(case,), checks={"load": CheckResult(False, message, kind)}, message=message)


@pytest.mark.parametrize("kind", list(FailureKind))
def test_the_html_report_labels_each_kind_from_the_catalogue(kind, monkeypatch):
    page = html.render(_failing(kind, "what went wrong"))
    assert page.count(f"width:100%'>{label(kind)}</td>") == 2  # the case's row and the check's
    monkeypatch.setitem(CATALOGUE, kind, dataclasses.replace(CATALOGUE[kind], label="relabelled"))
    assert html.render(_failing(kind, "what went wrong")).count("width:100%'>relabelled</td>") == 2


def test_no_reporter_keeps_a_table_of_kinds_of_its_own():
    """A dict keyed by failure kinds in grader/report/ would be a second vocabulary to keep in
    step with the catalogue."""
    kinds = {k.value for k in FailureKind} - {s.value for s in Status}  # "interpreter_limit" is a status too
    for path in (ROOT / "grader" / "report").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                keys = [ast.unparse(k) for k in node.keys if k is not None]
                assert not any(k.strip("'\"") in kinds or k.startswith("FailureKind.") for k in keys), \
                    (path.name, node.lineno)


def test_a_new_kind_needs_only_its_catalogue_entry(monkeypatch):
    """A kind added to FailureKind with its entry (facts, label, message) is validated, worded and
    reported, in HTML, text and JSON, with nothing else changed."""
    extended = StrEnum("FailureKind", {**{k.name: k.value for k in FailureKind}, "DEADLOCK": "deadlock"})

    @dataclass(frozen=True)
    class Deadlock:
        kind: ClassVar = extended.DEADLOCK
        programs: int

    from grader.judge.failures import catalogue
    monkeypatch.setattr(failures, "FailureKind", extended)
    monkeypatch.setattr(catalogue, "FailureKind", extended)  # where label() reads a kind
    monkeypatch.setattr(results, "FailureKind", extended)  # where results check a kind
    monkeypatch.setitem(CATALOGUE, extended.DEADLOCK, Entry("waits forever", {
        Deadlock: lambda f: f"{f.programs} programs wait on each other: no program may wait for another."}))
    facts = Deadlock(2)
    result = _failing(facts.kind, word(facts))
    assert "2 programs wait on each other: no program may wait for another." in html.render(result)
    assert html.render(result).count("width:100%'>waits forever</td>") == 2
    assert "\n    2 programs wait on each other: no program may wait for another." in text.render_puzzle(result)
    assert to_dict(result)["cases"][0]["kind"] == "deadlock"


def test_the_catalogue_is_words_only():
    imported = set()
    for path in (ROOT / "grader" / "judge" / "failures").glob("*.py"):  # the catalogue and its families
        tree = ast.parse(path.read_text())
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert {m for m in imported if m.startswith("grader") and not m.startswith("grader.judge.failures.")} \
        <= {"grader.course.dtypes"}
    loaded = subprocess.run([sys.executable, "-c", "import sys, grader.judge.failures; print(sorted(sys.modules))"],
                            capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "'torch'" not in loaded and "'grader.judge.results'" not in loaded


def test_every_failure_the_worker_reports_is_a_kind_of_the_catalogue():
    """The wire's closed set of worker failures (grader.channel.wire.WorkerFailureKind) cannot import
    the catalogue (the sandbox reaches no judge code), so the two are held together here: each
    kind a worker may report is one of the catalogue's, but ``error``, the worker's own bug."""
    import typing

    from grader.channel.wire import WorkerFailureKind
    from grader.judge.failures import CATALOGUE, FailureKind
    reported = set(typing.get_args(WorkerFailureKind))
    assert reported - {"error"} <= {kind.value for kind in FailureKind}
    assert all(FailureKind(kind) in CATALOGUE for kind in reported - {"error"})


def test_each_family_registers_its_own_words_and_none_twice():
    """The catalogue's table holds labels only; each family's module words its facts, and a facts
    type worded twice under one kind is refused (a family cannot silently replace another's words)."""
    from grader.judge import failures
    from grader.judge.failures import catalogue
    assert all(entry.words for entry in failures.CATALOGUE.values())
    assert failures.CATALOGUE[failures.FailureKind.RACE].words[failures.Overlap].__module__ == \
        "grader.judge.failures.races"
    with pytest.raises(ValueError, match=r"^race: Overlap worded twice$"):
        catalogue.register(failures.FailureKind.RACE, {failures.Overlap: str})


def test_a_family_words_anothers_facts_through_the_catalogue():
    """Helion's generated-code compile failure holds the compile family's facts and words them
    through the catalogue, importing no other family (the families stay one floor deep)."""
    failed = failures.CompileFailed("at 3:4: error: Expected dtype [fp32, fp64] but got fp16", 12, "y = tl.exp(x)",
                                    case="classic", inputs={"x": "float16"}, outputs={"y": "float16"})
    said = failures.word(helion_failures.GeneratedCompile("add_kernel", "classic[seed=0]", failed))
    assert said == ("GPU compile check of `add_kernel`, the Triton Helion generated for classic[seed=0]: "
                    + failures.word(failed))
    assert "at line 12: `y = tl.exp(x)`" in said and "Upcast with `.to(tl.float32)` before `tl.exp`" in said
    for path in (ROOT / "grader" / "judge" / "failures").glob("*.py"):
        if path.stem not in ("__init__", "catalogue", "words"):
            imported = {node.module for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ImportFrom)}
            assert {m for m in imported if m and m.startswith("grader.judge.failures.")} <= {
                "grader.judge.failures.catalogue", "grader.judge.failures.words"}, path.name


def test_a_benchmark_or_profile_that_gives_no_answer_says_how_its_worker_ended():
    from grader.channel.worker_pool import WorkerDied, WorkerTimedOut
    from grader.judge.asking import unfinished
    killed = unfinished("the benchmark", WorkerDied(-9, "timing 262144 x 1024\nKilled\n"))
    assert killed.kind == FailureKind.CRASH
    assert word(killed) == (
        "the benchmark did not finish: the process running your code died (signal 9; its last words: Killed). "
        "A process killed by signal 9 was most often out of memory: the largest size needs the most.")
    assert word(unfinished("the run", WorkerDied(1, ""))) == \
        "the run did not finish: the process running your code died (exit code 1; its last words: nothing on stderr)."
    assert word(unfinished("the run", WorkerDied(0, "junk", corrupted=True))) == \
        "the run did not finish: the process running your code broke the grader's channel (junk)."
    late = unfinished("the benchmark", WorkerTimedOut(limit=120.0))
    assert late.kind == FailureKind.TIMEOUT
    assert word(late) == "the benchmark did not finish: it ran past its limit (past 120.0 s of CPU time)."
