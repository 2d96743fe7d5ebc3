"""Similar submissions: per puzzle, every student's learner part fingerprinted
(:mod:`grader.source.fingerprint`) and compared with every other's.

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
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path, PurePosixPath

from grader.course.loader import Course, CourseError
from grader.judge.similarity.model import Fragment, PuzzleThreshold, SimilarityReport, SimilarPair
from grader.source.fingerprint import K, WINDOW, Fingerprints, fingerprint, part_names
from grader.source.intake import Student

MIN_SHARED = 25        # fingerprints, at least: one per ~3 tokens, so some 75 tokens of one's own code
SHARE_OF_LENGTH = 0.5  # and half as many as the reference solution has
SCORE_LONG = 0.8       # the share of weight a pair must have in common, for a puzzle of LONG or more
SCORE_SHORT = 0.95     # ... rising to this for the shortest
LONG = 100             # fingerprints of a long reference (puzzle 19's online softmax has 66)
FRAGMENT_LINES = 30
METHOD = (f"winnowing (k={K} tokens, window {WINDOW}) over normalised tokens: names anonymised, comments "
          f"dropped, independent statements in a canonical order; the stub's and the reference solution's "
          f"fingerprints are common ground; shared fingerprints weighted by rarity in the class")


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
    own = [c.prints.hashes - common for c in codes]
    holders = Counter(h for hashes in own for h in hashes)
    weight = {h: math.log((len(codes) + 1) / n) for h, n in holders.items()}
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
                   reference: int) -> tuple[list[SimilarPair], PuzzleThreshold]:
    """The pairs of ``codes`` above the puzzle's thresholds, with what they share."""
    min_shared, min_score = threshold(reference)
    pairs = []
    for i, j, hashes, score in pair_scores(codes, common):
        if len(hashes) >= min_shared and score >= min_score:
            a, b = codes[i], codes[j]
            pairs.append(SimilarPair(puzzle_id, (a.student, b.student), len(hashes), round(min(score, 1.0), 3),
                                     _fragment(a, hashes, b)))
    return pairs, PuzzleThreshold(puzzle_id, reference, min_shared, min_score, len(codes))


def puzzle_codes(course: Course, puzzle_id: str, students: list[Student]) -> tuple[frozenset[int], int, list[_Code]]:
    """The puzzle's common ground and length, and the fingerprinted code of each student who
    wrote some of their own (the stub, or the reference pasted whole, is no one's own)."""
    roots, common, reference = _course_prints(course, puzzle_id)
    codes = []
    for student in students:
        path = student.files.get(puzzle_id)
        if path is None:
            continue
        text = _read(path)
        prints = fingerprint(text, roots)
        if prints.lines.keys() - common:
            shown = str(PurePosixPath(student.name) / path.relative_to(student.folder).as_posix())
            codes.append(_Code(student.name, shown, text, prints))
    return common, reference, codes


def similar_submissions(course: Course, students: list[Student]) -> SimilarityReport:
    """Every puzzle's similar pairs among ``students`` (their sanitised files, read while the
    batch still has them), the most similar first."""
    started = time.perf_counter()
    pairs, thresholds = [], []
    for puzzle_id in course.ids:
        common, reference, codes = puzzle_codes(course, puzzle_id, students)
        found, limits = compare_puzzle(puzzle_id, codes, common, reference)
        pairs += found
        thresholds.append(limits)
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.puzzle, p.students))
    return SimilarityReport(tuple(pairs), tuple(thresholds), METHOD, round(time.perf_counter() - started, 3))
