"""Records the verdicts of the solutions, the wrong-kernel corpus, the old-signature variants and
the hostile corpus's correct idioms (those that need no sandbox token) on one device (some 320
files: about 10 minutes at --jobs 2), and compares two devices' in seconds.

    python benchmarks/verdicts.py run --device cuda --out cuda.json
    python benchmarks/verdicts.py run --device cpu --out cpu.json
    python benchmarks/verdicts.py compare cpu.json cuda.json

The GPU machine proves the solutions there; the comparison shows where a verdict depends on
the device (an out-of-bounds *load* is caught by the interpreter's bounds check, while on a
GPU only its effect on the values can show).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course.loader import Course  # noqa: E402
from grader.judge.options import Options  # noqa: E402
from grader.judge.session import grade_many  # noqa: E402


def targets(course: Course) -> list[tuple[str, str, Path]]:
    found = [("solution", pid, course.solution_file(pid)) for pid in course.ids]
    for folder, label in (("wrong_kernels", "wrong"), ("variants", "variant")):
        for path in sorted((ROOT / "tests" / folder).glob("puzzle*.py")):
            found.append((label, path.name[:8], path))
    for path in sorted((ROOT / "tests" / "hostile").glob("puzzle*.py")):  # correct code written unusually
        text = path.read_text()
        if "@@" not in text and 'EXPECT_STATUS = "pass"' in text:
            found.append(("idiom", path.name[:8], path))
    return found


def run(device: str, out: Path, jobs: int, timeout: float = 30.0) -> None:
    course = Course(ROOT)
    todo = targets(course)
    started = time.perf_counter()
    solutions = [(pid, path) for label, pid, path in todo if label == "solution"]
    sol_report = grade_many(course, solutions, Options(device=device), jobs=jobs)
    rest = [(pid, path) for label, pid, path in todo if label != "solution"]
    # The corpus of the autograd puzzles imports the reference kernels, as the test suite grades it.
    rest_report = grade_many(course, rest, Options(device=device, timeout=timeout,
                                                   library=(str(ROOT / "solutions"),)), jobs=jobs)
    verdicts = {}
    for (label, _, path), result in zip(todo, sol_report.results + rest_report.results):
        first = result.first_failure
        verdicts[f"{label}:{path.name}"] = {
            "puzzle": result.puzzle, "status": result.status,
            "kind": getattr(first, "kind", None), "message": result.message,
            "cases_passed": sum(c.passed for c in result.cases), "cases": len(result.cases),
            "max_abs_err": max((c.max_abs_err or 0.0 for c in result.cases), default=0.0),
        }
    doc = {"device": device, "solutions_seconds": sol_report.seconds, "seconds": time.perf_counter() - started,
           "verdicts": verdicts}
    try:
        import torch
        import triton
        doc["versions"] = {"torch": torch.__version__, "triton": triton.__version__}
        if device == "cuda":
            doc["gpu"] = torch.cuda.get_device_name()
    except Exception as exc:  # versions are informative only
        doc["versions"] = {"error": str(exc)}
    out.write_text(json.dumps(doc, indent=1))
    passed = sum(v["status"] == "pass" for k, v in verdicts.items() if k.startswith("solution:"))
    print(f"{device}: solutions {passed}/{len(solutions)} pass in {sol_report.seconds:.1f} s; "
          f"{len(verdicts)} targets in {doc['seconds']:.1f} s")
    for key, v in verdicts.items():
        print(f"  {key:55s} {v['status']:14s} {v['kind'] or '':14s} {v['cases_passed']}/{v['cases']}")


def compare(a_path: Path, b_path: Path) -> int:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    print(f"| target | {a['device']} | {b['device']} | same verdict |")
    print("|---|---|---|---|")
    differ = 0
    for key in a["verdicts"]:
        va, vb = a["verdicts"][key], b["verdicts"].get(key)
        if vb is None:
            continue
        same = va["status"] == vb["status"]
        differ += not same
        fmt = lambda v: f"{v['status']} {v['kind'] or ''} ({v['cases_passed']}/{v['cases']})".strip()  # noqa: E731
        print(f"| {key} | {fmt(va)} | {fmt(vb)} | {'yes' if same else '**no**'} |")
    print(f"\n{differ} verdict(s) differ")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--device", choices=("cpu", "cuda"), required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--timeout", type=float, default=30.0, help="CPU seconds per case (the corpus)")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.cmd == "run":
        run(args.device, args.out, args.jobs, args.timeout)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
