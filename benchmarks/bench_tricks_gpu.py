"""Measures the bench's trick corpus (tests/bench_tricks/) and two honest solutions on this GPU,
in 3 to 4 minutes, as tests/test_bench_integrity.py benches them: one JSON document per file in
$OUT and a line each on stdout, what docs/benchmarks.md ("Bench integrity") records.

    OUT=logs python benchmarks/bench_tricks_gpu.py
"""
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from grader.course.loader import Course  # noqa: E402
from grader.judge.bench.run import run_bench  # noqa: E402
from grader.judge.options import Options  # noqa: E402
from grader.judge.session import Grading  # noqa: E402
from grader.report.bench import as_json  # noqa: E402
from test_bench_integrity import declared, gpu_size  # noqa: E402


def main() -> None:
    out = Path(os.environ.get("OUT", "."))
    course = Course(ROOT)
    tricks = sorted((ROOT / "tests" / "bench_tricks").glob("puzzle*.py"))
    files = [(p, course.solution_file(p)) for p in ("puzzle13", "puzzle15")] + [(f.name[:8], f) for f in tricks]
    options = Options(device="cuda", check_bounds=False, compile_check=False, library=(str(ROOT / "solutions"),))
    with Grading(course, [path for _, path in files], options, now=False) as grading:
        for puzzle, path in files:
            started = time.time()
            try:
                doc = as_json(run_bench(grading, puzzle, path, sizes=[gpu_size(path)]))
            except Exception as exc:  # noqa: BLE001 (recorded, and the next file benched)
                doc = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            (out / f"{path.stem}.json").write_text(json.dumps(doc, indent=1))
            row = (doc.get("rows") or [{}])[0]
            expect = declared(path)
            print(f"{path.stem}: {time.time() - started:.0f} s; expects {expect.get('EXPECT', 'pass')}; "
                  f"flag {row.get('flag')!r}; ms {row.get('ms')} (limit {row.get('limit_ms')}); "
                  f"rejected {row.get('rejected', '')[:170]!r}; wrong {row.get('wrong', '')[:130]!r}; "
                  f"error {doc.get('error')!r}", flush=True)


if __name__ == "__main__":
    main()
