"""How long the test suite takes: the figures the README's "Tests" quotes.

    python benchmarks/suite_time.py [--full] [--python .venv/bin/python]

Runs the fast tier (`pytest -m "not slow"`), and with ``--full`` the whole suite as `make test`
runs it, each once, in this checkout, as a fresh process. Prints one dated line per run: wall
time, the CPU time of pytest and every process it waited for, pytest's own summary line, and the
machine's load average before and after (on a shared machine the wall time counts the
neighbours' work too; the CPU time does not). Paste the lines into docs/benchmarks.md and the
README's figure with its date.
"""
from __future__ import annotations

import argparse
import datetime
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIERS = {"fast tier": ["-m", "not slow"], "full suite": []}


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def summary(output: str) -> str:
    """pytest's last line ("1405 passed, 3 skipped in 41.2s"), its '=' frame taken off."""
    lines = [line.strip("= ").strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def timed(python: str, name: str, args: list[str]) -> str:
    load = os.getloadavg()[0]
    cpu, start = children_cpu(), time.monotonic()
    done = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
                          capture_output=True, text=True)
    wall, cpu = time.monotonic() - start, children_cpu() - cpu
    return (f"{datetime.date.today().isoformat()}, {name} (`pytest {' '.join(args)}`): {wall:.0f} s wall, "
            f"{cpu:.0f} s CPU, on {os.cpu_count()} cores, load {load:.1f} before and {os.getloadavg()[0]:.1f} after; "
            f"exit {done.returncode}: {summary(done.stdout)}")


def commit() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return done.stdout.strip() or "not a git checkout"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the whole suite too, as `make test` runs it")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    args = parser.parse_args(argv)
    print(f"commit {commit()}, Python {sys.version.split()[0]}", flush=True)
    for name, selected in TIERS.items():
        if name == "full suite" and not args.full:
            continue
        print(timed(args.python, name, selected), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
