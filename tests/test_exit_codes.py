"""Every command ends through one wrapper (grader.app.frontend.run_command), which maps how it
ended to an ExitCode: its own code, a usage problem 2, a puzzle file that does not load 1,
Ctrl-C 130, a reader gone 1, and the grader's own bug 3, said as such."""
import json

import pytest

from grader.app.frontend import UsageProblem, run_command
from grader.course.loader import CourseError, PuzzleLoadError
from grader.judge.results import ExitCode


def raising(exc):
    def command(argv):
        raise exc
    return command


def test_the_command_s_own_code_passes_through():
    assert run_command(lambda argv: ExitCode.FAILED, []) == 1
    assert run_command(lambda argv: 0, ["--json"]) == 0


@pytest.mark.parametrize("exc", [UsageProblem("--viz draws one puzzle"), CourseError("--viz draws one puzzle")])
def test_a_usage_problem_is_one_line_and_2(capsys, exc):
    assert run_command(raising(exc), []) == ExitCode.USAGE_ERROR == 2
    assert capsys.readouterr().err == "error: --viz draws one puzzle\n"
    assert run_command(raising(exc), ["--json"]) == 2
    assert json.loads(capsys.readouterr().out) == {"error": "--viz draws one puzzle"}


def test_argparse_exits_keep_their_code():
    assert run_command(raising(SystemExit(2)), []) == 2
    assert run_command(raising(SystemExit(0)), []) == 0


def test_a_puzzle_file_that_does_not_load_is_a_failure_with_its_line(capsys):
    error = PuzzleLoadError("puzzles/puzzle07_long_sum.py line 12: SyntaxError: invalid syntax", "syntax", 12)
    assert run_command(raising(error), []) == ExitCode.FAILED
    assert capsys.readouterr().err == f"error: {error.message}\n"


def test_ctrl_c_is_130(capsys):
    assert run_command(raising(KeyboardInterrupt()), []) == ExitCode.INTERRUPTED == 130
    assert capsys.readouterr().err == "stopped (Ctrl-C)\n"


def test_a_grader_bug_is_3_and_says_so(capsys):
    assert run_command(raising(ZeroDivisionError("division by zero")), []) == ExitCode.INTERNAL_ERROR == 3
    err = capsys.readouterr().err
    assert err.startswith("grader error (a bug in the grader, not in your code; please report it with what follows):")
    assert "ZeroDivisionError: division by zero" in err and "Traceback" in err


def test_the_command_line_and_every_subcommand_end_through_it(monkeypatch):
    from grader.app import cli, commands
    seen = []
    monkeypatch.setattr(cli, "run_command", lambda command, argv: seen.append(command.__name__) or 0)
    for name in commands.SUBCOMMANDS:
        cli.main([name, "--help"])
    cli.main(["puzzle01"])
    assert seen == [f.__name__ for f in commands.SUBCOMMANDS.values()] + ["grade_main"]


def test_a_grader_that_breaks_before_grading_is_that_puzzle_s_error(monkeypatch, tmp_path):
    """Not a dead pool thread and a puzzle missing from the report (seen in CI: Python 3.11's
    ast.parse raising SystemError while two threads parsed at once)."""
    from conftest import COURSE
    from grader.judge import session
    from grader.judge.kinds import kind_of
    from grader.judge.options import Options

    def broken(*args, **kwargs):
        raise SystemError("AST constructor recursion depth mismatch (before=30, after=28)")
    from dataclasses import replace
    kind = replace(kind_of(COURSE.puzzle("puzzle01")), runner=lambda: broken)
    monkeypatch.setattr(session, "kind_of", lambda puzzle: kind)
    crew = session.Crew(worker=None)
    result = session.grade_puzzle(COURSE, "puzzle01", COURSE.puzzle_file("puzzle01"), crew, Options())
    assert result.status == "error"
    assert result.message == "grader error: SystemError: AST constructor recursion depth mismatch (before=30, after=28)"


@pytest.mark.parametrize("status", [0, 1, 3])
def test_python_m_grader_ends_with_the_command_s_status_its_output_and_its_exit_hooks(tmp_path, status):
    """``python -m grader`` skips Python's teardown of its modules (torch's: a third of a second),
    but only once the status is known, the output flushed and every exit hook run."""
    import subprocess
    import sys
    marker = tmp_path / "hook-ran"
    program = f"""
import atexit, runpy, sys
import grader.app.cli as cli
def main():
    atexit.register(lambda: open({str(marker)!r}, "w").write("yes"))
    sys.stdout.write("x" * 100000)  # more than a pipe holds: left in the buffer until flushed
    return {status}
cli.main = main
runpy.run_module("grader", run_name="__main__")
"""
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert ran.returncode == status, ran.stderr
    assert ran.stdout == "x" * 100000
    assert marker.read_text() == "yes"


def test_python_m_grader_that_raises_ends_as_python_does():
    import subprocess
    import sys
    program = """
import runpy
import grader.app.cli as cli
def main():
    raise RuntimeError("a bug past run_command")
cli.main = main
runpy.run_module("grader", run_name="__main__")
"""
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 1 and "RuntimeError: a bug past run_command" in ran.stderr
