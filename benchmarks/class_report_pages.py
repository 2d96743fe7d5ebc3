"""Measures nothing: writes two class pages to look at, in seconds (plus chromium's screenshots):
a class of 5 (the teacher's first batch of issue 34: the students passed 2, 4, 1, 0 and 3
puzzles; one progress file) and a class of 40, from typed results (nothing is graded), written
as report.html and, where chromium is installed, screenshotted.

    PYTHONPATH=$PWD python benchmarks/class_report_pages.py OUT_DIR [--shots docs/images]
"""
from __future__ import annotations

import argparse
import random
import shutil
import subprocess
from pathlib import Path

from grader.judge.failures import FailureKind
from grader.judge.results import Attempts, CaseResult, PuzzleResult, Status, StudentResult
from grader.report.class_page import class_page

TITLES = {"puzzle01": "Constant add", "puzzle02": "Constant add, blocked", "puzzle03": "Outer vector add",
          "puzzle04": "Outer vector add, blocked", "puzzle05": "Fused outer multiplication",
          "puzzle07": "Long sum", "puzzle08": "Long softmax"}
IDS = list(TITLES)


def _result(puzzle: str, status: Status) -> PuzzleResult:
    cases = () if status == Status.NOT_ATTEMPTED else (CaseResult(
        "classic", {"N0": 32}, {"B0": 32}, 0, (32,), status == Status.PASS,
        None if status == Status.PASS else FailureKind.MISMATCH,
        "" if status == Status.PASS else "case classic (N0=32): wrong values in `z`: 32 of 32 elements differ."),)
    message = {Status.FAIL: "case classic (N0=32): wrong values in `z`: 32 of 32 elements differ.",
               Status.NOT_ATTEMPTED: "no kernel in the submission"}.get(status, "")
    return PuzzleResult(puzzle, TITLES[puzzle], status, f"x/{puzzle}.py", "cpu", cases, {}, message)


def _student(name: str, passed: int, failed: int, attempts: tuple[Attempts, ...] = ()) -> StudentResult:
    statuses = [Status.PASS] * passed + [Status.FAIL] * failed
    statuses += [Status.NOT_ATTEMPTED] * (len(IDS) - len(statuses))
    return StudentResult(name, tuple(_result(p, s) for p, s in zip(IDS, statuses)), (), 3.0, attempts)


def class_of_5() -> list[StudentResult]:
    one = (Attempts("puzzle01", 6, 36 * 60.0, "2026-11-20 10:00:00", "2026-11-20 10:36:00", "passed", 6),)
    return [_student("ana", 2, 1, one), _student("bo", 4, 0), _student("Zoë Ñúñez", 1, 2), _student("di", 0, 1),
            _student("eli", 3, 1)]


def class_of_40(seed: int = 7) -> list[StudentResult]:
    rng = random.Random(seed)
    students = []
    for i in range(40):
        passed = rng.randint(0, len(IDS))
        failed = rng.randint(0, len(IDS) - passed)
        attempts = tuple(Attempts(p, rng.randint(1, 9), rng.uniform(120, 3600), "2026-11-20 10:00:00",
                                  "2026-11-20 11:00:00", "passed" if k < passed else "failing", None)
                         for k, p in enumerate(IDS[:passed + failed])) if i % 3 else ()
        students.append(_student(f"student{i:02d}", passed, failed, attempts))
    return students


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--shots", type=Path, help="write class_report_5.png and class_report_40.png here")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    for name, results in (("5", class_of_5()), ("40", class_of_40())):
        page = args.out / f"class_report_{name}.html"
        page.write_text(class_page(results, IDS, 60.0), encoding="utf-8")
        print(page)
        if args.shots and browser:
            args.shots.mkdir(parents=True, exist_ok=True)
            shot = (args.shots / f"class_report_{name}.png").resolve()
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--screenshot={shot}",
                            "--window-size=1400,1400" if name == "5" else "--window-size=1400,2000",
                            page.resolve().as_uri()], check=True, capture_output=True, timeout=120)
            print(shot)


if __name__ == "__main__":
    main()
