"""Measures students per minute with the local engine and with Ray (compare: a few minutes), and
a large class through Ray (large: --minutes, 30 by default).

    python benchmarks/ray_class.py compare [--students 24] [--puzzles 4]
    python benchmarks/ray_class.py large [--students 1000] [--minutes 30] [--puzzles 4]

Every student submits the first ``--puzzles`` classic puzzles: the reference solution or, by a
fixed pattern, a kernel from the wrong-kernel corpus, so every student's total is known in
advance. The course graded is the classic puzzles 1 to ``--puzzles`` (a copy of them in a
temporary course folder), so that the figure is a cost per student *and puzzle*.

``compare`` grades the same class with ``--engine local`` and ``--engine ray`` on this machine
and prints students per minute for each and Ray's overhead per student.

``large`` grades a class through Ray, stopping it (Ctrl-C, as an instructor would) when
``--minutes`` run out, then checks that every student is in the reports exactly once, either
graded with the expected total or marked "not graded". Nobody may be lost.
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def course(folder: Path, puzzles: int) -> list[str]:
    ids = [f"puzzle{n:02d}" for n in range(1, puzzles + 1)]
    (folder / "puzzles").mkdir(parents=True)
    for pid in ids:
        for path in (ROOT / "puzzles").glob(f"{pid}_*.py"):
            shutil.copy(path, folder / "puzzles" / path.name)
    return ids


def build(folder: Path, students: int, ids: list[str]) -> dict[str, int]:
    solutions = {p.name[:8]: p for p in (ROOT / "solutions").glob("puzzle*.py")}
    wrong = {pid: sorted((ROOT / "tests" / "wrong_kernels").glob(f"{pid}_*.py")) for pid in ids}
    expected = {}
    for s in range(students):
        name = f"student{s:04d}"
        target = folder / name / "puzzles"
        target.mkdir(parents=True)
        total = 0
        for k, pid in enumerate(ids):
            if (s + k) % 3 == 0 and wrong[pid]:  # a third of the answers are wrong
                shutil.copy(wrong[pid][(s + k) % len(wrong[pid])], target / solutions[pid].name)
            else:
                shutil.copy(solutions[pid], target / solutions[pid].name)
                total += 1
        expected[name] = total
    return expected


def batch(course_root: Path, subs: Path, out: Path, engine: str, minutes: float | None = None) -> float:
    command = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--root", str(course_root),
               "--engine", engine, "--jobs", "2"]
    started = time.perf_counter()
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        run.wait(timeout=None if minutes is None else minutes * 60)
    except subprocess.TimeoutExpired:
        run.send_signal(signal.SIGINT)  # as Ctrl-C: reports for the finished, the rest "not graded"
        run.wait()
    wall = time.perf_counter() - started
    if run.returncode not in (0, 1, 130):
        raise SystemExit(f"the {engine} batch failed ({run.returncode}):\n{run.stderr.read()[-3000:]}")
    return wall


def audit(out: Path, expected: dict[str, int]) -> tuple[int, int, list[str], dict]:
    """(graded, not graded, lost, wrong totals) from the reports."""
    with open(out / "grades.csv") as f:
        rows = list(csv.DictReader(f))
    names = [r["student"] for r in rows]
    stopped = {s["student"] for s in json.loads((out / "results.json").read_text())["students"]
               if any(p.startswith("not graded:") for p in s["problems"])}
    lost = sorted(set(expected) - set(names)) + sorted({n for n in names if names.count(n) > 1})
    wrong = {r["student"]: (int(r["total"]), expected[r["student"]]) for r in rows
             if r["student"] not in stopped and int(r["total"]) != expected.get(r["student"], -1)}
    return len(rows) - len(stopped), len(stopped), lost, wrong


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("compare", "large"))
    parser.add_argument("--students", type=int)
    parser.add_argument("--puzzles", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=30.0)
    args = parser.parse_args()
    students = args.students or (24 if args.mode == "compare" else 1000)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ids = course(tmp / "course", args.puzzles)
        expected = build(tmp / "class", students, ids)
        engines = ("local", "ray") if args.mode == "compare" else ("ray",)
        walls = {}
        for engine in engines:
            out = tmp / f"out-{engine}"
            walls[engine] = batch(tmp / "course", tmp / "class", out, engine,
                                  None if args.mode == "compare" else args.minutes)
            graded, stopped, lost, wrong = audit(out, expected)
            rate = graded / walls[engine] * 60
            print(f"{engine}: {graded} graded, {stopped} not graded (stopped), {len(lost)} lost, "
                  f"{len(wrong)} wrong totals; {walls[engine]:.0f} s wall; {rate:.1f} students/min "
                  f"({rate * len(ids):.1f} student-puzzles/min, {len(ids)} puzzles each)")
            if lost or wrong:
                print(f"  lost: {lost[:10]}; wrong totals: {dict(list(wrong.items())[:10])}")
                return 1
        if len(walls) == 2:
            overhead = walls["ray"] / walls["local"] - 1
            print(f"Ray's overhead: {overhead:+.1%} of the local engine's wall time, "
                  f"{(walls['ray'] - walls['local']) / students:+.2f} s per student")
    return 0


if __name__ == "__main__":
    sys.exit(main())
