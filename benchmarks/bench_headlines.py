"""Measures ``--bench`` at each named puzzle's headline size only (the first of its sweep), about
half a minute to a minute a puzzle on a GPU: a quick figure per puzzle when GPU time is short:

    python benchmarks/bench_headlines.py puzzle18 puzzle31 ... [--json OUT]

Each puzzle is benchmarked with its reference solution exactly as ``python -m grader PUZZLE
--solutions --bench`` would, sweep cut to the headline; the table is printed as each finishes.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course.loader import Course  # noqa: E402
from grader.judge.bench.run import run_bench  # noqa: E402
from grader.judge.options import Options  # noqa: E402
from grader.judge.session import Grading  # noqa: E402
from grader.report.bench import as_json, render_text  # noqa: E402


class HeadlineCourse(Course):
    """The course, each Bench cut to its first size."""

    def puzzle(self, puzzle_id):
        puzzle = super().puzzle(puzzle_id)
        if puzzle.bench is None:
            return puzzle
        return replace(puzzle, bench=replace(puzzle.bench, sizes=puzzle.bench.sizes[:1]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("puzzles", nargs="+")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    course = HeadlineCourse(ROOT)
    docs = []
    for puzzle_id in args.puzzles:
        try:
            solution = course.solution_file(puzzle_id)
            with Grading(course, [solution], Options(device="cuda", check_bounds=False, compile_check=False),
                         now=False) as grading:
                doc = run_bench(grading, puzzle_id, solution)
        except Exception as exc:  # one puzzle's failure must not cost the others' figures
            print(f"✗ {puzzle_id}: {type(exc).__name__}: {exc}", flush=True)
            continue
        print(render_text(doc), flush=True)
        docs.append(as_json(doc))
        if args.json:
            args.json.write_text(json.dumps(docs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
