"""A learner's first command, timed: `make check` in a fresh clone, as the README's "Set up" says.

    python benchmarks/first_run.py [--keep] [--commit HEAD]

Clones this repository's ``--commit`` into a temporary folder and runs `make check` there twice:
the first sets up `.venv` (torch's CPU build, the course, its pins) and says what to do next; the
second is what every later call costs. Prints, dated: each call's wall time and exit status, the
size of `.venv`, whether pip had a cache to read from (a cold cache downloads about the size of
`.venv`; the time then depends on the network), the load average, and the first call's output as
the learner sees it. ``--keep`` leaves the clone in place.
"""
from __future__ import annotations

import argparse
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def size(folder: Path) -> int:
    total = 0
    for base, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
    return total


def pip_cache() -> str:
    done = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True)
    folder = Path(done.stdout.strip()) if done.returncode == 0 else None
    if folder is None or not folder.is_dir():
        return "no pip cache"
    return f"pip cache {size(folder) / 1e9:.1f} GB"


def make_check(clone: Path) -> tuple[float, int, str]:
    start = time.monotonic()
    done = subprocess.run(["make", "check"], cwd=clone, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")})
    return time.monotonic() - start, done.returncode, done.stdout + done.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="tp-first-run-"))
    clone = folder / "triton-puzzles"
    try:
        subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", args.commit], check=True)
        commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        cache, load = pip_cache(), os.getloadavg()[0]
        first, first_status, shown = make_check(clone)
        second, second_status, _ = make_check(clone)
        venv = size(clone / ".venv") / 1e9
        print(f"{datetime.date.today().isoformat()}, commit {commit}, {os.cpu_count()} cores, load {load:.1f} "
              f"before and {os.getloadavg()[0]:.1f} after, {cache} before the first call:")
        print(f"  first `make check` (sets up): {first:.0f} s, exit {first_status}; .venv is {venv:.1f} GB")
        print(f"  second `make check`: {second:.1f} s, exit {second_status}")
        print("  the first call's output:")
        print("\n".join(f"    {line}" for line in shown.rstrip().splitlines()))
        return 0 if first_status == second_status == 0 else 1
    finally:
        if args.keep:
            print(f"kept: {clone}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
