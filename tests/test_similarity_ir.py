"""The similarity pass's compiled-kernel signal (issue 46): each disguise of a copied online softmax
is flagged by it, honest students of the synthetic class (benchmarks/similarity_class.py) are not,
and the reports say which signal flagged a pair."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.course.loader import Course
from grader.judge.similarity.find import COMPILED, IR_SCORE, SOURCE, class_pairs, ir_scores
from grader.judge.similarity.model import Fragment, SimilarityReport, SimilarPair, flagged_by
from grader.source.ir_fingerprint import ir_prints
from paths import ROOT
from pristine import PRISTINE

sys.path.insert(0, str(ROOT / "benchmarks"))
import similarity_class  # noqa: E402


@pytest.fixture(scope="module")
def flagged(tmp_path_factory):
    """The class of seed 0 compiled as the worker compiles: its flagged pairs and the copies."""
    folder = tmp_path_factory.mktemp("ttir")
    codes, copied = similarity_class.build(0)
    irs = {name: similarity_class.ttir(code, folder) for name, code in codes.items()}
    texts = {name: similarity_class.synthetic_class.puzzle_file(similarity_class.PUZZLE, code, PRISTINE)
             for name, code in codes.items()}
    pairs = class_pairs(Course(PRISTINE), similarity_class.PUZZLE, texts, irs)
    copiers = {n for pair in copied for n in pair} - {similarity_class.honest_of(p, codes, 0) for p in copied}
    return {frozenset(p.students): p for p in pairs}, copied, set(codes) - copiers


def test_every_disguise_alone_and_all_together_is_flagged_by_the_compiled_kernel(flagged):
    pairs, copied, _ = flagged
    assert set(copied.values()) == {*similarity_class.DISGUISES, similarity_class.ALL}
    missed = {how: pair for pair, how in copied.items() if pair not in pairs or COMPILED not in pairs[pair].signals}
    assert not missed
    assert all(pairs[pair].compiled_score >= IR_SCORE for pair in copied)


def test_the_source_alone_misses_what_the_compiler_sees_through(flagged):
    """What issue 46 found: ``tl.range``, ``while`` loops and everything at once hide a copy
    from the source's fingerprints; the pair says the compiled kernel flagged it."""
    pairs, copied, _ = flagged
    by_how = {how: pairs[pair] for pair, how in copied.items()}
    for how in ("tl.range", "for -> while", similarity_class.ALL):
        assert by_how[how].signals == (COMPILED,), how
        assert flagged_by(by_how[how]).startswith("flagged by the compiled kernel (score 1.00); source: ")
    assert by_how["renamed"].signals == (COMPILED, SOURCE)


def test_honest_students_are_not_flagged(flagged):
    pairs, _, honest = flagged
    assert not [sorted(pair) for pair in pairs if pair <= honest]


def _compiled(body: str, folder: Path, name: str) -> str:
    path = folder / f"{name}.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                    "def k(x_ptr, z_ptr, B: tl.constexpr, C: tl.constexpr):\n" + textwrap.indent(body, "    "))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from grader.sandbox.compile_request import _ttir
    source = ASTSource(module.k, {"x_ptr": "*fp32", "z_ptr": "*fp32", "B": "constexpr", "C": "constexpr"},
                       {"B": 32, "C": 4})
    return _ttir(triton, source, GPUTarget("cuda", 90, 32), {})


LOOP = """\
offs = tl.arange(0, B)
acc = tl.zeros([B], tl.float32)
for c in RANGE(C):
    x = tl.load(x_ptr + c * B + offs)
    acc += tl.exp(x) * 2.0
tl.store(z_ptr + offs, acc)
"""
WHILE = """\
acc = tl.zeros([B], tl.float32)
c = 0
while c < C:
    acc = acc + 2.0 * tl.exp(tl.load(x_ptr + c * B + tl.arange(0, B)))
    c += 1
tl.store(z_ptr + tl.arange(0, B), acc)
"""
OTHER = """\
offs = tl.arange(0, B)
acc = tl.zeros([B], tl.float32)
for c in range(C):
    x = tl.load(x_ptr + c * B + offs)
    acc = tl.maximum(acc, x)
tl.store(z_ptr + offs, acc)
"""


def test_range_tl_range_static_range_and_while_compile_to_one_kernel(tmp_path):
    """A constexpr count: ``tl.static_range`` is unrolled by Triton, and compiled as ``tl.range``
    for the fingerprint; a ``while`` loop's compare and step are the ``for`` loop's own."""
    forms = {r: LOOP.replace("RANGE", r) for r in ("range", "tl.range", "tl.static_range")} | {"while": WHILE}
    prints = {name: ir_prints(_compiled(body, tmp_path, f"k{i}")).labels for i, (name, body) in enumerate(forms.items())}
    assert len({frozenset(p) for p in prints.values()}) == 1, {n: len(p) for n, p in prints.items()}
    other = ir_prints(_compiled(OTHER, tmp_path, "other")).labels
    assert len(other & prints["range"]) < 0.8 * len(prints["range"])  # a maximum, not a sum: another kernel


def test_a_static_range_whose_index_is_needed_at_compile_time_still_compiles(tmp_path):
    body = ("acc = tl.zeros([B], tl.float32)\nfor c in tl.static_range(C):\n"
            "    acc += tl.load(x_ptr + tl.arange(0, B) + tl.constexpr(c) * B)\ntl.store(z_ptr + tl.arange(0, B), acc)\n")
    assert "tt.load" in _compiled(body, tmp_path, "needs_static")


def test_scores_are_symmetric_and_only_pairs_sharing_labels_are_scored():
    a = "module {\n  tt.func public @k(%arg0: !tt.ptr<f32>) {\n    %0 = tt.get_program_id x : i32\n" \
        "    %1 = tt.addptr %arg0, %0 : !tt.ptr<f32>, i32\n    tt.return\n  }\n}\n"
    scores = dict(ir_scores({"ann": a, "bob": a.replace("@k", "@renamed"), "cy": ""}))
    assert list(scores) == [("ann", "bob")] and scores["ann", "bob"][1] == pytest.approx(1.0)


def test_the_page_and_the_summary_name_the_signal():
    from grader.report.class_page import class_page
    fragment = Fragment("a/p.py", 1, 2, "x = 1")
    pair = SimilarPair("puzzle19", ("ann", "bob"), 3, 0.2, (fragment, fragment), (COMPILED,), 1.0)
    report = SimilarityReport((pair,), (), "two signals")
    assert flagged_by(pair) == ("flagged by the compiled kernel (score 1.00); source: 3 fingerprints shared, "
                                "score 0.20, below its threshold")
    assert "flagged by the compiled kernel (score 1.00)" in class_page([], ["puzzle19"], 1.0, report)
    both = SimilarPair("puzzle19", ("ann", "bob"), 40, 0.9, (fragment, fragment), (COMPILED, SOURCE), 1.0)
    assert flagged_by(both) == ("flagged by the compiled kernel (score 1.00) and the source "
                                "(40 fingerprints shared, score 0.90)")
    assert SimilarityReport.from_json(SimilarityReport((both,), (), "m").to_json()).pairs[0].signals == (COMPILED, SOURCE)


def test_the_sandboxed_compile_check_records_the_kernels_ttir(tmp_path):
    """Graded as a learner's file: the worker's sm_90 check hands back the first case's TTIR."""
    run = subprocess.run([sys.executable, "-m", "grader", "puzzle19", "--file",
                          str(PRISTINE / "solutions" / "puzzle19_online_softmax.py"), "--root", str(PRISTINE), "--json"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    check = json.loads(run.stdout)["results"][0]["checks"]["gpu_compile"]
    assert check["passed"] and "tt.func public @online_softmax_kernel" in check["ttir"]
    assert len(ir_prints(check["ttir"]).labels) >= 40


@pytest.mark.slow  # Helion's host code and its generated Triton, through the command line
def test_a_helion_kernel_is_fingerprinted_from_the_triton_helion_generated():
    run = subprocess.run([sys.executable, "-m", "grader", "puzzle35", "--file",
                          str(PRISTINE / "solutions" / "puzzle35_helion_vector_add.py"), "--root", str(PRISTINE),
                          "--json"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    check = json.loads(run.stdout)["results"][0]["checks"]["gpu_compile"]
    assert check["passed"] and "tt.func public @_helion_" in check["ttir"]
    assert ir_prints(check["ttir"]).labels


@pytest.mark.slow  # a batch of three, graded through the command line
def test_a_batch_flags_a_copy_its_source_hides_by_the_compiled_kernel(tmp_path):
    """ann's kernel, and bob's: ann's with `tl.range` and `while` loops (the source's signal
    misses both); cy wrote her own. similarity.json and the summary say which signal spoke."""
    codes, _ = similarity_class.build(0)
    ann, cy = codes["student00"], codes["student01"]
    bob = similarity_class.DISGUISES["for -> while"](similarity_class.DISGUISES["tl.range"](ann))
    for name, code in (("ann", ann), ("bob", bob), ("cy", cy)):
        path = tmp_path / "class" / name / "puzzles" / "puzzle19_online_softmax.py"
        path.parent.mkdir(parents=True)
        path.write_text(similarity_class.synthetic_class.puzzle_file("puzzle19", code, PRISTINE))
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "class"), "--out",
                          str(tmp_path / "out"), "--root", str(PRISTINE), "--jobs", "1"],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    report = SimilarityReport.from_json((tmp_path / "out" / "similarity.json").read_bytes())
    assert [(p.students, p.signals) for p in report.pairs] == [(("ann", "bob"), (COMPILED,))], run.stdout[-2000:]
    assert "ann and bob: flagged by the compiled kernel (score 1.00)" in run.stdout
    assert next(t for t in report.puzzles if t.puzzle == "puzzle19").compiled == 3


def test_a_program_three_students_compiled_to_is_no_ones_copy(tmp_path):
    """Three kernels that compile alike are a common way to write the puzzle (honest students
    whose choices the compiler erases), and the compiled kernel flags none of them."""
    codes, _ = similarity_class.build(0)
    original = codes["student00"]
    forms = {"ann": original, "bob": similarity_class.DISGUISES["tl.range"](original),
             "cy": similarity_class.DISGUISES["for -> while"](original)}
    irs = {name: similarity_class.ttir(code, tmp_path) for name, code in forms.items()}
    assert all(score == pytest.approx(1.0) for _, (_, score) in ir_scores(irs))
    texts = {name: similarity_class.synthetic_class.puzzle_file(similarity_class.PUZZLE, code, PRISTINE)
             for name, code in forms.items()}
    pairs = class_pairs(Course(PRISTINE), similarity_class.PUZZLE, texts, irs)
    assert not [p.students for p in pairs if COMPILED in p.signals]
    two = class_pairs(Course(PRISTINE), similarity_class.PUZZLE, {n: texts[n] for n in ("ann", "cy")},
                      {n: irs[n] for n in ("ann", "cy")})
    assert [(p.students, p.signals) for p in two] == [(("ann", "cy"), (COMPILED,))]


def test_a_resumed_batch_keeps_each_kernels_ttir():
    """--resume reads results.json back: the compiled kernels of the students it keeps still count."""
    from grader.judge.batch_resume import _puzzle
    from grader.judge.results import CheckResult, PuzzleResult, StudentResult, to_dict
    from grader.judge.similarity.find import compiled_kernels
    check = CheckResult(True, "compiles for sm_90", ttir="module {\n}\n")
    result = PuzzleResult("puzzle19", "Online softmax", "pass", "", "cpu", checks={"gpu_compile": check})
    back = _puzzle(json.loads(json.dumps(to_dict(result))))
    assert back.checks["gpu_compile"].ttir == "module {\n}\n"
    assert compiled_kernels({"ann": StudentResult("ann", (back,), (), 1.0)}, "puzzle19") == {"ann": "module {\n}\n"}
