"""Can this machine run the checks a GPU grade stands on?

On a GPU each case also runs in Triton's interpreter, every load and store checked: a load out
of bounds whose value is never used passes on a GPU unseen. Where the interpreter is broken on
this machine (a pairing of Triton and NumPy it was not written for), that check cannot run, and
a grade without it would pass such kernels in silence. :func:`interpreter_fault` runs the
sandbox's probe once per process; :func:`refusal` words what the grade says instead, with the fix.
:func:`sandbox_probe` says whether the sandbox itself starts (``doctor``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from importlib import metadata

PROBE_LIMIT_S = 180  # importing torch and triton on a loaded machine, then one tiny kernel
_lock = threading.Lock()
_found: dict[str, str | None] = {}


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


def interpreter_fault() -> str | None:
    """None where the interpreter runs the probe kernel right here, else what went wrong
    (asked once per process: every grading thread waits for the one answer)."""
    with _lock:
        if "fault" not in _found:
            _found["fault"] = _run_probe()
        return _found["fault"]


def _run_probe() -> str | None:
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    try:
        done = subprocess.run([sys.executable, "-m", "grader.sandbox.interpreter.probe"], capture_output=True,
                              text=True, timeout=PROBE_LIMIT_S, env=env)
    except subprocess.TimeoutExpired:
        return f"the probe kernel did not finish within {PROBE_LIMIT_S} s"
    lines = done.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1])
    except (IndexError, ValueError):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"the probe did not run ({last[:200]})"
    return None if answer.get("ok") else str(answer.get("error"))


def sandbox_probe(course_root=None):
    """Whether a worker's sandbox starts here (:func:`grader.channel.isolation.probe_sandbox`):
    one tiny process started in the jail a worker gets."""
    from grader.channel.isolation import probe_sandbox
    return probe_sandbox(course_root)


def fix() -> str:
    """The command that gives this machine an interpreter that works."""
    triton, numpy = _version("triton"), _version("numpy")
    if triton.startswith("3.6.") and not numpy.startswith(("1.", "2.0", "2.1", "2.2", "2.3")):
        return "pip install numpy==2.3.5   (triton 3.6's interpreter breaks with numpy 2.4 and later)"
    return "pip install -c constraints.txt triton numpy   (the tested pair)"


def refusal(fault: str) -> str:
    return (f"not graded on this machine: the bounds check that runs each case again in Triton's interpreter, "
            f"beside the GPU, cannot run here (triton {_version('triton')}, numpy {_version('numpy')}): {fault}. "
            f"Without it a load out of bounds whose value is never used would pass unseen. Fix: {fix()}; "
            f"`python -m grader doctor` checks the setup")
