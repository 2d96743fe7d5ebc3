"""Measures the wall time of a synthetic class of 40 students graded in the interpreter with
`python -m grader batch` (about 5 minutes on 2 cores; twice that with --sandbox both).

    python benchmarks/batch_class.py [--students 40] [--jobs 2] [--sandbox on|off|both]

Each student submits every classic puzzle (1-12): the reference solution or, by a fixed
pattern, a kernel from the wrong-kernel corpus. The expected total of every student is known,
so the run checks the totals and that no student is lost. Target (issue 6): at most 3
minutes wall on the 2-core CPU machine. `--sandbox both` grades the class twice, with
bubblewrap and with `--no-sandbox`, and reports the sandbox's cost per student.
"""
from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(folder: Path, students: int) -> dict[str, int]:
    solutions = {p.name[:8]: p for p in sorted((ROOT / "solutions").glob("puzzle*.py"))}
    classic = [f"puzzle{n:02d}" for n in range(1, 13)]
    wrong: dict[str, list[Path]] = {}
    for path in sorted((ROOT / "tests" / "wrong_kernels").glob("puzzle*.py")):
        wrong.setdefault(path.name[:8], []).append(path)
    expected = {}
    for s in range(students):
        name = f"student{s:02d}"
        target = folder / name / "puzzles"
        target.mkdir(parents=True)
        total = 0
        for k, puzzle_id in enumerate(classic):
            solution = solutions[puzzle_id]
            bad = wrong.get(puzzle_id, [])
            if (s + k) % 3 == 0 and bad:  # a third of the answers are wrong
                shutil.copy(bad[(s + k) % len(bad)], target / solution.name)
            else:
                shutil.copy(solution, target / solution.name)
                total += 1
        expected[name] = total
    return expected


def grade(subs: Path, out: Path, jobs: int, sandbox: bool) -> tuple[float, dict[str, int] | None, str]:
    command = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--jobs", str(jobs),
               "--root", str(ROOT)] + ([] if sandbox else ["--no-sandbox"])
    started = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if run.returncode != 0:
        return wall, None, run.stdout[-2000:] + run.stderr[-2000:]
    with open(out / "grades.csv") as f:
        return wall, {row["student"]: int(row["total"]) for row in csv.DictReader(f)}, ""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sandbox", choices=("on", "off", "both"), default="on")
    args = parser.parse_args()
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.sandbox]
    walls = {}
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "submissions"
        expected = build(subs, args.students)
        for sandbox in modes:
            label = "sandbox" if sandbox else "no sandbox"
            wall, got, error = grade(subs, Path(tmp) / f"grading-{label}", args.jobs, sandbox)
            if got is None:
                print(f"{label}: the batch failed\n{error}")
                return 1
            walls[label] = wall
            lost = sorted(set(expected) - set(got))
            wrong_totals = {s: (got[s], expected[s]) for s in expected if s in got and got[s] != expected[s]}
            print(f"{args.students} students x 12 classic puzzles, --jobs {args.jobs}, {label}: {wall:.0f} s wall "
                  f"({'within' if wall <= 180 else 'OVER'} the 180 s target)")
            print(f"  lost students: {lost or 'none'}; wrong totals: {wrong_totals or 'none'}")
            ok = ok and not lost and not wrong_totals
    if len(walls) == 2:
        extra = walls["sandbox"] - walls["no sandbox"]
        print(f"sandbox cost: {extra:+.1f} s for the class, {extra / args.students:+.2f} s per student "
              f"({walls['sandbox'] / walls['no sandbox'] - 1:+.1%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
