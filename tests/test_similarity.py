"""Similar submissions: the synthetic class's four copied pairs are found and no other pair is;
renaming, reordering, helpers, the loop's form and dead code hide nothing; the course's own code is common ground; short puzzles
are never flagged; similarity.json reads back."""
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import synthetic_class
from grader.course.loader import Course
from grader.judge.similarity.find import similar_submissions, threshold
from grader.judge.similarity.model import SimilarityReport
from grader.source.fingerprint import fingerprint, normalised_tokens
from grader.source.intake import prepare_class
from paths import ROOT
from pristine import PRISTINE

COURSE = Course(PRISTINE)  # as committed, whatever a learner solved


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    copied = synthetic_class.build(folder / "submissions", course=PRISTINE)
    students = prepare_class(folder / "submissions", COURSE, folder / "work")
    return copied, similar_submissions(COURSE, students)


def test_the_four_copied_pairs_are_found_and_no_other(synthetic):
    copied, report = synthetic
    flagged = {frozenset(p.students) for p in report.pairs}
    assert flagged == copied and frozenset(("student08", "student33")) in copied
    by_puzzle = {(p.puzzle, frozenset(p.students)) for p in report.pairs}
    for pair in copied:  # verbatim, renamed, reordered and disguised alike, in both puzzles long enough to tell
        assert ("puzzle07", pair) in by_puzzle and ("puzzle19", pair) in by_puzzle
    # puzzle 2's whole solution is shorter than the shared code a pair needs: never flagged
    assert not [p for p in report.pairs if p.puzzle == "puzzle02"]
    assert all(p.score == 1.0 for p in report.pairs)


def test_a_pair_shows_what_it_shares(synthetic):
    _, report = synthetic
    renamed = next(p for p in report.pairs if set(p.students) == {"student11", "student29"} and p.puzzle == "puzzle19")
    mine, theirs = renamed.fragments
    assert mine.file == "student11/puzzles/puzzle19_online_softmax.py"
    assert theirs.file == "student29/puzzles/puzzle19_online_softmax.py"
    assert "tl.exp" in mine.text and "tl.exp" in theirs.text
    assert mine.last_line - mine.first_line >= 5


def test_thresholds_scale_with_the_puzzles_length(synthetic):
    _, report = synthetic
    limits = {t.puzzle: t for t in report.puzzles}
    assert limits["puzzle02"].min_shared > limits["puzzle02"].reference_fingerprints  # too short to tell
    assert limits["puzzle19"].min_shared > limits["puzzle07"].min_shared >= 25
    assert limits["puzzle02"].min_score > limits["puzzle07"].min_score > limits["puzzle19"].min_score
    assert threshold(200) == (100, 0.8) and threshold(0) == (25, 0.95)
    assert {t.compared for t in report.puzzles if t.puzzle in synthetic_class.PUZZLES} == {40}


KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=row_mask[:, None] & (cols < T)[None, :])
        acc += tl.sum(tile, axis=1)
    tl.store(z_ptr + rows, acc, mask=row_mask)
'''


def _tokens(text: str) -> list[str]:
    return [t.text for t in normalised_tokens(text, ("sum_kernel",))]


def test_renamed_names_comments_and_modules_change_no_token():
    disguised = (KERNEL.replace("import triton.language as tl", "from triton import language as lang")
                 .replace("tl.", "lang.").replace("acc", "running_total").replace("rows", "r")
                 .replace("    pid = ", "    # the program\n    program = ").replace("pid *", "program *")
                 .replace("acc += ", "acc = acc + "))
    assert _tokens(disguised) == _tokens(KERNEL)
    assert "V" in _tokens(KERNEL) and "triton_language" in _tokens(KERNEL) and "mask" in _tokens(KERNEL)


def test_independent_statements_in_any_order_read_the_same():
    swapped = KERNEL.replace("    row_mask = rows < N0\n    acc = tl.zeros([B0], dtype=tl.float32)\n",
                             "    acc = tl.zeros([B0], dtype=tl.float32)\n    row_mask = rows < N0\n")
    assert swapped != KERNEL and _tokens(swapped) == _tokens(KERNEL)
    # a statement moved past one that reads what it writes changes the program: it is kept apart
    moved = KERNEL.replace("    pid = tl.program_id(0)\n    rows = pid * B0 + tl.arange(0, B0)\n",
                           "    rows = pid * B0 + tl.arange(0, B0)\n    pid = tl.program_id(0)\n")
    assert _tokens(moved) != _tokens(KERNEL)


def test_only_the_learners_part_and_what_it_calls_count():
    helper = (KERNEL + textwrap.dedent('''
        @triton.jit
        def helper(x):
            return x * 2 + 1


        def unrelated():
            return 42
        ''')).replace("acc += tl.sum(tile, axis=1)", "acc += tl.sum(helper(tile), axis=1)")
    text = " ".join(_tokens(helper))
    assert "* 2 + 1" in text and "42" not in text
    assert normalised_tokens("def broken(:", ("sum_kernel",)) == []
    assert not fingerprint(KERNEL, ("another_kernel",)).lines


def test_a_helper_is_read_inlined():
    """Issue 32: a copy moved part of the kernel into an `@triton.jit` helper."""
    helped = KERNEL.replace(
        "        tile = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=row_mask[:, None] & (cols < T)[None, :])\n",
        "        tile = _load(x_ptr, rows, cols, row_mask, T)\n") + textwrap.dedent('''
        @triton.jit
        def _load(base, r, c, keep, n):
            """A docstring, and a local returned."""
            loaded = tl.load(base + r[:, None] * n + c[None, :], mask=keep[:, None] & (c < n)[None, :])
            return loaded
        ''')
    assert helped != KERNEL and _tokens(helped) == _tokens(KERNEL)
    # two values returned as a tuple read as two assignments
    paired = KERNEL.replace("    row_mask = rows < N0\n    acc = tl.zeros([B0], dtype=tl.float32)\n",
                            "    row_mask, acc = _start(rows, N0, B0)\n") + textwrap.dedent('''
        @triton.jit
        def _start(r, n, b):
            return r < n, tl.zeros([b], dtype=tl.float32)
        ''')
    assert _tokens(paired) == _tokens(KERNEL)


def test_a_loop_over_chunk_numbers_reads_as_one_over_offsets():
    for header, first in (("for c in range(tl.cdiv(T, B1)):", "c * B1 + tl.arange(0, B1)"),
                          ("for c in range(0, tl.cdiv(T, B1)):", "B1 * c + tl.arange(0, B1)"),
                          ("for c in range((T + B1 - 1) // B1):", "c * B1 + tl.arange(0, B1)")):
        chunks = KERNEL.replace("for start in range(0, T, B1):", header).replace(
            "cols = start + tl.arange(0, B1)", f"cols = {first}")
        assert _tokens(chunks) == _tokens(KERNEL.replace("cols = start + tl.arange(0, B1)",
                                                         f"cols = {first.replace(' * B1', '').replace('B1 * ', '')}"))
    # the chunk's number used for itself (the first chunk apart) is another program: kept as written
    other = KERNEL.replace("for start in range(0, T, B1):", "for c in range(tl.cdiv(T, B1)):").replace(
        "cols = start + tl.arange(0, B1)", "cols = c * B1 + tl.arange(0, B1) + (c == 0)")
    assert "cdiv" in " ".join(_tokens(other))


def test_dead_code_is_not_read():
    dead = KERNEL.replace("    acc = tl.zeros([B0], dtype=tl.float32)\n", textwrap.indent(textwrap.dedent('''
        acc = tl.zeros([B0], dtype=tl.float32)
        unused = tl.arange(0, B1) * 2
        unused2 = unused + 1
        rows + 1
        if False:
            tl.device_print("rows", rows)
        '''), "    "))
    assert dead != KERNEL and _tokens(dead) == _tokens(KERNEL)
    # an effect nobody reads back is no dead code: a store stays
    stored = KERNEL.replace("    tl.store(z_ptr + rows, acc, mask=row_mask)\n",
                            "    tl.store(z_ptr + rows, acc, mask=row_mask)\n    tl.store(z_ptr, acc)\n")
    assert _tokens(stored) != _tokens(KERNEL)


def _submit(folder: Path, name: str, text: str) -> None:
    target = folder / name / "puzzles" / "puzzle07_long_sum.py"
    target.parent.mkdir(parents=True)
    target.write_text(text)


def test_the_reference_and_the_stub_are_common_ground(tmp_path):
    """Three students who pasted the reference solution, and two who left the stub: nobody's own code."""
    subs = tmp_path / "subs"
    for name in ("ann", "ben", "cat"):
        _submit(subs, name, (ROOT / "solutions" / "puzzle07_long_sum.py").read_text())
    for name in ("dan", "eve"):
        _submit(subs, name, (PRISTINE / "puzzles" / "puzzle07_long_sum.py").read_text())
    report = similar_submissions(COURSE, prepare_class(subs, COURSE, tmp_path / "work"))
    assert report.pairs == ()
    assert {t.puzzle: t.compared for t in report.puzzles}["puzzle07"] == 0


def test_similarity_json_reads_back(synthetic):
    _, report = synthetic
    again = SimilarityReport.from_json(report.to_json())
    assert again == report and again.pairs[0].fragments[0].text
    assert b'"min_shared": 25' in report.to_json()


@pytest.mark.slow  # grades generated kernels through the command line
def test_the_synthetic_students_solve_their_puzzles(tmp_path):
    """The honest variants are correct kernels: a sample of the class, every puzzle, graded."""
    course = tmp_path / "course"
    (course / "puzzles").mkdir(parents=True)
    for name in synthetic_class.PUZZLES.values():
        shutil.copy(PRISTINE / "puzzles" / name, course / "puzzles" / name)
    failures = []
    # scalar and per-lane maxima, both loop forms, tl.where, 1-D and 2-D sums; and the disguised copy
    for n, how in ((0, ""), (8, ""), (11, ""), (22, ""), (8, "disguised")):
        path = tmp_path / f"student{n:02d}{how}.py"
        path.write_text("import triton\nimport triton.language as tl\n\n" + "\n\n".join(
            synthetic_class.kernel(p, f"student{n:02d}", how) for p in synthetic_class.PUZZLES))
        run = subprocess.run([sys.executable, "-m", "grader", *synthetic_class.PUZZLES, "--file", str(path),
                              "--root", str(course), "--no-compile-check"], capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            failures.append(f"student{n:02d}:\n{run.stdout[-1500:]}{run.stderr[-500:]}")
    assert not failures, "\n".join(failures)


def test_code_nested_past_what_python_parses_is_no_ones_code():
    deep = "def sum_kernel(x):\n    return " + "(" * 150 + "x" + ")" * 150 + "\n"
    deeper = "def sum_kernel(x):\n    return " + "-" * 100_000 + "x\n"
    assert normalised_tokens(deep, ("sum_kernel",)) != []
    assert normalised_tokens(deeper, ("sum_kernel",)) == []


def test_a_bug_of_the_pass_costs_the_pairs_not_the_grades(monkeypatch, tmp_path):
    from grader.judge import classroom
    from grader.report.class_page import class_page

    def broken(course, students, results):
        raise KeyError("boom")
    monkeypatch.setattr(classroom, "similar_submissions", broken)
    report = classroom._similarity(COURSE, [], {})
    assert report.error == "grader error: KeyError: 'boom'" and report.pairs == ()
    assert "The comparison failed (a bug of the grader's" in class_page([], ["puzzle07"], 1.0, report)
