"""``python -m grader watch puzzle07`` (or ``watch FILE.py``): grade again on every save, warm.

The conventions of pytest-watch, cargo watch and dmypy: the last result stays on screen under one
status line, redrawn in place on a terminal (never a scroll of repeated reports); where stdout is
not a terminal, one line per grade. The grading context is kept between saves
(:class:`grader.app.warm_server.WarmGrading`), and serves plain commands while the watch runs.

The file is polled (its time and size, then its content's digest: no dependency, any editor, any
filesystem); a change is graded once the file has stayed the same for a moment, so that an
editor's save by a new file and a rename is graded once, whole. A save that changes nothing is not
graded again. Ctrl-C ends the watch and its workers, with exit code 0.
"""
from __future__ import annotations

import hashlib
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from grader.course.loader import normalise_id as normalise
from grader.judge.failures import FailureKind
from grader.judge.results import CaseResult, PuzzleResult, Report, Status
from grader.report.status_words import status_words

POLL = 0.3    # seconds between looks at the file
SETTLE = 0.1  # a change is graded once the file has stayed the same this long
STALE_EVERY = 2.0  # seconds between looks at the grader's own code, while idle


@dataclass(frozen=True)
class Verdict:
    """One grade as the status line says it."""

    status: Status
    failed: str     # what decided a failure: "case many_chunks", "gpu compile check"; "" otherwise
    seconds: float
    at: str         # the clock time it ended, HH:MM:SS

    @property
    def words(self) -> str:
        said = status_words(self.status).bar.upper()
        return f"{said} {self.failed}" if self.failed else said


def verdict(result: PuzzleResult, seconds: float, at: str) -> Verdict:
    failure = result.telling_failure if result.status == Status.FAIL else None
    if isinstance(failure, CaseResult):
        failed = f"case {failure.name}"
    elif failure is not None:
        name = next((n for n, check in result.checks.items() if check is failure), "a")
        failed = f"{name.replace('_', ' ')} check"
    else:
        failed = ""
    return Verdict(result.status, failed, seconds, at)


def status_line(shown: str, last: Verdict | None, before: Verdict | None = None, busy: bool = False,
                so_far: str = "") -> str:
    """``watching puzzles/puzzle07_x.py — last: FAIL case classic (0.21 s) — 12:03:11``; while a
    grade runs, ``grading…``, what its cases said ``so_far``, and the last result; a changed verdict
    names the one before it."""
    line = f"watching {shown}"
    if busy:
        return line + " — grading…" + (f" {so_far}" if so_far else "") + (f" (last: {last.words})" if last else "")
    if last is None:
        return line
    line += f" — last: {last.words} ({last.seconds:.2f} s) — {last.at}"
    if before is not None and before.words != last.words:
        line += f" — was: {before.words}"
    return line


class Screen:
    """The report and the status line: redrawn in place on a terminal (rich's Live), else one line
    per grade, the failure's first line beside the status."""

    def __init__(self, console=None) -> None:
        from rich.console import Console
        self.console = console or Console(highlight=False)
        self.live = None
        self.report = ""

    def start(self, status: str) -> None:
        if self.console.is_terminal:
            from rich.live import Live
            self.live = Live(self._view(status), console=self.console, auto_refresh=False,
                             vertical_overflow="ellipsis")
            self.live.start(refresh=True)

    def _view(self, status: str):
        from rich.console import Group
        from rich.text import Text

        from grader.report.text import code_spans
        # the status first: a report taller than the terminal is cut at its foot, never the status
        return Group(Text(status, style="bold"), Text(""), code_spans(self.report)) if self.report else \
            Text(status, style="bold")

    def busy(self, status: str) -> None:
        if self.live is not None:
            self.live.update(self._view(status), refresh=True)

    def show(self, report: str, status: str, headline: str) -> None:
        self.report = report
        if self.live is not None:
            self.live.update(self._view(status), refresh=True)
        else:
            self.console.file.write(status + (f" — {headline}" if headline else "") + "\n")
            self.console.file.flush()

    def note(self, text: str) -> None:
        """A line said once (above the live view on a terminal)."""
        self.console.print(text, markup=False, highlight=False) if self.live is not None else \
            (self.console.file.write(text + "\n"), self.console.file.flush())

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


class Follower:
    """One file's content, looked at cheaply: its time and size first, its digest only when they moved."""

    def __init__(self, path: Path) -> None:
        self.path, self.seen, self.digest = path, None, None

    def look(self) -> str | None:
        """The file's content digest, or None while it is missing (mid-rename)."""
        try:
            found = os.stat(self.path)
            moved = (found.st_mtime_ns, found.st_size)
            if moved != self.seen:
                self.digest = hashlib.sha256(self.path.read_bytes()).hexdigest()
                self.seen = moved
        except OSError:
            self.seen = self.digest = None
        return self.digest


@dataclass
class Watch:
    """The loop: grade, then look at ``paths`` every ``interval`` and grade again when one changed.
    ``grade(on_case)`` gives the report; ``stale()`` says the grader's own code changed (the watch
    restarts)."""

    paths: list[Path]
    grade: Callable[[Callable], Report]  # given on_case(puzzle, CaseResult)
    screen: Screen
    shown: str
    interval: float = POLL
    stale: Callable[[], bool] = lambda: False
    verbose: bool = False
    last: Verdict | None = None
    graded: int = 0

    def run(self, stop: threading.Event | None = None, grades: int | None = None) -> str:
        """Watch until ``stop`` is set or ``grades`` grades were shown: "stopped", or "restart"
        when the grader's code changed under it."""
        stop = stop or threading.Event()
        followers = [Follower(p) for p in self.paths]
        seen = [f.look() for f in followers]
        self.screen.start(status_line(self.shown, None, busy=True))
        try:
            while not stop.is_set():
                if self.stale():
                    return "restart"
                self._grade_once()
                if grades is not None and self.graded >= grades:
                    return "stopped"
                seen = self._next_change(followers, seen, stop)
                if seen is None:
                    return "restart"
            return "stopped"
        finally:
            self.screen.stop()

    def _next_change(self, followers: list[Follower], seen: list, stop: threading.Event) -> list | None:
        """Wait for a change that has settled: the digests then; None if the grader's code changed."""
        missing_said, checked = False, time.monotonic()
        while not stop.wait(self.interval):
            if time.monotonic() - checked > STALE_EVERY:  # a digest of grader/ takes about 13 ms
                if self.stale():
                    return None
                checked = time.monotonic()
            now = [f.look() for f in followers]
            if now == seen:
                continue
            while not stop.wait(SETTLE):  # an editor's save: written, renamed; graded once it rests
                again = [f.look() for f in followers]
                if again == now:
                    break
                now = again
            if None in now:  # removed, or mid-rename longer than a moment: wait for it to come back
                if not missing_said:
                    gone = self.paths[now.index(None)]
                    self.screen.busy(status_line(self.shown, self.last) + f" — {gone.name} is missing; waiting")
                    missing_said = True
                continue
            return now
        return seen

    def _grade_once(self) -> None:
        self.screen.busy(status_line(self.shown, self.last, busy=True))
        started, judged = time.perf_counter(), []

        def on_case(puzzle: str, case: CaseResult) -> None:
            """A long puzzle's small cases are judged in a second: said at once, on a terminal."""
            judged.append(case)
            failed = next((c for c in judged if not c.passed and c.kind != FailureKind.SKIPPED), None)
            so_far = f"FAIL case {failed.name} so far" if failed else \
                f"{len(judged)} case{'s pass' if len(judged) > 1 else ' passes'} so far"
            self.screen.busy(status_line(self.shown, self.last, busy=True, so_far=so_far))
        report = self.grade(on_case)
        seconds = time.perf_counter() - started
        from dataclasses import replace

        from grader.report.text import render
        result = report.results[0]
        before, self.last = self.last, verdict(result, seconds, time.strftime("%H:%M:%S"))
        self.graded += 1
        headline = "" if result.passed else (result.message.splitlines() or [""])[0]
        self.screen.show(render(replace(report, seconds=seconds), self.verbose),
                         status_line(self.shown, self.last, before), headline)


def run(course, puzzle: str, path: Path, options, *, interval: float = POLL, serve: bool = True,
        record: bool = False, verbose: bool = False, screen: Screen | None = None,
        stop: threading.Event | None = None, grades: int | None = None) -> int:
    """``python -m grader watch``: the course's ``puzzle`` graded from ``path`` on every save, until
    Ctrl-C (exit 0). ``record``: progress saved as the plain command saves it (puzzles/ files).
    ``stop``, ``grades``: an end for a caller other than a person (tests, benchmarks)."""
    from grader.app.warm_link import Unsafe
    from grader.app.warm_server import AlreadyServed, WarmGrading, WarmServer
    path = path.resolve()
    shown, screen = _shown(course.root, path), screen or Screen()
    warm = server = None
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _interrupt) if main else None  # a task runner stops it as Ctrl-C does
    try:
        warm = WarmGrading(course, options, [path])
        if serve:
            try:
                server = WarmServer(warm)
                server.start()
            except (AlreadyServed, Unsafe) as why:
                server = None
                screen.note(f"note: plain commands grade fresh while this watch runs: {why}")

        def grade(on_case) -> Report:
            report = warm.grade(puzzle, path, on_case)
            if record:
                from grader.app.learner import record as save
                save(course, report.results)
            return report
        follow = [path, *({course.puzzle_file(puzzle).resolve()} - {path})]  # the spec's file too
        how = Watch(follow, grade, screen, shown, interval, warm.stale, verbose=verbose).run(stop, grades)
    except KeyboardInterrupt:
        how = "stopped"
    finally:
        if main:
            signal.signal(signal.SIGTERM, before)
        screen.stop()
        if server is not None:
            server.stop()
        if warm is not None:
            warm.close(wait=False)  # nothing to finish: a grade under way is the learner's old code
    if how == "restart":
        from grader.app.warm_server import restart
        return restart("watch")
    print(f"stopped watching {shown}", file=sys.stderr)
    return 0


def target(course, text: str, file: Path | None = None) -> tuple[str, Path, bool]:
    """What ``watch TEXT [--file FILE]`` follows: the puzzle, its kernel's file, and whether that
    is the course's own puzzle file (whose grades are saved as progress, as the plain command saves
    them). A usage problem is a CourseError, said in one line."""
    from grader.app.targets import resolve
    from grader.course.loader import CourseError
    looks_like_file = text.endswith((".py", ".ipynb")) or os.sep in text or Path(text).is_file()
    if looks_like_file and file is not None:
        raise CourseError(f"watch follows one file: {text} or --file {file}, not both")
    if looks_like_file:
        file, ids = Path(text), []
    else:
        try:
            ids = [normalise(text)]
        except CourseError:
            raise CourseError(f"{text!r} is neither a puzzle id (write it like puzzle07) nor a .py file") from None
    if file is not None and file.suffix == ".ipynb":
        raise CourseError(f"watch follows a .py file, and {file} is a notebook: its check() cells grade it")
    found = resolve(course, ids, file=file)
    if len(found) > 1:
        named = ", ".join(t.puzzle for t in found)
        raise CourseError(f"{file} holds the kernels of {named}: watch one, e.g. "
                          f"`python -m grader watch {found[0].puzzle} --file {file}`")
    return found[0].puzzle, found[0].path, file is None


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _shown(root: Path, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
