"""Issue 31 on any machine: every wrong Helion kernel fails (or, where the interpreter cannot
run it, is the interpreter's limit; on a GPU, fails), and Helion's own examples pass.

    python benchmarks/helion_truth.py [--device cuda] [--jobs 4]

Grades tests/wrong_kernels/puzzle35..42_*, tests/helion_corpus/untiled/ and lowering/ (must not
pass) and tests/helion_corpus/puzzle*.py (must pass), one line per file; exit 1 on any breach.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from grader.course.loader import Course
    from grader.judge.options import Options
    from grader.judge.session import grade_many
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--jobs", type=int, default=2)
    options = parser.parse_args()
    wrong = sorted(p for n in range(35, 43) for p in (ROOT / "tests" / "wrong_kernels").glob(f"puzzle{n}_*.py"))
    wrong += sorted((ROOT / "tests" / "helion_corpus" / "untiled").glob("puzzle*.py"))
    wrong += sorted((ROOT / "tests" / "helion_corpus" / "lowering").glob("puzzle*.py"))
    right = sorted((ROOT / "tests" / "helion_corpus").glob("puzzle*.py"))
    files = wrong + right
    report = grade_many(Course(ROOT), [(f.name[:8], f) for f in files],
                        Options(timeout=300, device=options.device), jobs=options.jobs)
    breaches = 0
    for path, result in zip(files, report.results):
        status = str(getattr(result.status, "value", result.status))
        bad = (status == "pass") if path in wrong else (status != "pass")
        breaches += bad
        print(f"{'BREACH ' if bad else ''}{path.relative_to(ROOT)}: {status}: {result.message[:300]}")
    print(f"{len(files)} files, {breaches} breach(es) on {options.device}")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
