"""The hostile corpus (tests/hostile/, see its README): graded alone and in a class, nothing a
submission does changes a verdict, stops the grader, outlives it or escapes its sandbox, and
correct idioms written in less common ways pass."""
from __future__ import annotations

import csv
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import COURSE, ROOT
from grader.app.selftest import declared
from grader.channel.isolation import sandbox_available
from grader.judge.options import Options
from grader.judge.session import grade_many

HOSTILE = ROOT / "tests" / "hostile"
FILES = sorted(HOSTILE.glob("puzzle*.py"))
# Modules of a learner's own that submissions import (kernels kept apart from their wrapper): beside
# every copy of a submission, graded as no puzzle.
HELPERS = sorted(p for p in HOSTILE.glob("*.py") if not p.name.startswith("puzzle"))

if not sandbox_available():
    if os.environ.get("TP_REQUIRE_SANDBOX"):
        raise RuntimeError("TP_REQUIRE_SANDBOX is set but bubblewrap cannot run here")
    pytest.skip("bubblewrap is not available: the hostile corpus needs the sandbox", allow_module_level=True)


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection a submission makes."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections: list[str] = []
        self.stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, address = self.sock.accept()
            except OSError:
                continue
            self.connections.append(str(address))
            conn.close()

    def close(self) -> None:
        self.stopped.set()
        self.sock.close()


class Arena:
    """Where the corpus is graded from, and every place it must not reach."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.mark = root / "marks"          # outside every sandbox: must stay empty
        self.out = root / "grading"         # the batch's reports
        self.alone = root / "alone"         # the corpus as files, for grading alone
        self.students = root / "class"      # the corpus as a class, one student per file
        self.sleep = str(random.randint(10_000_000, 99_999_999))
        self.listener = Listener()
        for folder in (self.mark, self.alone, self.students):
            folder.mkdir(parents=True)

    def fill(self, text: str) -> str:
        for token, value in {"@@MARK@@": self.mark, "@@OUT@@": self.out, "@@PORT@@": self.listener.port,
                             "@@SLEEP@@": self.sleep, "@@COURSE@@": COURSE.root}.items():
            text = text.replace(token, str(value))
        return text

    def lingering(self) -> list[str]:
        """Processes still running that a submission started (they carry the SLEEP token)."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if self.sleep in command and "pytest" not in command:
                found.append(f"{pid}: {command}")
        return found

    def escapes(self) -> list[str]:
        """Everything that shows a submission reached outside its sandbox."""
        found = [f"wrote {p}" for p in self.mark.rglob("*")]
        found += [f"connected to the listener from {c}" for c in self.listener.connections]
        found += [f"left a process: {p}" for p in self.lingering()]
        found += [f"wrote {p}" for p in Path("/tmp").glob(f"{self.sleep}*")]
        return found


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    arena = Arena(tmp_path_factory.mktemp("hostile"))
    for path in FILES:
        (arena.alone / path.name).write_text(arena.fill(path.read_text()))
        student = arena.students / path.stem
        (student / "puzzles").mkdir(parents=True)
        (student / "puzzles" / path.name).write_text(arena.fill(path.read_text()))
        for helper in HELPERS:
            shutil.copy(helper, student / "puzzles" / helper.name)
    for helper in HELPERS:
        shutil.copy(helper, arena.alone / helper.name)
    yield arena
    arena.listener.close()


@pytest.fixture(scope="module")
def alone(arena):
    targets = [(path.name[:8], arena.alone / path.name) for path in FILES]
    report = grade_many(COURSE, targets, Options(timeout=20, sandbox="on"), jobs=2)
    return {Path(r.source).name: r for r in report.results}


@pytest.fixture(scope="module")
def batch(arena):
    honest = arena.students / "alice" / "puzzles"
    honest.mkdir(parents=True)
    for path in (ROOT / "solutions").glob("puzzle*.py"):
        shutil.copy(path, honest / path.name)
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(arena.students), "--out", str(arena.out),
                          "--timeout", "20", "--root", str(COURSE.root)],
                         cwd=arena.root, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    grades = (arena.out / "grades.csv").read_text()
    time.sleep(3)  # a daemon that escaped would rewrite the reports about now
    doc = json.loads((arena.out / "results.json").read_text())
    return run, grades, {s["student"]: {r["puzzle"]: r for r in s["results"]} for s in doc["students"]}


def _first_kind(result: dict) -> str | None:
    """As PuzzleResult.first_failure: a failed check decides before the cases run beside it."""
    for check in result.get("checks", {}).values():
        if not check["passed"]:
            return check["kind"]
    for case in result.get("cases", ()):
        if not case["passed"]:
            return case["kind"]
    return None


def _verdict(path: Path, status: str, kind: str | None, message: str) -> list[str]:
    expect = declared(path)
    wrong = []
    allowed = expect["EXPECT_STATUS"]
    if status not in ((allowed,) if isinstance(allowed, str) else allowed):
        wrong.append(f"status {status}, expected {expect['EXPECT_STATUS']}: {message[:600]}")
    if "EXPECT_KIND" in expect and kind != expect["EXPECT_KIND"]:
        wrong.append(f"kind {kind}, expected {expect['EXPECT_KIND']}: {message[:600]}")
    if "EXPECT_SAYS" in expect and expect["EXPECT_SAYS"] not in message:
        wrong.append(f"message lacks {expect['EXPECT_SAYS']!r}: {message[:600]}")
    return wrong


def test_corpus_has_every_kind_of_attack_and_idiom():
    names = {f.stem.split("_", 1)[1] for f in FILES}
    for must in ("forged_launcher", "forged_decorator", "import_time", "daemon", "kill_parent", "read_outside",
                 "write_outside", "network", "race_next_block", "sniffs_interpreter", "autotune", "heuristics",
                 "defaults_and_options", "builtin_max"):
        assert must in names


@pytest.mark.slow  # grades the hostile corpus
@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_alone(path, alone):
    result = alone[path.name]
    first = result.first_failure
    message = " ".join(filter(None, [result.message, getattr(first, "message", "")]))
    assert not _verdict(path, result.status, getattr(first, "kind", None), message)


@pytest.mark.slow  # grades the hostile corpus as a class through the command line
@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_in_a_class(path, batch):
    _, _, students = batch
    result = students[path.stem][path.name[:8]]
    first = next((c for c in result["checks"].values() if not c["passed"]), None) or \
        next((c for c in result["cases"] if not c["passed"]), {})
    message = " ".join(filter(None, [result["message"], first.get("message", "")]))
    assert not _verdict(path, result["status"], _first_kind(result), message)


@pytest.mark.slow  # grades the hostile corpus as a class through the command line
def test_nothing_escapes_and_the_reports_stand(arena, alone, batch):
    run, grades_when_written, students = batch
    assert not arena.escapes()
    grades = (arena.out / "grades.csv").read_text()
    assert grades == grades_when_written, "grades.csv changed after the batch wrote it"
    rows = {row["student"]: row for row in csv.DictReader(grades.splitlines())}
    assert rows["alice"]["total"] == str(len(COURSE.ids))
    assert set(rows) == {"alice", *(f.stem for f in FILES)}
    for line in run.stdout.splitlines():  # the console and the file agree, student by student
        name, _, rest = line.partition(" ")
        if name in rows:
            assert rest.strip().startswith(f"{rows[name]['total']}/{len(COURSE.ids)}"), line


@pytest.mark.slow  # grades with a 20 s timeout
def test_import_time_code_never_runs_even_without_the_sandbox(arena, tmp_path):
    """The definitions-only import is a layer of its own: with bubblewrap off, the markers the
    file would write are writable, and still none appears."""
    path = arena.alone / "puzzle03_import_time.py"
    report = grade_many(COURSE, [("puzzle03", path)], Options(timeout=20, sandbox="off"), jobs=1)
    assert report.results[0].status == "fail"
    assert not list(arena.mark.iterdir()), "import-time code ran"


@pytest.mark.slow  # runs the command line in a subprocess
def test_batch_refuses_to_run_without_a_sandbox_unless_told(tmp_path, monkeypatch):
    (tmp_path / "class").mkdir()
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on PATH
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "class"), "--out",
                          str(tmp_path / "out"), "--root", str(COURSE.root)], capture_output=True, text=True, timeout=120,
                         env=env)
    assert run.returncode == 2
    assert "bubblewrap" in run.stderr and "--no-sandbox" in run.stderr
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "class"), "--out",
                          str(tmp_path / "out"), "--root", str(COURSE.root), "--no-sandbox"], capture_output=True,
                         text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert "--no-sandbox: submissions run with your rights" in run.stderr
