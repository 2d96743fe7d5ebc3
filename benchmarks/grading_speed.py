"""Measures the wall time of the grader's everyday commands, as a learner or CI runs them (about
2 minutes on 2 cores at --repeat 3).

    python benchmarks/grading_speed.py [--repeat 3]

Each command runs in a fresh process. "cold" runs give triton an empty cache directory, as on
a fresh machine; "warm" runs reuse one (compiled GPU-check kernels are cached). Targets
(issue 2, on the 2-core CI machine): --all --solutions at most 30 s, one puzzle at most 4 s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = {
    "--all --solutions": ["--all", "--solutions"],
    "puzzle07 (solution, via --file)": ["puzzle07", "--file", str(ROOT / "solutions" / "puzzle07_long_sum.py")],
    "puzzle07 (the stub)": ["puzzle07"],
}


def wall(args: list[str], cache: str) -> float:
    env = dict(os.environ, TRITON_CACHE_DIR=cache)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", *args, "--device", "cpu"], cwd=ROOT, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, python {sys.version.split()[0]}")
    print(f"| command | cold cache (s) | warm cache, median of {args.repeat} (s) |")
    print("|---|---|---|")
    for label, cmd in COMMANDS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = wall(cmd, cache)
            warm = [wall(cmd, cache) for _ in range(args.repeat)]
        print(f"| `python -m grader {label}` | {cold:.1f} | {statistics.median(warm):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
