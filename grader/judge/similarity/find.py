"""Similar submissions: per puzzle, every student's kernel compared with every other's by two
signals, and each pair says which flagged it (:data:`COMPILED`, :data:`SOURCE`):

* the **compiled kernel**: the TTIR the sm_90 compile check recorded (a Helion kernel's, from the
  Triton Helion generated), labelled by :mod:`grader.source.ir_fingerprint`; a pair is flagged at
  :data:`IR_SCORE`. The compiler has made one program of renames, helpers, dead code, order,
  ``range``/``tl.range``/``tl.static_range``, chunk counts and ``for``/``while``;
* the **source**: the learner's part fingerprinted (:mod:`grader.source.fingerprint`), as follows.

Common ground is never evidence: fingerprints of the course's stub and of its reference solution
(``solutions/``) are taken out of every student's. The rest are weighted by how rare they are in
the class (``log((n + 1) / holders)``, as a search engine weighs words): the idiom a third of the
class wrote counts little, a run only two students share counts most. A pair's ``score`` is the
weight they share over the weight of the smaller one's own fingerprints: 1.0 for a file copied
whole, however renamed or reordered.

A pair is listed when the score is high enough *and* the shared code is long enough, and both
bars scale with the puzzle's length, measured in its reference solution's fingerprints
(:func:`threshold`): the shared fingerprints must be at least :data:`MIN_SHARED` (about 75
tokens, some seven lines: shorter stretches are what honest solutions of a short puzzle have in
common, so such a puzzle is never flagged) and :data:`SHARE_OF_LENGTH` of the reference's; the
score must reach :data:`SCORE_LONG` for a long puzzle, more for a shorter one, up to
:data:`SCORE_SHORT`. docs/similarity.md gives the figures behind them.
"""
from __future__ import annotations

import math
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path, PurePosixPath
from typing import Mapping

from grader.course.loader import Course, CourseError
from grader.judge.results import CheckName, StudentResult
from grader.judge.similarity.model import Fragment, PuzzleThreshold, SimilarityReport, SimilarPair
from grader.source.fingerprint import WINDOW, Fingerprints, K, fingerprint, part_names
from grader.source.intake import Student
from grader.source.ir_fingerprint import DEPTH, ir_prints

MIN_SHARED = 25        # fingerprints, at least: one per ~3 tokens, so some 75 tokens of one's own code
SHARE_OF_LENGTH = 0.5  # and half as many as the reference solution has
SCORE_LONG = 0.8       # the share of weight a pair must have in common, for a puzzle of LONG or more
SCORE_SHORT = 0.95     # ... rising to this for the shortest
LONG = 100             # fingerprints of a long reference (puzzle 19's online softmax has 66)
FRAGMENT_LINES = 30
# The compiled kernel's signal (grader.source.ir_fingerprint): docs/similarity.md gives the figures.
IR_SCORE = 0.97       # the share of label weight a pair's compiled kernels must have in common: disguises give 1.0
IR_MIN_SHARED = 40    # labels, at least: a kernel of a dozen ops is everyone's (puzzles 1 to 3)
COMPILED, SOURCE = "compiled kernel", "source"  # the signals, as similarity.json and the page name them
METHOD = (f"two signals. Compiled kernel: the TTIR Triton makes of each kernel at the puzzle's first case "
          f"(inlined, canonicalised, CSE'd, dead code gone), each op labelled by what it computes from "
          f"{DEPTH} ops up its data flow, names, order and sizes dropped; a pair is flagged at a weighted "
          f"share of {IR_SCORE} or more. Source: winnowing (k={K} tokens, window {WINDOW}) over normalised tokens: "
          f"names anonymised, comments dropped, independent statements in a canonical order; the stub's and "
          f"the reference solution's fingerprints are common ground; shared fingerprints weighted by rarity "
          f"in the class")


def threshold(reference: int) -> tuple[int, float]:
    """``(min_shared, min_score)`` for a puzzle whose reference has ``reference`` fingerprints."""
    min_shared = max(MIN_SHARED, math.ceil(SHARE_OF_LENGTH * reference))
    short = min(1.0, max(0.0, 1.0 - reference / LONG))
    return min_shared, round(SCORE_LONG + (SCORE_SHORT - SCORE_LONG) * short, 2)


@dataclass(frozen=True)
class _Code:
    student: str
    shown: str   # the file as submitted, under the student's name
    text: str
    prints: Fingerprints


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _course_prints(course: Course, puzzle_id: str) -> tuple[tuple[str, ...], frozenset[int], int]:
    """The learner part's names, the fingerprints of the stub and of the reference solution
    (common ground), and the reference's count (the puzzle's length)."""
    stub = _read(course.puzzle_file(puzzle_id))
    roots = part_names(stub) or (course.kernel_name(puzzle_id) or "",)
    try:
        solution = _read(course.solution_file(puzzle_id))
    except CourseError:  # a learner's release ships none: the stub's length stands in
        solution = ""
    stub_prints, reference = fingerprint(stub, roots), fingerprint(solution, roots) if solution else None
    common = stub_prints.hashes | (reference.hashes if reference else frozenset())
    return roots, common, len((reference or stub_prints).lines)


def _fragment(code: _Code, hashes: set[int], other: _Code) -> tuple[Fragment, Fragment]:
    """The longest stretch of ``code``'s lines made of shared fingerprints, and where those
    fingerprints sit in ``other``'s file."""
    spans = sorted((code.prints.lines[h], h) for h in hashes)
    clusters: list[tuple[int, int, list[int]]] = []
    for (first, last), h in spans:
        if clusters and first <= clusters[-1][1] + 1:
            start, end, members = clusters[-1]
            clusters[-1] = (start, max(end, last), members + [h])
        else:
            clusters.append((first, last, [h]))
    start, end, members = max(clusters, key=lambda c: (len(c[2]), c[1] - c[0]))
    there = [other.prints.lines[h] for h in members]
    return (_lines(code, start, end), _lines(other, min(a for a, _ in there), max(b for _, b in there)))


def _lines(code: _Code, first: int, last: int) -> Fragment:
    last = min(last, first + FRAGMENT_LINES - 1)
    text = "\n".join(code.text.splitlines()[first - 1:last])
    return Fragment(code.shown, first, last, text)


def pair_scores(codes: list[_Code], common: frozenset[int]):
    """``(i, j, shared fingerprints, score)`` for every pair of ``codes`` that shares any, through
    an index of who holds which fingerprint: pairs that share nothing cost nothing."""
    return set_scores([c.prints.hashes - common for c in codes])


def set_scores(own: list[frozenset[int]]):
    """``(i, j, shared, score)`` of every pair of the sets ``own`` sharing any member, each member
    weighted by its rarity among them."""
    holders = Counter(h for hashes in own for h in hashes)
    weight = {h: math.log((len(own) + 1) / n) for h, n in holders.items()}
    totals = [sum(weight[h] for h in hashes) for hashes in own]
    by_hash: dict[int, list[int]] = defaultdict(list)
    for index, hashes in enumerate(own):
        for h in hashes:
            by_hash[h].append(index)
    shared: dict[tuple[int, int], set[int]] = defaultdict(set)
    for h, indices in by_hash.items():
        for pair in combinations(indices, 2):
            shared[pair].add(h)
    for (i, j), hashes in sorted(shared.items()):
        yield i, j, hashes, sum(weight[h] for h in hashes) / max(min(totals[i], totals[j]), 1e-9)


def compare_puzzle(puzzle_id: str, codes: list[_Code], common: frozenset[int],
                   reference: int, compiled: Mapping[str, str] | None = None
                   ) -> tuple[list[SimilarPair], PuzzleThreshold]:
    """The pairs of ``codes`` above the puzzle's thresholds by either signal, with what they share:
    the source's fingerprints, and the compiled kernels' (``compiled``: TTIR by student, where the
    sm_90 compile made one)."""
    min_shared, min_score = threshold(reference)
    by_source = {tuple(sorted((codes[i].student, codes[j].student))): (hashes, score) for i, j, hashes, score
                 in pair_scores(codes, common)}
    by_ir = dict(ir_scores(compiled or {}))
    # A program three or more students compiled to is a common way to write the puzzle, not a copy:
    # the compiled kernel flags only a pair whose program no third student's matches.
    alike = Counter(who for pair, (shared, score) in by_ir.items() if shared >= IR_MIN_SHARED and score >= IR_SCORE
                    for who in pair)
    named = {c.student: c for c in codes}
    pairs = []
    for key in sorted(by_source.keys() | by_ir.keys()):
        hashes, score = by_source.get(key, (set(), 0.0))
        shared_ir, ir_score = by_ir.get(key, (0, None))
        signals = tuple(name for name, flagged in (
            (COMPILED, ir_score is not None and shared_ir >= IR_MIN_SHARED and ir_score >= IR_SCORE
             and alike[key[0]] == alike[key[1]] == 1),
            (SOURCE, len(hashes) >= min_shared and score >= min_score)) if flagged)
        if not signals:
            continue
        a, b = (named.get(who) for who in key)
        if a is None or b is None:  # a student whose code is only the stub or the reference: never compared
            continue
        fragments = _fragment(a, hashes, b) if hashes else (_whole(a), _whole(b))
        pairs.append(SimilarPair(puzzle_id, key, len(hashes), round(min(score, 1.0), 3), fragments, signals,
                                 None if ir_score is None else round(min(ir_score, 1.0), 3)))
    limits = PuzzleThreshold(puzzle_id, reference, min_shared, min_score, len(codes),
                             sum(1 for c in codes if (compiled or {}).get(c.student)), IR_SCORE)
    return pairs, limits


def _whole(code: _Code) -> Fragment:
    """The first lines of the learner's part (a pair the compiled kernels alone found shares no
    source fingerprint to show)."""
    first = min((first for first, _ in code.prints.lines.values()), default=1)
    return _lines(code, first, first + FRAGMENT_LINES - 1)


def ir_scores(compiled: Mapping[str, str]):
    """``((a, b), (shared labels, score))`` for every pair of students whose compiled kernels
    share labels, each label weighted by its rarity in the class, as source fingerprints are."""
    names = sorted(name for name, ttir in compiled.items() if ttir)
    prints = [ir_prints(compiled[name]).labels for name in names]
    for i, j, shared, score in set_scores(prints):
        yield (names[i], names[j]), (len(shared), score)


def puzzle_codes(course: Course, puzzle_id: str, students: list[Student]) -> tuple[frozenset[int], int, list[_Code]]:
    """The puzzle's common ground and length, and the fingerprinted code of each student who
    wrote some of their own (the stub, or the reference pasted whole, is no one's own)."""
    return _codes(course, puzzle_id, {s.name: (s.files[puzzle_id], s.folder) for s in students
                                      if puzzle_id in s.files})


def _codes(course: Course, puzzle_id: str, files: Mapping[str, tuple[Path, Path]]):
    roots, common, reference = _course_prints(course, puzzle_id)
    codes = []
    for student, (path, folder) in files.items():
        text = _read(path)
        prints = fingerprint(text, roots)
        if prints.lines.keys() - common:
            shown = str(PurePosixPath(student) / path.relative_to(folder).as_posix())
            codes.append(_Code(student, shown, text, prints))
    return common, reference, codes


def compiled_kernels(results: Mapping[str, StudentResult], puzzle_id: str) -> dict[str, str]:
    """Each student's TTIR of ``puzzle_id``, as their sm_90 compile check recorded it (a Helion
    kernel's is that of the Triton Helion generated); none where the check did not run or pass."""
    found = {}
    for student, result in results.items():
        for puzzle in result.results:
            check = puzzle.checks.get(CheckName.GPU_COMPILE) if puzzle.puzzle == puzzle_id else None
            if check is not None and check.ttir:
                found[student] = check.ttir
    return found


def similar_submissions(course: Course, students: list[Student],
                        results: Mapping[str, StudentResult] | None = None) -> SimilarityReport:
    """Every puzzle's similar pairs among ``students`` (their sanitised files, read while the
    batch still has them, and ``results``' compiled kernels), the most similar first."""
    started = time.perf_counter()
    pairs, thresholds = [], []
    for puzzle_id in course.ids:
        common, reference, codes = puzzle_codes(course, puzzle_id, students)
        found, limits = compare_puzzle(puzzle_id, codes, common, reference,
                                       compiled_kernels(results or {}, puzzle_id))
        pairs += found
        thresholds.append(limits)
    pairs.sort(key=lambda p: (-max(p.score, p.compiled_score or 0.0), -p.shared, p.puzzle, p.students))
    return SimilarityReport(tuple(pairs), tuple(thresholds), METHOD, round(time.perf_counter() - started, 3))


# ---- one puzzle, from texts: what benchmarks/similarity_class.py measures ---------------------------

def class_pairs(course: Course, puzzle_id: str, texts: Mapping[str, str],
                compiled: Mapping[str, str]) -> list[SimilarPair]:
    """The flagged pairs of one puzzle among students' files ``texts`` and their TTIR ``compiled``."""
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for student, text in texts.items():
            path = Path(tmp) / student / f"{puzzle_id}.py"
            path.parent.mkdir(parents=True)
            path.write_text(text, encoding="utf-8")
            files[student] = (path, Path(tmp) / student)
        common, reference, codes = _codes(course, puzzle_id, files)
        return compare_puzzle(puzzle_id, codes, common, reference, compiled)[0]

