"""The largest case each Triton puzzle grades, and how many of its launches' programs the interpreter
ran for it: puzzles 1-34 with their solutions on the CPU, about 40 s on 2 idle cores.

A large case runs a sample of its programs (grader/sandbox/sampling.py), or all of them where no
sample stands for the launch (grader/judge/sampled.py says when). The counts here are read from the
grader as it judged each case, so the table is what grading did, not what a plan would do:

    python benchmarks/large_cases.py                      # a markdown table, puzzles 1-34
    python benchmarks/large_cases.py --only puzzle22,puzzle33 --every   # each large case
"""
from __future__ import annotations

import argparse
import math
import sys
import threading
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.course.loader import Course  # noqa: E402
from grader.judge import sampled  # noqa: E402
from grader.judge.kinds import KINDS  # noqa: E402
from grader.judge.options import Options  # noqa: E402
from grader.judge.session import grade_many  # noqa: E402

_current = threading.local()  # the (puzzle, case name) a grading thread is judging
_seen: dict[tuple[str, str], list[str]] = defaultdict(list)  # -> how each judging of it went


def _watch_runners() -> None:
    for kind in KINDS.values():
        runner = kind.runner()
        if getattr(runner.run, "watched", False):
            continue
        original = runner.run

        def run(self, case, carried=None, _original=original):
            _current.key = (self.puzzle.id, case.name)
            try:
                return _original(self, case, carried)
            finally:
                _current.key = None
        run.watched = True
        runner.run = run


def _watch(cls, word) -> None:
    original = cls.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        key = getattr(_current, "key", None)
        if key is not None:
            _seen[key].append(word(self))
    cls.__init__ = init


def _elements(sizes) -> int:
    """The product of a case's sizes (a batch of several dimensions counts each): a rough order."""
    return math.prod(int(x) for v in sizes.values() for x in (v if isinstance(v, (tuple, list)) else (v,)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="puzzle ids, comma-separated (default: every Triton puzzle)")
    parser.add_argument("--every", action="store_true", help="every large case, not only the largest")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    course = Course(ROOT)
    wanted = [p for p in args.only.split(",") if p] or [p for p in course.ids if int(p[6:]) <= 34]
    _watch_runners()
    _watch(sampled.Stands, lambda s: f"{s.ran} of {s.programs}")
    _watch(sampled.Unstood, lambda u: f"all {u.programs} (no sample stands: {u.why})")
    options = replace(Options(), device="cpu")
    report = grade_many(course, [(p, course.solution_file(p)) for p in wanted], options, jobs=args.jobs)
    print(f"| puzzle | {'large case' if args.every else 'largest case'} | sizes | programs run | case time |")
    print("|---|---|---|---|---|")
    for result in report.results:
        defined = {case.name: case for case in course.puzzle(result.puzzle).cases}
        cases = [c for c in result.cases if defined[c.name].large] or list(result.cases)
        if not cases:
            print(f"| {result.puzzle} | ({result.status}) | | | |")
            continue
        for case in cases if args.every else [max(cases, key=lambda c: _elements(c.sizes))]:
            sizes = ", ".join(f"{k}={v}" for k, v in case.sizes.items())
            ran = "; ".join(dict.fromkeys(_seen.get((result.puzzle, case.name), []))) or "every one (not sampled)"
            if not defined[case.name].interpreted:  # too many for the interpreter: recorded, launches checked
                ran = f"none of {ran.removeprefix('all ')}: recorded and its launches checked"
            status = "" if case.passed else " (failed)"
            print(f"| {result.puzzle} | `{case.name}`{status} | {sizes} | {ran} | {case.seconds:.2f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
