"""Progress of a long grading run (a class, or ``--all``), on stderr.

On a terminal: a rich progress bar with the time left, gone once the run ends so the report
follows cleanly. Anywhere else (a CI log, a file): one plain line per item done, because a
redrawn line turns into garbage there.
"""
from __future__ import annotations

import threading
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as Bar
from rich.text import Text


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """Call :meth:`step` from any thread as each item finishes; it stops itself after the last."""

    def __init__(self, total: int, console: Console | None = None, clock=time.perf_counter) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        self.total, self.done, self.clock = total, 0, clock
        self.started = clock()
        self.lock = threading.Lock()
        self.bar: Bar | None = None
        if self.console.is_terminal and total > 0:
            self.bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                           console=self.console, transient=True, get_time=clock,
                           # rich's default estimates speed from the last 30 s: with a student every
                           # half minute that is one sample, and the time left jumps (12 min with 1 to go)
                           speed_estimate_period=24 * 3600)
            self.task = self.bar.add_task("grading", total=total)
            self.bar.start()

    def step(self, name: str, said: str = "") -> None:
        """One more item done: ``name``, and what is ``said`` of it (a status's bar word, a student's total)."""
        with self.lock:
            self.done += 1
            label = f"{name} {said}".strip()
            if self.bar is not None:
                self.bar.update(self.task, advance=1, description=label)
                if self.done >= self.total:
                    self.close()
                return
            spent = self.clock() - self.started
            timing = duration(spent)
            if self.done < self.total:
                timing += f", about {duration(spent / self.done * (self.total - self.done))} left"
            # Text, not markup: "[3/40]" would be read as a style tag.
            self.console.print(Text(f"[{self.done}/{self.total}] {label} ({timing})"), soft_wrap=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
