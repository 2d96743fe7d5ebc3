"""The largest case each puzzle grades on the CPU, and how the interpreter ran its launches: every
program batched (in how many group runs), serially (and why), or not at all. Puzzles 1-34 and the
Helion track with their solutions, a few minutes on 2 idle cores.

Every case runs every program of every launch (grader/sandbox/batched); the records here are the
worker's own replies as the grader judged each case, so the table is what grading did:

    python benchmarks/large_cases.py                      # a markdown table, the largest case each
    python benchmarks/large_cases.py --only puzzle22,puzzle33 --every   # each large case
    python benchmarks/large_cases.py --serial             # every file verdicts.py grades: each launch
                                                          # that ran serially, and why (several minutes)
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
from grader.judge.case_run import PuzzleState  # noqa: E402
from grader.judge.kinds import KINDS  # noqa: E402
from grader.judge.options import Options  # noqa: E402
from grader.judge.session import grade_many  # noqa: E402

_current = threading.local()  # the (file graded, case name) a grading thread is judging
_seen: dict[tuple[str, str], list] = defaultdict(list)  # -> the launches its replies told


def _watch() -> None:
    """Each runner's case and each reply's launches, written down per (puzzle, case)."""
    for kind in KINDS.values():
        runner = kind.runner()
        if getattr(runner.run, "watched", False):
            continue
        original = runner.run

        def run(self, case, carried=None, _original=original):
            _current.key = (str(Path(self.state.kernel_file).resolve()), case.name)
            try:
                return _original(self, case, carried)
            finally:
                _current.key = None
        run.watched = True
        runner.run = run
    asked = PuzzleState.ask

    def ask(self, message, *args, **kwargs):
        reply, raw = asked(self, message, *args, **kwargs)
        key = getattr(_current, "key", None)
        if key is not None and not getattr(message, "accesses_only", False):
            for run in getattr(reply, "runs", None) or [reply]:
                if not getattr(run, "reversed", False):
                    _seen[key].extend(getattr(run, "launches", ()))
        return reply, raw
    PuzzleState.ask = ask


def _elements(sizes) -> int:
    """The product of a case's sizes (a batch of several dimensions counts each): a rough order."""
    return math.prod(int(x) for v in sizes.values() for x in (v if isinstance(v, (tuple, list)) else (v,)))


def how(launches) -> str:
    """The launches of a case's first run, as the table says them."""
    if not launches:
        return "no launch run in the interpreter"
    if not hasattr(launches[0], "serial"):  # a Helion kernel's launches: Helion's own interpreter ran them
        grids = sorted({"x".join(map(str, launch.grid)) for launch in launches})
        return f"Helion's interpreter (not the engine): {len(launches)} launches, grid {', '.join(grids)}"
    first = {}  # a launch per grid, as an autotuned kernel's configs or a replay's steps repeat them
    for launch in launches:
        first.setdefault((tuple(launch.grid), launch.serial), launch)
    said = []
    for launch in first.values():
        grid = "x".join(str(g) for g in launch.grid[:next((i for i in (3, 2, 1) if launch.grid[i - 1] > 1), 1)])
        said.append(f"{launch.programs} programs ({grid}) serially: {launch.serial}" if launch.serial else
                    f"{launch.programs} programs ({grid}) batched in {launch.runs} run{'s' * (launch.runs != 1)}")
    return "; ".join(said)


def serial_report(course, jobs: int, timeout: float) -> int:
    """Every file benchmarks/verdicts.py grades (solutions, corpora, idioms): the cases with a launch
    the engine ran serially, with the reason, and a count per reason."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from verdicts import targets
    todo = targets(course)
    options = replace(Options(), device="cpu", timeout=timeout, library=(str(ROOT / "solutions"),))
    report = grade_many(course, [(pid, path) for _, pid, path in todo], options, jobs=jobs)
    reasons: dict[str, int] = defaultdict(int)
    launches = cases = 0
    print("| file | case | launch | why serially |")
    print("|---|---|---|---|")
    for (label, pid, path), result in zip(todo, report.results):
        for case in result.cases:
            seen = _seen.get((str(Path(path).resolve()), case.name), [])
            cases += bool(seen)
            launches += len(seen)
            for launch in {(tuple(x.grid), x.serial): x for x in seen if getattr(x, "serial", "")}.values():
                reasons[launch.serial] += 1
                print(f"| {label}:{path.name} | `{case.name}` | {launch.programs} programs | {launch.serial} |")
    print(f"\n{launches} launches in {cases} cases of {len(todo)} files; ran serially:")
    for why, count in sorted(reasons.items(), key=lambda item: -item[1]):
        print(f"- {count}: {why}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="puzzle ids, comma-separated (default: every puzzle)")
    parser.add_argument("--every", action="store_true", help="every large case, not only the largest")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=Options.timeout)
    parser.add_argument("--serial", action="store_true", help="every graded file's serial launches, and why")
    args = parser.parse_args(argv)
    course = Course(ROOT)
    if args.serial:
        _watch()
        return serial_report(course, args.jobs, args.timeout)
    wanted = [p for p in args.only.split(",") if p] or list(course.ids)
    _watch()
    options = replace(Options(), device="cpu", timeout=args.timeout)
    report = grade_many(course, [(p, course.solution_file(p)) for p in wanted], options, jobs=args.jobs)
    print(f"| puzzle | {'large case' if args.every else 'largest case'} | sizes | how its launches ran | case time |")
    print("|---|---|---|---|---|")
    for result in report.results:
        defined = {case.name: case for case in course.puzzle(result.puzzle).cases}
        cases = [c for c in result.cases if defined[c.name].large] or list(result.cases)
        if not cases:
            print(f"| {result.puzzle} | ({result.status}) | | | |")
            continue
        for case in cases if args.every else [max(cases, key=lambda c: _elements(c.sizes))]:
            sizes = ", ".join(f"{k}={v}" for k, v in case.sizes.items())
            status = "" if case.passed else f" ({case.kind})"
            seen = _seen.get((str(Path(course.solution_file(result.puzzle)).resolve()), case.name))
            print(f"| {result.puzzle} | `{case.name}`{status} | {sizes} | {how(seen)} "
                  f"| {case.seconds:.2f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
