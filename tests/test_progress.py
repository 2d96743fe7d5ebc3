"""Progress of batch and --all runs: plain lines in a log, a rich bar on a terminal."""
import io

from rich.console import Console

from grader.report.progress import Progress, duration


def ticking(*times):
    """A clock that returns each of ``times`` in turn: the start, then one per step."""
    values = iter(times)
    return lambda: next(values)


def test_plain_lines_when_not_a_terminal():
    out = io.StringIO()
    progress = Progress(3, console=Console(file=out, width=40), clock=ticking(0.0, 12.0, 30.0, 200.0))
    assert progress.bar is None
    progress.step("alice", "17/17")
    progress.step("a-student-with-a-very-long-name-that-does-not-fit", "3/17")
    progress.step("carol", "0/17")
    assert out.getvalue().splitlines() == [
        "[1/3] alice 17/17 (12 s, about 24 s left)",
        "[2/3] a-student-with-a-very-long-name-that-does-not-fit 3/17 (30 s, about 15 s left)",
        "[3/3] carol 0/17 (3 min)",
    ]
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_rich_bar_on_a_terminal():
    out = io.StringIO()
    progress = Progress(2, console=Console(file=out, force_terminal=True, width=100))
    assert progress.bar is not None
    progress.step("alice", "17/17")
    assert progress.bar is not None
    progress.step("bob", "16/17")
    assert progress.bar is None  # stopped after the last step
    assert "[1/2]" not in out.getvalue()  # no plain lines
    assert "\x1b" in out.getvalue()  # drawn with terminal control codes


def test_durations():
    assert [duration(s) for s in (0.4, 89, 150, 5400, 7200)] == ["0 s", "89 s", "2 min", "1.5 h", "2.0 h"]


def test_the_bars_time_left_is_the_runs_average_pace():
    """Two jobs: students finish in pairs, a minute apart. With 1 of 10 left, about 30 s are left,
    not rich's guess from the last 30 s alone (the last pair: 2 s apart, so "2 s left")."""
    out, now = io.StringIO(), [0.0]
    progress = Progress(10, console=Console(file=out, force_terminal=True, width=100), clock=lambda: now[0])
    for i in range(9):
        now[0] = 60.0 * (i // 2 + 1) + 2.0 * (i % 2)
        progress.step(f"student{i}", "34/34")
    left = progress.bar.tasks[0].time_remaining
    progress.close()
    assert left is not None and 20 <= left <= 40, left


def test_a_corrupt_progress_file_is_reported_and_kept_aside_never_written_over(tmp_path, capsys):
    """A `.progress.json` cut short reads as nothing saved: the learner is told, the file is moved
    aside as `.progress.json.corrupt-<time>`, and the next check starts a fresh one (issue 34)."""
    from grader.app.learner import ProgressFile, saved_progress
    path = tmp_path / ".progress.json"
    path.write_text('{"puzzle01": {"status": "passed"')
    lines = saved_progress([path])
    aside = list(tmp_path.glob(".progress.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == '{"puzzle01": {"status": "passed"'
    assert lines[0].startswith(f"progress: {path} is not valid JSON (")
    assert lines[0].endswith(f": it is kept as {aside[0].name} and progress starts afresh "
                             "(copy entries back from it by hand if you need them)")
    assert lines[-1] == "0 passed"
    assert capsys.readouterr().err.strip() == lines[0]
    store = ProgressFile(path)
    store.attempt("puzzle02", "passed")
    assert store.status("puzzle02") == "passed" and aside[0].read_text().startswith('{"puzzle01"')


def test_a_progress_file_that_cannot_be_moved_aside_is_left_alone(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    from grader.app.learner import ProgressFile
    path = tmp_path / ".progress.json"
    path.write_text("[1, 2]")

    def refuse(self, target):
        raise PermissionError("read-only folder")
    monkeypatch.setattr(Path, "rename", refuse)
    store = ProgressFile(path)
    store.attempt("puzzle01", "passed")
    assert path.read_text() == "[1, 2]"
    assert capsys.readouterr().err.strip() == (f"progress: {path} holds a list, not a record of puzzles, and it is "
                                               "left as it is: progress is not saved until it is fixed")
