"""Measures what grading an autograd puzzle costs per case (about 2 minutes on 2 cores at the
default 3 rounds): the seconds each case spent in workers (recording and replaying its wrapper
now; running it and running it poisoned before), and the puzzle's whole grade, for the four
autograd puzzles' reference solutions.

    python benchmarks/autograd_replay.py [--rounds 3] [--device cuda]

Prints one row per puzzle: cases, worker seconds per case (median over rounds), and the whole
grade's seconds (median). Run it on an idle machine; `docs/benchmarks.md` keeps the figures.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course.loader import Course  # noqa: E402
from grader.judge.options import Options  # noqa: E402
from grader.judge.session import grade_many  # noqa: E402

PUZZLES = ("puzzle15", "puzzle22", "puzzle33", "puzzle34")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args(argv)
    course = Course(ROOT)
    per_case: dict[str, list[float]] = {p: [] for p in PUZZLES}
    whole: dict[str, list[float]] = {p: [] for p in PUZZLES}
    cases: dict[str, int] = {}
    for _ in range(args.rounds):
        for puzzle_id in PUZZLES:
            started = time.perf_counter()
            result = grade_many(course, [(puzzle_id, course.solution_file(puzzle_id))],
                                Options(device=args.device)).results[0]
            whole[puzzle_id].append(time.perf_counter() - started)
            if result.status != "pass":
                print(f"{puzzle_id}: {result.status}: {result.message[:300]}")
                return 1
            cases[puzzle_id] = len(result.cases)
            per_case[puzzle_id].append(sum(c.seconds for c in result.cases) / len(result.cases))
    print("| puzzle | cases | worker s per case | whole grade s |")
    print("|---|---|---|---|")
    for puzzle_id in PUZZLES:
        print(f"| {puzzle_id} | {cases[puzzle_id]} | {statistics.median(per_case[puzzle_id]):.3f} | "
              f"{statistics.median(whole[puzzle_id]):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
