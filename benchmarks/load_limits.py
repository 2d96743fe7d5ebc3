"""Does a machine's load change a correct kernel's verdict? (issue 32: per-case limits under load)

Grades one puzzle's solution with the grader of a given tree, at a load of at least ``--load``
per machine (busy processes are started to reach it, and ended after), and prints each case's
verdict and wall seconds, with the load average seen. Run it with two trees to compare:

    python benchmarks/load_limits.py --tree /work/main --puzzle puzzle38 --timeout 5 --load 8
    python benchmarks/load_limits.py --tree .          --puzzle puzzle38 --timeout 5 --load 8

The limit is scaled down with the case (``--timeout 5`` for cases of about 1.3 s alone, as 30 s
is for the course's slowest cases), so that a run takes a minute or two, not ten.

A whole track at the course's own limit (issue 31: the Helion track's ``--all`` under a load of 8):

    python benchmarks/load_limits.py --tree . --track helion --timeout 30 --load 8
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TRACKS = {"helion": [f"puzzle{n}" for n in range(35, 43)]}


def busy(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, required=True, help="the repository whose grader runs")
    parser.add_argument("--puzzle", nargs="+", default=["puzzle38"])
    parser.add_argument("--track", choices=sorted(TRACKS), help="every puzzle of a track, instead of --puzzle")
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--load", type=float, default=8.0, help="the load average to reach, at least")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    puzzles = TRACKS[args.track] if args.track else args.puzzle
    extra = max(0, round(args.load - os.getloadavg()[0]))
    spinners = busy(extra)
    try:
        if extra:
            time.sleep(20)  # let the 1-minute average climb
        before = os.getloadavg()[0]
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "grader", *puzzles, "--solutions", "--json",
                               "--timeout", str(args.timeout)], capture_output=True, text=True, cwd=tree,
                              env={**os.environ, "PYTHONPATH": str(tree)})
        wall = time.perf_counter() - started
        after = os.getloadavg()[0]
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    doc = json.loads(done.stdout)
    results = doc["results"] if "results" in doc else [doc]
    passed = sum(r["status"] == "pass" for r in results)
    print(f"{tree}: {' '.join(puzzles)} --timeout {args.timeout:g} on {os.cpu_count()} cores, load {before:.1f} -> "
          f"{after:.1f} ({extra} busy processes added): {passed}/{len(results)} pass in {wall:.0f} s")
    for result in results:
        print(f"{result['puzzle']}: {result['status']}")
        for case in result["cases"]:
            print(f"  {case['name']:28s} {'pass' if case['passed'] else case.get('kind'):10s} {case['seconds']:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
