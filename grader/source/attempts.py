"""The learner's attempts, as their progress file (``.progress.json``) keeps them.

Every check of a puzzle (the command line's or a notebook's) is an attempt: the file keeps the
newest :data:`MAX_HISTORY` of them with their time and outcome, and, whatever the history
forgets, how many there were, when the first was, when the puzzle first passed, and the time
spent on it. Time spent is the sum of the gaps between consecutive attempts of the puzzle, each
gap counted up to :data:`IDLE`: a longer one is a break (a night, another puzzle), not work.

The writer is the learner's side (:class:`grader.app.learner.ProgressFile`); the reader is a
class's intake, where the file comes with a submission: untrusted bytes, read with a size cap
and typed by msgspec, so a hand-edited or broken file is a problem line, never a crash.
"""
from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass

import msgspec

PROGRESS_FILE = ".progress.json"
MAX_HISTORY = 50           # attempts kept per puzzle, the newest: 34 puzzles stay under 150 KB
IDLE = 30 * 60             # seconds: a longer gap between two attempts is a break, not work
MAX_BYTES = 1 << 20        # a submitted progress file larger than this is not read
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


class SavedStatus(enum.StrEnum):
    """A puzzle's status as the progress file saves it (a JSON file: the words stay these strings).
    The file keeps the best reached, by :attr:`rank`."""

    NOT_ATTEMPTED = "not attempted"
    UNSUPPORTED = "unsupported"
    FAILING = "failing"
    ON_A_GPU = "grade on a GPU"
    PASSED = "passed"

    @property
    def rank(self) -> int:
        """How far along the way it is: failing and "grade on a GPU" are as far as each other."""
        return _RANK[self]


_RANK = {SavedStatus.NOT_ATTEMPTED: 0, SavedStatus.UNSUPPORTED: 1, SavedStatus.FAILING: 2,
         SavedStatus.ON_A_GPU: 2, SavedStatus.PASSED: 3}


def rank(saved: str) -> int:
    """The rank of a word a progress file holds; 0 for one it should not (a file edited by hand)."""
    try:
        return SavedStatus(saved).rank
    except ValueError:
        return 0


@dataclass(frozen=True)
class Attempts:
    """One puzzle's attempts, as a submission's progress file tells them."""
    puzzle: str
    count: int
    seconds: float             # time spent (gaps between attempts, each at most IDLE)
    first: str                 # when the first attempt was, TIME_FORMAT in the learner's clock
    last: str
    best: str                  # the best status reached: a SavedStatus where the file is sound
    passed_at_attempt: int | None = None  # the attempt that first passed


def _parse(when: str) -> datetime.datetime | None:
    try:
        return datetime.datetime.strptime(when, TIME_FORMAT)
    except (TypeError, ValueError):
        return None


def gap(before: str, after: str) -> float:
    """Seconds of work between two attempts: their distance, up to IDLE; 0 if either time is unreadable."""
    start, end = _parse(before), _parse(after)
    if start is None or end is None:
        return 0.0
    return min(max((end - start).total_seconds(), 0.0), IDLE)


def recorded(entry: dict, status: str, when: str) -> dict:
    """The fields of a puzzle's progress entry after one more attempt ending as ``status``."""
    history = [h for h in entry.get("history", []) if isinstance(h, dict)]
    latest = entry.get("latest") if isinstance(entry.get("latest"), dict) else {}
    # a file from before the history: its latest check is the previous attempt, unless it was the stub's
    previous = history[-1].get("at") if history else (latest.get("at") if latest.get("status") not in
                                                       (None, SavedStatus.NOT_ATTEMPTED) else None)
    count = entry.get("attempts") if isinstance(entry.get("attempts"), int) else len(history)
    spent = entry.get("spent") if isinstance(entry.get("spent"), (int, float)) else 0.0
    fields = {"attempts": count + 1, "spent": round(spent + (gap(previous, when) if previous else 0.0), 1),
              "first": entry.get("first") or when,
              "history": (history + [{"at": when, "status": status}])[-MAX_HISTORY:]}
    if status == SavedStatus.PASSED and not entry.get("passed"):
        fields["passed"] = {"at": when, "attempt": count + 1}
    return fields


# ---- reading a submitted file ------------------------------------------------------------------

class _Step(msgspec.Struct):
    at: str = ""
    status: str = ""


class _Passed(msgspec.Struct):
    at: str = ""
    attempt: int = 0


class _Entry(msgspec.Struct):
    status: str = SavedStatus.NOT_ATTEMPTED.value  # a str: a hand-edited file may hold any word
    attempts: int | None = None
    spent: float = 0.0
    first: str = ""
    history: list[_Step] = []
    latest: _Step | None = None
    passed: _Passed | None = None


class ProgressError(Exception):
    """A submitted progress file that does not read as one."""


def read_attempts(raw: bytes, puzzle_ids: list[str]) -> tuple[Attempts, ...]:
    """The attempts of each of ``puzzle_ids`` that a progress file records, in the course's
    order; :class:`ProgressError` where the bytes are not a progress file."""
    if len(raw) > MAX_BYTES:
        raise ProgressError(f"is too large (over {MAX_BYTES >> 20} MiB)")
    try:
        data = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
    except msgspec.DecodeError as exc:
        raise ProgressError(f"is not a progress file ({exc})") from None
    found = []
    for puzzle_id in puzzle_ids:
        if puzzle_id not in data:
            continue
        try:
            entry = msgspec.json.decode(data[puzzle_id], type=_Entry)
        except msgspec.DecodeError as exc:
            raise ProgressError(f"has an unreadable entry for {puzzle_id} ({exc})") from None
        history = entry.history[-MAX_HISTORY:]
        count = entry.attempts if entry.attempts is not None else len(history) or (1 if entry.latest else 0)
        if count <= 0:
            continue  # hints seen, nothing checked
        times = [h.at for h in history] or [entry.latest.at if entry.latest else ""]
        spent = entry.spent if entry.attempts is not None else sum(gap(a, b) for a, b in zip(times, times[1:]))
        found.append(Attempts(puzzle_id, count, round(max(spent, 0.0), 1), entry.first or times[0], times[-1],
                              entry.status,
                              entry.passed.attempt if entry.passed and entry.passed.attempt > 0 else None))
    return tuple(found)
