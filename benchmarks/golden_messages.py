"""The golden run of message texts: every verdict the grader gives the course's own files,
reduced to what a learner reads, so that a change that must not alter a word can be shown
not to.

    python benchmarks/golden_messages.py --out FILE [--root COURSE] [--jobs 2]
    python benchmarks/golden_messages.py --compare FILE [--out NEW]   # one line per difference; exit 1 if any
    python benchmarks/golden_messages.py --compare OLD --against NEW  # two saved runs, nothing graded

It grades, in this process, on the interpreter (``--device cpu``):

* ``solutions/PUZZLE``: every reference solution, as ``--all --solutions`` does;
* ``stubs/PUZZLE``: every puzzle file as shipped, as ``--all`` does;
* ``wrong_kernels/FILE``: the wrong-kernel corpus exactly as ``python -m grader selftest`` walks
  it (``grader.app.selftest.run``; its solutions are recorded as ``selftest/PUZZLE``).

Each key maps to the verdict's status, the kind of what decided it, its message, and each case
and check by name with its kind and message. Times are left out; paths of this machine are
written relative to the course root (``<VENV>`` and ``<TMP>`` for the rest), and the module
name a worker gives a learner's file (a hash of its path) becomes ``_learner_<PATH>``.
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's grader, not whichever one the environment installed


# --- what is recorded of a verdict ------------------------------------------------------------

def scrubber(root: Path):
    """A function that takes this machine out of a text: its paths, and the hashed module names."""
    swaps = sorted({(str(root) + "/", ""), (str(root), "."), (sys.prefix, "<VENV>"),
                    (tempfile.gettempdir(), "<TMP>")}, key=lambda pair: -len(pair[0]))
    learner = re.compile(r"_learner_[0-9a-f]{12}")

    def scrub(text: str) -> str:
        for old, new in swaps:
            text = text.replace(old, new)
        return learner.sub("_learner_<PATH>", text)
    return scrub


def _kind(failure) -> str | None:
    kind = getattr(failure, "kind", None)
    return None if kind is None else str(getattr(kind, "value", kind))


def verdict(result, scrub) -> dict:
    """One result as a learner reads it: status, deciding kind, message, cases and checks."""
    status = result.status
    return {
        "status": str(getattr(status, "value", status)),
        "kind": _kind(result.first_failure),
        "message": scrub(result.message),
        "cases": {case.name: {"passed": case.passed, "kind": _kind(case), "message": scrub(case.message)}
                  for case in result.cases},
        "checks": {name: {"passed": check.passed, "kind": _kind(check), "message": scrub(check.message)}
                   for name, check in result.checks.items()},
    }


# --- the three sets ---------------------------------------------------------------------------

def grade_many_of_session():
    from grader.judge import session
    return session.grade_many


@contextlib.contextmanager
def captured_selftest_reports(sink: list):
    """selftest's grading, with each report it gets kept in ``sink``: through the parameter it
    is handed, or, where it imports the session's ``grade_many`` itself, by wrapping that."""
    from grader.app import selftest
    from grader.judge import session
    real = session.grade_many

    def keeping(course, targets, options, *args, **kwargs):
        report = real(course, targets, options, *args, **kwargs)
        sink.append((list(targets), report))
        return report
    saved = {module: getattr(module, "grade_many") for module in (session, selftest) if hasattr(module, "grade_many")}
    for module in saved:
        setattr(module, "grade_many", keeping)
    try:
        yield keeping
    finally:
        for module, original in saved.items():
            setattr(module, "grade_many", original)


def golden(root: Path, jobs: int) -> dict:
    from grader.app import selftest
    from grader.app.frontend import course_at
    from grader.judge.options import Options

    course = course_at(root)
    print(f"grader: {Path(selftest.__file__).parents[1]}; course: {course.root}", file=sys.stderr)
    scrub = scrubber(course.root)
    grade_many = grade_many_of_session()
    cpu = Options(device="cpu")
    found: dict[str, dict] = {}
    for prefix, pick in (("solutions", course.solution_file), ("stubs", course.puzzle_file)):
        started = time.perf_counter()
        targets = [(pid, pick(pid)) for pid in course.ids]
        report = grade_many(course, targets, cpu, jobs=jobs)
        for (pid, _), result in zip(targets, report.results):
            found[f"{prefix}/{pid}"] = verdict(result, scrub)
        print(f"{prefix}: {len(targets)} graded in {time.perf_counter() - started:.0f} s", file=sys.stderr)

    started = time.perf_counter()
    reports: list = []
    with captured_selftest_reports(reports) as keeping:
        options = Options(device="cpu", timeout=Options.SELFTEST_TIMEOUT)
        handed = {"grade_many": keeping} if "grade_many" in inspect.signature(selftest.run).parameters else {}
        selftest.run(course, options, jobs=jobs, **handed)
    if not reports:
        raise SystemExit("selftest graded nothing this script could see: it no longer grades through "
                         "grader.judge.session.grade_many (see captured_selftest_reports)")
    for targets, report in reports:
        for (pid, path), result in zip(targets, report.results):
            path = Path(path)
            key = f"selftest/{pid}" if path.parent.name == "solutions" else f"{path.parent.name}/{path.stem}"
            found[key] = verdict(result, scrub)
    print(f"selftest: {sum(len(t) for t, _ in reports)} graded in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    return found


# --- comparing two runs -----------------------------------------------------------------------

def differences(old: dict, new: dict) -> list[str]:
    """One line per difference: a key gone or new, or a field of a verdict that changed."""
    lines = [f"gone: {key}" for key in old if key not in new]
    lines += [f"new: {key}" for key in new if key not in old]
    for key in (k for k in old if k in new):
        lines += [f"{key}: {where}: {before!r} -> {after!r}"
                  for where, before, after in _changed(old[key], new[key], "")]
    return lines


def _changed(old, new, where: str):
    if isinstance(old, dict) and isinstance(new, dict):
        for name in dict.fromkeys([*old, *new]):
            yield from _changed(old.get(name), new.get(name), f"{where}.{name}" if where else name)
    elif old != new:
        yield where, old, new


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write this run here")
    parser.add_argument("--compare", type=Path, help="a saved run to compare with")
    parser.add_argument("--against", type=Path, help="with --compare: a second saved run instead of grading")
    parser.add_argument("--root", type=Path, default=ROOT, help="the course folder (default: this checkout)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if args.against is not None:
        if args.compare is None:
            parser.error("--against needs --compare")
        new = json.loads(args.against.read_text())
    else:
        if args.out is None and args.compare is None:
            parser.error("give --out, --compare, or both")
        started = time.perf_counter()
        new = golden(args.root, args.jobs)
        print(f"{len(new)} verdicts in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(new, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    if args.compare is None:
        return 0
    lines = differences(json.loads(args.compare.read_text()), new)
    print("\n".join(lines) if lines else "no differences")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
