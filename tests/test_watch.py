"""The editor's loop (issue 44): `python -m grader watch` grades again on every save with warm
workers, and a plain command asks them (grader.app.warm_link) only where the answer is a fresh
run's: same course, code, Python, environment, options and jail, same user, a private folder.
The fast tier drives the loop and the server with stand-ins for grading; the slow tests grade.
Speed itself is measured by benchmarks/latency.py (--only watch), never here."""
from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grader.app import warm_link, warm_server
from grader.app.warm_link import Fresh, ask, identity
from grader.app.warm_server import AlreadyServed, WarmServer
from grader.app.watch import Screen, Verdict, Watch, status_line, verdict
from grader.course.loader import Course
from grader.judge.failures import FailureKind
from grader.judge.options import Options
from grader.judge.results import CaseResult, CheckResult, PuzzleResult, Report, Status
from paths import ROOT
from pristine import PRISTINE

COURSE = Course(PRISTINE)
SOLUTION_01 = (PRISTINE / "solutions" / "puzzle01_constant_add.py").read_text()
WRONG_01 = SOLUTION_01.replace("x + 10.0", "x + 11.0")


def _case(name: str, passed: bool, message: str = "") -> CaseResult:
    return CaseResult(name=name, sizes={"N0": 32}, blocks={"B0": 32}, seed=0, grid=(1,), passed=passed,
                      kind=None if passed else FailureKind.MISMATCH, message=message, max_abs_err=float("inf"))


def _report(status: Status, cases=(), checks=None, message: str = "") -> Report:
    return Report((PuzzleResult("puzzle01", "Constant add", status, "x.py", "cpu", tuple(cases), checks or {},
                                message),))


FAILING = _report(Status.FAIL, [_case("classic", False, "case classic: wrong values in `z`"), _case("wide", True)],
                  message="case classic: wrong values in `z`")


# ---- the status line ---------------------------------------------------------------------------
def test_the_status_line_says_the_last_result_its_time_and_the_one_before():
    fail = Verdict(Status.FAIL, "case many_chunks", 0.214, "12:03:11")
    shown = "puzzles/puzzle07_long_sum.py"
    assert status_line(shown, fail) == \
        "watching puzzles/puzzle07_long_sum.py — last: FAIL case many_chunks (0.21 s) — 12:03:11"
    passed = Verdict(Status.PASS, "", 0.18, "12:03:40")
    assert status_line(shown, passed, fail) == \
        "watching puzzles/puzzle07_long_sum.py — last: PASS (0.18 s) — 12:03:40 — was: FAIL case many_chunks"
    assert status_line(shown, passed, passed) == "watching puzzles/puzzle07_long_sum.py — last: PASS (0.18 s) — 12:03:40"
    assert status_line(shown, fail, busy=True) == \
        "watching puzzles/puzzle07_long_sum.py — grading… (last: FAIL case many_chunks)"
    assert status_line(shown, None, busy=True) == "watching puzzles/puzzle07_long_sum.py — grading…"
    assert status_line(shown, passed, busy=True, so_far="6 cases pass so far") == \
        "watching puzzles/puzzle07_long_sum.py — grading… 6 cases pass so far (last: PASS)"


def test_a_verdict_names_what_decided_it():
    assert verdict(FAILING.results[0], 0.2, "12:00:00").words == "FAIL case classic"
    compile_failure = _report(Status.FAIL, [_case("classic", True)],
                              {"gpu_compile": CheckResult(False, "does not compile", FailureKind.COMPILE)})
    assert verdict(compile_failure.results[0], 0.2, "12:00:00").words == "FAIL gpu compile check"
    assert verdict(_report(Status.NOT_ATTEMPTED).results[0], 0.1, "12:00:00").words == "NOT ATTEMPTED"
    assert verdict(_report(Status.PASS, [_case("classic", True)]).results[0], 0.1, "12:00:00").words == "PASS"


# ---- the loop, with a stand-in for grading -------------------------------------------------------
def _watch_in_thread(path: Path, grades: int, graded: list):
    """A watch of ``path`` whose grade reads the file (PASS when it says so), its screen not a terminal."""
    def grade(on_case) -> Report:
        text = path.read_text()
        graded.append(text)
        report = _report(Status.PASS, [_case("classic", True)]) if "good" in text else FAILING
        for case in report.results[0].cases:
            on_case("puzzle01", case)
        return report
    out = io.StringIO()
    from rich.console import Console
    watch = Watch([path], grade, Screen(Console(file=out, force_terminal=False)), "k.py", interval=0.02)
    stop = threading.Event()
    thread = threading.Thread(target=watch.run, args=(stop, grades), daemon=True)
    thread.start()
    return watch, stop, thread, out


def _until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the watch did not get there in time"
        time.sleep(0.01)


def test_the_watch_grades_again_on_each_save_once_and_one_line_each_off_a_terminal(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("bad 1")
    graded: list[str] = []
    watch, stop, thread, out = _watch_in_thread(path, 4, graded)
    try:
        _until(lambda: len(graded) == 1)
        path.write_text("good 2")                      # a plain save
        _until(lambda: len(graded) == 2)
        os.utime(path)                                 # touched, the same content: not graded again
        time.sleep(0.2)
        assert len(graded) == 2
        spare = tmp_path / ".k.py.swp"                 # an editor's save: a new file, renamed over the old
        spare.write_text("bad 3")
        path.unlink()
        time.sleep(0.05)
        os.replace(spare, path)
        _until(lambda: len(graded) == 3)
        path.unlink()                                  # gone a while: the watch waits and says so
        time.sleep(0.3)
        assert len(graded) == 3
        path.write_text("good 4")
        thread.join(10)
        assert not thread.is_alive()
    finally:
        stop.set()
    assert graded == ["bad 1", "good 2", "bad 3", "good 4"]
    lines = out.getvalue().splitlines()
    assert len(lines) == 4 and all(line.startswith("watching k.py — last: ") for line in lines), lines
    assert " — last: FAIL case classic (" in lines[0] and lines[0].endswith(" — case classic: wrong values in `z`")
    assert " — was: FAIL case classic" in lines[1] and " — last: PASS (" in lines[1]
    assert lines[2].endswith("— was: PASS — case classic: wrong values in `z`")


def test_on_a_terminal_the_status_says_the_cases_judged_so_far(tmp_path):
    class Recorded(Screen):
        def __init__(self):
            self.said = []

        def start(self, status):
            self.said.append(status)

        busy = start

        def show(self, report, status, headline):
            self.said.append(status)

        def stop(self):
            pass
    path = tmp_path / "k.py"
    path.write_text("good")
    screen = Recorded()
    reports = iter([_report(Status.PASS, [_case("classic", True), _case("wide", True)]), FAILING])

    def grade(on_case) -> Report:
        report = next(reports)
        for case in report.results[0].cases:
            on_case("puzzle01", case)
        return report
    watch = Watch([path], grade, screen, "k.py", interval=0.02)
    thread = threading.Thread(target=watch.run, args=(None, 2), daemon=True)
    thread.start()
    _until(lambda: watch.graded == 1)
    path.write_text("bad")
    thread.join(10)
    progress = [s.split(" — ", 1)[1] for s in screen.said if "so far" in s]
    assert progress == ["grading… 1 case passes so far", "grading… 2 cases pass so far",
                        "grading… FAIL case classic so far (last: PASS)", "grading… FAIL case classic so far (last: PASS)"]


def test_on_a_terminal_the_report_is_redrawn_in_place_under_the_status():
    from rich.console import Console
    out = io.StringIO()
    screen = Screen(Console(file=out, force_terminal=True, width=100, color_system=None))
    screen.start("watching k.py — grading…")
    screen.show("✗ puzzle01 Constant add: 0/5 cases pass", "watching k.py — last: FAIL case classic (0.20 s)", "x")
    screen.show("✓ puzzle01 Constant add: 5/5 cases pass", "watching k.py — last: PASS (0.19 s)", "")
    screen.stop()
    drawn = out.getvalue()
    assert "\x1b[1A" in drawn and "\x1b[2K" in drawn  # the cursor goes back up over the last frame
    last = drawn.rsplit("\x1b[2K", 1)[1]
    assert last.splitlines()[:3] == ["watching k.py — last: PASS (0.19 s)", "", "✓ puzzle01 Constant add: 5/5 cases pass"]


def test_a_stop_ends_a_watch_between_saves(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("good")
    graded: list[str] = []
    watch, stop, thread, out = _watch_in_thread(path, None, graded)
    _until(lambda: len(graded) == 1)
    stop.set()
    thread.join(5)
    assert not thread.is_alive() and watch.graded == 1


@pytest.mark.parametrize("args, message", [
    (["watch", "puzzle99"], "error: unknown puzzle 'puzzle99'; the puzzles are puzzle01, "),
    (["watch", "nowhere/mine.py"], "error: no such file: nowhere/mine.py"),
    (["watch", "sevenish"], "error: 'sevenish' is neither a puzzle id (write it like puzzle07) nor a .py file"),
    (["watch", "notebooks/00_start_here.ipynb"], "error: watch follows a .py file, and "),
])
def test_bad_input_to_watch_is_one_line(args, message, capsys, monkeypatch):
    monkeypatch.chdir(PRISTINE)
    from grader.app.cli import main
    assert main([*args, "--root", str(PRISTINE)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and len(err.strip().splitlines()) == 1, err


# ---- the server and who may ask it, with a stand-in for grading -----------------------------------
class StandIn:
    """What a WarmServer serves, without workers: counts its grades."""

    def __init__(self, course: Course = COURSE, options: Options = Options(), serves: bool = True) -> None:
        self.course, self.identity, self.grades, self._serves = course, identity(course, options), [], serves

    def serves(self, path: Path) -> bool:
        return self._serves

    def grade(self, puzzle: str, path: Path) -> Report:
        self.grades.append((puzzle, path))
        return FAILING


@pytest.fixture
def private(tmp_path, monkeypatch):
    """A runtime folder of this test's own: the server's socket goes there."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    return tmp_path / "triton-puzzles"


@pytest.fixture
def served(private):
    servers = []

    def start(stand_in: StandIn | None = None) -> StandIn:
        stand_in = stand_in or StandIn()
        server = WarmServer(stand_in)
        server.start()
        servers.append(server)
        return stand_in
    yield start
    for server in servers:
        server.stop()


def test_a_matching_server_grades_each_request_afresh(served, tmp_path):
    stand_in = served()
    kernel = tmp_path / "k.py"
    first = ask(COURSE, Options(), "puzzle01", kernel)
    second = ask(COURSE, Options(), "puzzle01", kernel)
    assert first.why is Fresh.SERVED and first.report == FAILING, first.note
    assert first.note == f"graded by the warm workers of a running watch or serve (process {os.getpid()})"
    assert second.report == FAILING and len(stand_in.grades) == 2  # no verdict is kept by file name
    assert stand_in.grades[0] == ("puzzle01", kernel.resolve())
    assert stat_mode(warm_link.socket_path(COURSE.root)) == 0o600 and stat_mode(warm_link.socket_path(COURSE.root).parent) == 0o700


def stat_mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777


@pytest.mark.parametrize("change, reason", [
    ("options", "it grades with timeout 30.0 (this run: 20.0)"),
    ("code", "the grader's code changed since it started (restart the watch)"),
    ("environment", "it was started with other settings of TP_DIFFERENTIAL"),
    ("course", "it serves the course at /elsewhere, not "),
    ("jail", "it was started for files in another folder than "),
])
def test_a_server_that_differs_is_not_used_and_says_why(served, monkeypatch, tmp_path, change, reason):
    stand_in = StandIn(serves=change != "jail")
    if change == "course":
        stand_in.identity = warm_link.Identity("/elsewhere", *[getattr(stand_in.identity, f) for f in
                                                                ("source", "runtime", "environment", "options")])
    served(stand_in)
    options = Options(timeout=20.0) if change == "options" else Options()
    if change == "code":
        monkeypatch.setattr(warm_link, "source_digest", lambda: "edited")
    if change == "environment":
        monkeypatch.setenv("TP_DIFFERENTIAL", "1")
    answer = ask(COURSE, options, "puzzle01", tmp_path / "k.py")
    assert answer.report is None and answer.why is Fresh.REFUSED and not stand_in.grades
    assert answer.note.startswith(f"graded fresh: the warm server does not match this run: {reason}"), answer.note


def test_the_runtime_is_the_install_folders_names_not_sys_path_or_folder_times(monkeypatch, tmp_path):
    """An imported package that extends sys.path (Ray puts its own folder first) or a file written
    beside the packages is the same runtime; a package installed is another."""
    import sysconfig
    purelib = tmp_path / "site-packages"
    purelib.mkdir()
    (purelib / "numpy-2.4.6.dist-info").mkdir()
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"purelib": str(purelib), "platlib": str(purelib)})
    before = warm_link.runtime()
    (purelib / "ray").mkdir()
    monkeypatch.setattr(sys, "path", [str(purelib / "ray"), *sys.path])
    (purelib / "a-lock-file").write_text("")
    assert warm_link.runtime() == before
    (purelib / "numpy-2.4.6.dist-info").rename(purelib / "numpy-2.5.0.dist-info")
    assert warm_link.runtime() != before


def test_no_server_a_stale_socket_and_a_second_server(private, tmp_path):
    assert ask(COURSE, Options(), "puzzle01", tmp_path / "k.py").why is Fresh.NO_SERVER
    where = warm_link.socket_path(COURSE.root, create=True)
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(str(where))
    left.close()  # a server that died: its socket stays, nothing listens
    assert ask(COURSE, Options(), "puzzle01", tmp_path / "k.py").why is Fresh.STALE
    first = WarmServer(StandIn())
    first.start()  # the stale socket is replaced
    try:
        with pytest.raises(AlreadyServed, match="another warm server serves this course"):
            WarmServer(StandIn()).start()
        assert ask(COURSE, Options(), "puzzle01", tmp_path / "k.py").why is Fresh.SERVED
    finally:
        first.stop()
    assert not where.exists()


def test_another_users_server_or_client_is_not_trusted(served, monkeypatch, tmp_path):
    stand_in = served()
    with monkeypatch.context() as patched:
        patched.setattr(warm_link, "peer_uid", lambda sock: os.getuid() + 1)  # the client sees a stranger
        assert ask(COURSE, Options(), "puzzle01", tmp_path / "k.py").why is Fresh.FOREIGN
    monkeypatch.setattr(warm_server, "peer_uid", lambda sock: os.getuid() + 1)  # the server sees one
    answer = ask(COURSE, Options(), "puzzle01", tmp_path / "k.py")
    assert answer.why is Fresh.BROKE and not stand_in.grades


def test_a_folder_others_can_open_is_not_used(private, tmp_path):
    private.mkdir(mode=0o755)
    os.chmod(private, 0o755)
    answer = ask(COURSE, Options(), "puzzle01", tmp_path / "k.py")
    assert answer.why is Fresh.UNSAFE
    assert answer.note.endswith("must be a folder of yours that only you can open (mode 0700); remove it, "
                                "and the next watch makes it again"), answer.note
    with pytest.raises(warm_link.Unsafe):
        WarmServer(StandIn())


def test_the_peer_is_read_from_the_kernel():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        assert warm_link.peer_uid(ours) == os.getuid()


def test_every_setting_a_worker_sees_is_compared_but_the_path_and_locale():
    from grader.channel.isolation import ENV_PASSED
    compared = [n for n in ENV_PASSED if n.startswith(warm_link.ENV_PREFIXES) or n in warm_link.ENV_NAMES]
    assert sorted(set(ENV_PASSED) - set(compared)) == ["LANG", "LC_ALL", "PATH"]


# ---- the real thing -------------------------------------------------------------------------------
def _cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args, "--device", "cpu", "--root", str(PRISTINE)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def _verdict(run: subprocess.CompletedProcess):
    import json
    result = json.loads(run.stdout)["results"][0]
    return (run.returncode, result["status"], result["message"],
            [(c["name"], c["passed"], c["kind"], c["message"]) for c in result["cases"]])


@pytest.mark.slow  # grades in workers, and runs the command line three times
def test_a_command_through_a_watchs_workers_gets_the_fresh_verdict(private, tmp_path):
    from grader.app.warm_server import WarmGrading
    kernel = tmp_path / "mine.py"
    kernel.write_text(WRONG_01)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(private.parent))
    warm = WarmGrading(COURSE, Options(device="cpu"), [kernel])
    server = WarmServer(warm)
    server.start()
    try:
        through = _cli("puzzle01", "--file", str(kernel), "--json", "-v", env=env)
    finally:
        server.stop()
        warm.close()
    assert "graded by the warm workers of a running watch or serve" in through.stderr, through.stderr
    fresh = _cli("puzzle01", "--file", str(kernel), "--json", "--fresh", env=env)
    assert _verdict(through) == _verdict(fresh)
    assert _verdict(fresh)[:2] == (1, "fail")
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # the watch died: its socket stays
    left.bind(str(server.path))
    left.close()
    stale = _cli("puzzle01", "--file", str(kernel), "--json", "-v", env=env)
    assert "graded fresh: a warm server's socket was left behind" in stale.stderr
    assert _verdict(stale) == _verdict(fresh)


@pytest.mark.slow  # grades in workers
def test_a_watch_grades_a_saved_kernel_in_its_warm_workers(tmp_path):
    from rich.console import Console

    from grader.app.watch import run
    kernel = tmp_path / "mine.py"
    kernel.write_text(SOLUTION_01)
    out, stop = io.StringIO(), threading.Event()
    thread = threading.Thread(target=run, args=(COURSE, "puzzle01", kernel, Options(device="cpu")), daemon=True,
                              kwargs=dict(interval=0.05, serve=False, stop=stop, grades=2,
                                          screen=Screen(Console(file=out, force_terminal=False))))
    thread.start()
    try:
        _until(lambda: out.getvalue().count("\n") == 1, 120)
        kernel.write_text(WRONG_01)
        thread.join(120)
    finally:
        stop.set()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and " — last: PASS (" in lines[0], lines
    assert " — last: FAIL case classic (" in lines[1] and " — was: PASS — case classic[seed=0]" in lines[1], lines


@pytest.mark.slow  # grades in workers
def test_a_kept_context_reads_the_puzzle_file_again_as_a_fresh_run_does(tmp_path):
    """The learner edits the file the spec comes from: a kept context must not keep the old one."""
    from grader.app.warm_server import WarmGrading
    from grader.judge.session import grade_many
    shutil.copytree(PRISTINE / "puzzles", tmp_path / "puzzles", ignore=shutil.ignore_patterns("__pycache__"))
    course = Course(tmp_path)
    path = course.puzzle_file("puzzle01")
    warm = WarmGrading(course, Options(device="cpu"), [path])
    try:
        assert warm.grade("puzzle01", path).results[0].status == Status.NOT_ATTEMPTED
        path.write_text(path.read_text().replace("PUZZLE = Puzzle(", "PUZZLE = Puzzle((", 1))
        kept = warm.grade("puzzle01", path).results[0]
    finally:
        warm.close()
    fresh = grade_many(course, [("puzzle01", path)], Options(device="cpu")).results[0]
    assert kept.status == fresh.status == Status.FAIL
    assert kept.message == fresh.message and "does not parse" in kept.message


@pytest.mark.slow  # runs the command line
def test_ctrl_c_ends_a_watch_with_exit_0_and_takes_its_socket(private, tmp_path):
    kernel = tmp_path / "mine.py"
    kernel.write_text(SOLUTION_01)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(private.parent))
    watch = subprocess.Popen([sys.executable, "-m", "grader", "watch", str(kernel), "--device", "cpu",
                              "--root", str(PRISTINE)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        first = watch.stdout.readline()
        assert first.startswith(f"watching {kernel} — last: PASS ("), first
        assert list(private.glob("*.sock"))
        watch.send_signal(signal.SIGINT)
        assert watch.wait(60) == 0
    finally:
        watch.kill()
    assert watch.stderr.read().strip().endswith(f"stopped watching {kernel}")
    assert not list(private.glob("*.sock"))


@pytest.mark.slow  # runs the command line beside a server
def test_serve_keeps_warm_workers_for_plain_commands_until_ctrl_c(private):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(private.parent))
    server = subprocess.Popen([sys.executable, "-m", "grader", "serve", "--device", "cpu", "--root", str(PRISTINE)],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().startswith(f"serving warm grading of {PRISTINE} (cpu) on ")
        stub = subprocess.run([sys.executable, "-m", "grader", "puzzle01", "-v", "--device", "cpu", "--root",
                               str(PRISTINE)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert stub.returncode == 1 and "not attempted" in stub.stdout, stub.stdout + stub.stderr
        assert "graded by the warm workers of a running watch or serve" in stub.stderr, stub.stderr
        assert " puzzle01 NOT ATTEMPTED (" in server.stdout.readline()
        server.send_signal(signal.SIGINT)
        assert server.wait(60) == 0
    finally:
        server.kill()
    assert server.stderr.read().strip().endswith("warm server stopped")
    assert not list(private.glob("*.sock"))
