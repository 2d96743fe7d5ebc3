"""The learner's side of the course, shared by the command line and the notebooks.

Where progress is kept (one file for both), the next hint of a puzzle, hints as plain text
for a terminal, and whether this copy is a learner's release (it has no ``solutions/``).
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from grader.course.loader import Course
from grader.source.attempts import PROGRESS_FILE, TIME_FORMAT, SavedStatus, rank, recorded


class ProgressFile:
    """The learner's status per puzzle, their attempts (:mod:`grader.source.attempts`) and the
    hints they have seen, kept across restarts."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else Path.cwd() / PROGRESS_FILE
        self.unreadable = False  # a file that is there but cannot be read, nor moved aside: never written over
        self.notices: list[str] = []  # what happened to a corrupt file, said once (also on stderr)

    def load(self) -> dict:
        """The saved progress; {} when there is none yet. A file that is there but is not a
        progress record (cut short, edited by hand) is said so and moved aside as
        ``.progress.json.corrupt-<time>``, so that nothing the learner had is written over."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return {}
        except OSError as error:
            self._unreadable(f"cannot be read ({error.strerror or error})", move=False)
            return {}
        try:
            data = json.loads(text)
        except ValueError as error:
            self._unreadable(f"is not valid JSON ({error})")
            return {}
        if not isinstance(data, dict):
            self._unreadable(f"holds a {type(data).__name__}, not a record of puzzles")
            return {}
        return data

    def _unreadable(self, why: str, move: bool = True) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        if move:
            try:
                self.path.rename(aside)
            except OSError:
                move = False
        if move:
            notice = (f"progress: {self.path} {why}: it is kept as {aside.name} and progress starts afresh "
                      f"(copy entries back from it by hand if you need them)")
        else:
            self.unreadable = True
            notice = f"progress: {self.path} {why}, and it is left as it is: progress is not saved until it is fixed"
        if notice not in self.notices:
            self.notices.append(notice)
            print(notice, file=sys.stderr)

    def update(self, puzzle_id: str, **fields) -> None:
        data = self.load()
        if self.unreadable:
            return
        entry = data.setdefault(puzzle_id, {})
        entry.update(fields)
        try:
            self.path.write_text(json.dumps(data, indent=1, sort_keys=True))
        except OSError:
            pass  # a read-only folder: progress is a convenience, never an error

    def status(self, puzzle_id: str) -> str:
        """The best a puzzle has reached: progress never goes backwards."""
        return self.load().get(puzzle_id, {}).get("status", SavedStatus.NOT_ATTEMPTED)

    def latest(self, puzzle_id: str) -> dict | None:
        """The latest check's ``{"status", "at"}``, None where none was saved: a failing check after
        a pass is said as failing, beside the best."""
        latest = self.load().get(puzzle_id, {}).get("latest")
        return latest if isinstance(latest, dict) and isinstance(latest.get("status"), str) else None

    def best_at(self, puzzle_id: str) -> str:
        """When the best result was last reached ("" where not saved)."""
        best = self.load().get(puzzle_id, {}).get("best")
        return best.get("at", "") if isinstance(best, dict) and isinstance(best.get("at", ""), str) else ""

    def attempt(self, puzzle_id: str, status: str, when: str | None = None) -> None:
        """Save a check of ``puzzle_id`` that ended as ``status`` (a SavedStatus). The entry
        keeps the best result and the latest attempt, each with its time; ``status`` is the best;
        and the attempts' history, count and time spent, which a submission carries to ``batch``.
        A check of the untouched stub is no attempt: it changes nothing already recorded."""
        when = when or time.strftime(TIME_FORMAT)
        entry = self.load().get(puzzle_id, {})
        if status == SavedStatus.NOT_ATTEMPTED and entry:
            return
        best = entry.get("best") or ({"status": entry["status"], "at": entry.get("checked", "")}
                                     if "status" in entry else None)  # a file from before "best" was kept
        if best is None or rank(status) >= rank(best["status"]):
            best = {"status": status, "at": when}
        self.update(puzzle_id, status=best["status"], best=best, latest={"status": status, "at": when},
                    checked=when, **(recorded(entry, status, when) if status != SavedStatus.NOT_ATTEMPTED else {}))


PROGRESS_ENV = "TRITON_PUZZLES_PROGRESS"
"""A path that overrides where progress is kept: tests point it at a temporary file."""

def progress_file(course: Course) -> Path:
    """The course's progress file: where the notebooks save it (they run in ``notebooks/``)."""
    override = os.environ.get(PROGRESS_ENV)
    if override:
        return Path(override).expanduser()
    notebooks = course.root / "notebooks"
    return (notebooks if notebooks.is_dir() else course.root) / PROGRESS_FILE


def saved_progress(candidates: list[Path]) -> list[str]:
    """``python -m grader progress``: the first of ``candidates`` that exists, one line per puzzle
    it saved (its status, the hints seen, when it was last checked) and the count passed."""
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        return ["no progress saved yet: grade a puzzle (`python -m grader puzzle01`) "
                "or run a check(...) cell in a notebook first"]
    store = ProgressFile(path)
    data = store.load()
    lines = list(store.notices)
    for puzzle_id in sorted(data):
        entry = data[puzzle_id]
        hints = f", {entry['hints']} hint(s) seen" if entry.get("hints") else ""
        latest = entry.get("latest") or {}
        since = (f", {latest['status']} at the latest check" if latest.get("status")
                 and latest["status"] != entry.get("status") else "")
        lines.append(f"{puzzle_id}: {entry.get('status', 'not attempted')}{since}{hints}"
                     f"{' (last checked ' + entry['checked'] + ')' if entry.get('checked') else ''}")
    passed = sum(e.get("status") == SavedStatus.PASSED for e in data.values())
    return lines + [f"{passed} passed"]


def record(course: Course, results) -> None:
    """Save each graded result's status, as a notebook's check() does."""
    store = ProgressFile(progress_file(course))
    checked = time.strftime(TIME_FORMAT)
    for result in results:
        store.attempt(result.puzzle, result.status.saved, checked)


@dataclass(frozen=True)
class Hints:
    """The hints of one puzzle that the learner has seen, the newest last."""

    puzzle_id: str
    seen: tuple[str, ...]
    total: int
    new: bool  # False once every hint was already shown before this call

    def lines(self) -> list[str]:
        """One Markdown line per hint seen, then a note when there were no more to give."""
        if not self.total:
            return [f"{self.puzzle_id} has no hints."]
        lines = [f"Hint {i + 1}/{self.total}: {text}" for i, text in enumerate(self.seen)]
        if not self.new:
            lines.append(f"No more hints for {self.puzzle_id}: all {self.total} are shown above.")
        return lines


def next_hint(course: Course, puzzle_id: str, store: ProgressFile) -> Hints:
    """Show one more hint of ``puzzle_id`` than before, and remember it in ``store``."""
    hints = tuple(course.puzzle(puzzle_id).hints)
    before = store.load().get(puzzle_id, {}).get("hints", 0)
    before = before if isinstance(before, int) and before >= 0 else 0
    shown = min(before + 1, len(hints))
    if hints:
        store.update(puzzle_id, hints=shown)
    return Hints(puzzle_id, hints[:shown], len(hints), new=before < len(hints))


def plain(markdown: str) -> str:
    """Markdown as plain text shows it: the code keeps its backtick marks, so that it never runs
    into the prose (a terminal with colour styles it instead: ``grader.report.text.show``)."""
    return markdown


def is_release(course: Course) -> bool:
    """A learner's copy: ``python -m grader release`` ships no ``solutions/``."""
    return not (course.root / "solutions").is_dir()


def instructor_only(what: str) -> str:
    return (f"{what} needs the instructor's course, with its solutions/; this is a learner's copy, "
            f"which has none. Grade your own kernels with `python -m grader puzzle01` (or --all).")
