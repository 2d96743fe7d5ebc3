"""Measures what the similarity pass costs a 40-student batch, and how well its thresholds
separate copies (about 5 minutes on 2 cores at the defaults).

    python benchmarks/similarity_pass.py [--seeds 10] [--repeat 3]

1. Time: the pass as ``batch`` runs it (``similar_submissions`` over the students' sanitised
   files), for two classes of 40:
   * the synthetic class of tests/synthetic_class.py (puzzles 2, 7 and 19, four copied pairs: verbatim,
     renamed, reordered, and disguised every way at once);
   * a whole-course class: every student submits all 34 puzzles (each reference solution with
     that student's own names), the most code a batch can hand the pass.
   Intake (reading and sanitising the files, which batch does anyway) is timed apart.
2. Separation: the synthetic class built from ``--seeds`` different seeds; per puzzle, the
   highest score of an honest pair and the lowest of a copied pair; the recall of each kind of
   copy, and the false pairs among honest students.
"""
from __future__ import annotations

import argparse
import ast
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import synthetic_class  # noqa: E402
from grader.course.loader import Course  # noqa: E402
from grader.judge.similarity.find import pair_scores, puzzle_codes, similar_submissions, threshold  # noqa: E402
from grader.source.intake import prepare_class  # noqa: E402


class _Rename(ast.NodeTransformer):
    def __init__(self, rng: random.Random, keep: set[str]) -> None:
        self.rng, self.keep, self.given = rng, keep, {}

    def visit_Name(self, node):
        if node.id not in self.keep:
            node.id = self.given.setdefault(node.id, f"{node.id}_{self.rng.randrange(1000)}")
        return node


def whole_course_class(folder: Path, course: Course, students: int = 40) -> None:
    for n in range(students):
        rng = random.Random(n)
        for puzzle_id in course.ids:
            path = course.solution_file(puzzle_id)
            tree = ast.parse(path.read_text())
            keep = {a.arg for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.Lambda))
                    for a in f.args.args} | {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef,
                                                                                            ast.ClassDef))}
            keep |= {"tl", "triton", "torch", "math", "range", "float", "int", "min", "max", "len", "tuple"}
            target = folder / f"student{n:02d}" / "puzzles" / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(ast.unparse(_Rename(rng, keep).visit(tree)) + "\n")


def timed(course: Course, subs: Path, repeat: int) -> tuple[float, float, float, int]:
    """Medians of intake's wall time, and of the pass's wall and CPU time (the pass is one
    thread: on a loaded machine its CPU time is the steadier figure)."""
    intake, passes, cpu, pairs = [], [], [], 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as work:
            started = time.perf_counter()
            students = prepare_class(subs, course, Path(work))
            intake.append(time.perf_counter() - started)
            started, started_cpu = time.perf_counter(), time.process_time()
            pairs = len(similar_submissions(course, students).pairs)
            passes.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
    return statistics.median(intake), statistics.median(passes), statistics.median(cpu), pairs


def separation(course: Course, seeds: int) -> None:
    print(f"\nseparation over {seeds} synthetic classes (score: shared weight / the smaller's own):")
    worst: dict[str, list[float]] = {p: [] for p in synthetic_class.PUZZLES}
    copies: dict[str, list[float]] = {p: [] for p in synthetic_class.PUZZLES}
    kinds = {frozenset((a, b)): how for a, b, how in synthetic_class.COPIES}
    found = {how: 0 for how in kinds.values()}
    wrong = false_pairs = honest_pairs = 0
    for seed in range(seeds):
        with tempfile.TemporaryDirectory() as tmp:
            copied = synthetic_class.build(Path(tmp) / "subs", seed=seed)
            students = prepare_class(Path(tmp) / "subs", course, Path(tmp) / "work")
            report = similar_submissions(course, students)
            flagged = {frozenset(p.students) for p in report.pairs}
            wrong += flagged != copied
            false_pairs += len(flagged - copied)
            for pair in flagged & copied:
                found[kinds[pair]] += sum(frozenset(p.students) == pair for p in report.pairs)
            for puzzle_id in synthetic_class.PUZZLES:
                common, _, codes = puzzle_codes(course, puzzle_id, students)
                honest = [0.0]
                for i, j, _, score in pair_scores(codes, common):
                    pair = frozenset((codes[i].student, codes[j].student))
                    (copies[puzzle_id] if pair in copied else honest).append(score)
                worst[puzzle_id].append(max(honest))
                n = len(codes)
                honest_pairs += n * (n - 1) // 2 - sum(pair <= {c.student for c in codes} for pair in copied)
    for puzzle_id in synthetic_class.PUZZLES:
        _, reference, _ = puzzle_codes(course, puzzle_id, [])
        min_shared, min_score = threshold(reference)
        print(f"  {puzzle_id}: reference {reference} fingerprints -> at least {min_shared} shared, score "
              f"{min_score}; honest pairs' highest score {max(worst[puzzle_id]):.2f} (median over classes "
              f"{statistics.median(worst[puzzle_id]):.2f}); copied pairs' lowest {min(copies[puzzle_id]):.2f}")
    # puzzles 7 and 19 are long enough to flag: each copied pair is two copies to find per class
    for how, count in found.items():
        print(f"  recall, {how} copies: {count} of {2 * seeds} (puzzles 7 and 19)")
    print(f"  false pairs: {false_pairs} flagged among {honest_pairs} honest pairs of puzzles compared")
    print(f"  classes whose flagged pairs were not exactly the copied ones: {wrong} of {seeds}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-timing", action="store_true", help="the separation only")
    args = parser.parse_args()
    course = Course(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        if args.no_timing:
            separation(course, args.seeds)
            return 0
        synthetic_class.build(Path(tmp) / "synthetic")
        whole_course_class(Path(tmp) / "whole", course)
        for label, subs in (("synthetic class, 40 x 3 puzzles", Path(tmp) / "synthetic"),
                            (f"whole course, 40 x {len(course.ids)} puzzles", Path(tmp) / "whole")):
            intake, spent, cpu, pairs = timed(course, subs, args.repeat)
            print(f"{label}: similarity pass {spent:.2f} s wall, {cpu:.2f} s CPU (intake, done by batch "
                  f"anyway: {intake:.2f} s); {pairs} pair(s) flagged")
    separation(course, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
