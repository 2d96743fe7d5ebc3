"""Measures what the interpreter's per-access bounds check costs, grading the classic solutions
with it and without (about a minute on 2 cores at --repeat 3).

    python benchmarks/bounds_overhead.py [--repeat 3]

Reports the kernels' own run time (the sum of the cases' times, measured in the worker) and
the wall time of the whole grading run, each the best of --repeat runs.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course.loader import Course  # noqa: E402
from grader.judge.options import Options  # noqa: E402
from grader.judge.session import grade_many  # noqa: E402


def measure(check_bounds: bool) -> tuple[float, float, dict[str, float]]:
    course = Course(ROOT)
    targets = [(pid, course.solution_file(pid)) for pid in course.ids]
    started = time.perf_counter()
    report = grade_many(course, targets, Options(compile_check=False, check_bounds=check_bounds), jobs=1)
    wall = time.perf_counter() - started
    assert all(r.passed for r in report.results), [r.message for r in report.results if not r.passed]
    per_puzzle = {r.puzzle: sum(c.seconds for c in r.cases) for r in report.results}
    return sum(per_puzzle.values()), wall, per_puzzle


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = {flag: [measure(flag) for _ in range(args.repeat)] for flag in (False, True)}
    best = {flag: min(r, key=lambda m: m[0]) for flag, r in runs.items()}
    off, on = best[False], best[True]
    print("| | kernels (s) | whole run, wall (s) |")
    print("|---|---|---|")
    print(f"| bounds check off | {off[0]:.2f} | {min(m[1] for m in runs[False]):.1f} |")
    print(f"| bounds check on | {on[0]:.2f} | {min(m[1] for m in runs[True]):.1f} |")
    print(f"\noverhead on the kernels' run time: {100 * (on[0] / off[0] - 1):+.1f} %")
    print("\n| puzzle | off (s) | on (s) |\n|---|---|---|")
    for pid in off[2]:
        print(f"| {pid} | {off[2][pid]:.3f} | {on[2][pid]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
