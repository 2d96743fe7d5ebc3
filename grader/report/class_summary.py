"""What a class got right and wrong, per puzzle, counted from the students' results for the
class page: how many passed, failed or did not try, the commonest kinds of failure, and the
known mistakes (look-alikes) the grader recognised. Counting only: every verdict is the judge's."""
from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass

from grader.judge.failures import LOOKS_LIKE, label
from grader.judge.results import PuzzleResult, Status, StudentResult
from grader.report.status_words import UNDECIDED_GROUP, status_words

# "... It looks like the output stored transposed (an N0 x N1 matrix): store element ..." -> its name
_LOOK_ALIKE = re.compile(re.escape(LOOKS_LIKE) + r" (.+?): ")
UNDECIDED = tuple(s for s in Status if status_words(s).group == UNDECIDED_GROUP)
# Attempt figures need progress files from this many students: one student's 36 minutes on
# puzzle 1 is that student's afternoon, not the class's.
MIN_ATTEMPT_STUDENTS = 3


@dataclass(frozen=True)
class PuzzleSummary:
    puzzle: str
    title: str
    students: int           # in the class (graded)
    passed: int
    failed: int
    not_attempted: int
    undecided: int          # this Triton cannot run it, only a GPU can decide, or the grader broke
    kinds: tuple[tuple[str, int], ...]        # (what went wrong, students), commonest first
    look_alikes: tuple[tuple[str, int], ...]  # (the mistake recognised, students), commonest first
    attempts_median: float | None = None      # over the students whose progress file tells, when
    minutes_median: float | None = None      # there are MIN_ATTEMPT_STUDENTS of them at least
    attempts_from: int = 0                    # how many students' progress files tell this puzzle

    @property
    def pass_rate(self) -> float:
        return self.passed / self.students if self.students else 0.0

    def lines(self) -> list[str]:
        """"19 of 40: the running maximum raised without rescaling": the look-alikes first (they
        name the mistake), then the kinds of failure."""
        return ([f"{n} of {self.students}: {name}" for name, n in self.look_alikes] +
                [f"{n} of {self.students}: {kind}" for kind, n in self.kinds])


def look_alike(result: PuzzleResult) -> str | None:
    """The known mistake the grader recognised in the result's most telling failure, if any."""
    failure = result.telling_failure
    match = _LOOK_ALIKE.search(failure.message) if failure is not None else None
    return match.group(1) if match else None


def summarise(results: list[StudentResult], puzzle_ids: list[str], top: int = 3) -> list[PuzzleSummary]:
    graded = [s for s in results if s.results]
    summaries = []
    for puzzle_id in puzzle_ids:
        mine = [r for s in graded for r in s.results if r.puzzle == puzzle_id]
        statuses = Counter(r.status for r in mine)
        kinds, looks = Counter(), Counter()
        for r in mine:
            if r.status != Status.FAIL:
                continue
            failure = r.telling_failure
            kinds[label(failure.kind) if failure is not None else "failed"] += 1
            if (name := look_alike(r)) is not None:
                looks[name] += 1
        tries = [a for s in graded for a in s.attempts if a.puzzle == puzzle_id]
        enough = len(tries) >= MIN_ATTEMPT_STUDENTS
        summaries.append(PuzzleSummary(
            puzzle_id, next((r.title for r in mine), ""), len(graded), statuses[Status.PASS], statuses[Status.FAIL],
            statuses[Status.NOT_ATTEMPTED], sum(statuses[s] for s in UNDECIDED),
            tuple(kinds.most_common(top)), tuple(looks.most_common(top)),
            statistics.median(a.count for a in tries) if enough else None,
            round(statistics.median(a.seconds for a in tries) / 60, 1) if enough else None, len(tries)))
    return summaries


def totals(results: list[StudentResult], puzzles: int) -> list[int]:
    """How many students have each total, from 0 to ``puzzles`` passed."""
    counts = [0] * (puzzles + 1)
    for student in results:
        if student.results:
            counts[min(student.total, puzzles)] += 1
    return counts
