"""``python -m grader doctor``: can this machine be trusted to grade?

It reads the installed versions, checks them against the combinations known to break the
interpreter or the course, and grades puzzle 1 through the grader's own machinery, so a
setup problem shows up here rather than as a puzzling verdict. :func:`diagnose` is pure
(versions in, findings out): every rule is tested without installing the bad combination.
"""
from __future__ import annotations

import json
import platform
import shutil
import tempfile
import warnings
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Mapping

from grader.app.versions import release
from grader.course import kinds
from grader.judge.results import CheckName, ExitCode

# Distributions as pip names them. The optional ones are only reported.
REQUIRED = ("torch", "triton", "numpy", "jaxtyping")
OPTIONAL = ("triton-viz", "jupyterlab", "notebook", *kinds.packages())

TESTED_SET = "pip install -e . -c constraints.txt"
TESTED_TRITON = "pip install -c constraints.txt triton numpy"
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
# A kind's package's first import (Helion's, with torch's) takes seconds; more than this and
# something is wrong.
PACKAGE_IMPORT_LIMIT_S = 180

# Puzzle 1 solved, graded in a learner's copy (no solutions/) to prove the grading path works.
KNOWN_GOOD_PUZZLE01 = """\
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):
    tl.store(z_ptr + tl.arange(0, B0), tl.load(x_ptr + tl.arange(0, B0)) + 10.0)
"""


@dataclass(frozen=True)
class Finding:
    severity: str  # "ok", "warning", or "error": verdicts on this machine could be wrong
    topic: str
    message: str
    fix: str = ""


@dataclass(frozen=True)
class Gpu:
    available: bool
    name: str | None = None
    cuda_build: str | None = None  # torch.version.cuda: the CUDA a torch build targets; None for a CPU build


@dataclass(frozen=True)
class Checkup:
    versions: Mapping[str, str | None]
    gpu: Gpu
    findings: tuple[Finding, ...]

    @property
    def exit_code(self) -> int:
        return ExitCode.FAILED if any(f.severity == "error" for f in self.findings) else ExitCode.OK


def diagnose(versions: Mapping[str, str | None], gpu: Gpu,
             tested: Mapping[str, str] | None = None) -> list[Finding]:
    """Findings about the versions alone. ``tested``: constraints.txt's pins, where there is one."""
    have = {name: release(text) for name, text in versions.items() if text}
    found = []
    for name in REQUIRED:
        if name not in have:
            why = "every puzzle file imports it" if name == "jaxtyping" else "the puzzles and the grader need it"
            fix = CPU_TORCH + "   (on a GPU machine: the build you already have)" if name == "torch" \
                else f"pip install {name} -c constraints.txt"
            found.append(Finding("error", name, f"{name} is not installed: {why}.", fix))
    triton, numpy, viz = have.get("triton"), have.get("numpy"), have.get("triton-viz")

    # Measured: with numpy 2.1.3, triton 3.1.0's interpreter leaves every output at zero; triton 3.2.0
    # with the same numpy, and triton 3.1.0 with numpy 1.26.4, compute the right values.
    if triton and numpy and triton < (3, 2) and numpy >= (2,):
        found.append(Finding(
            "error", "triton + numpy",
            f"triton {versions['triton']} with numpy {versions['numpy']}: the interpreter of triton before 3.2 "
            "was not written for NumPy 2 and can give silently wrong answers, so right kernels may fail and "
            "wrong ones pass.", TESTED_TRITON + "   (the tested pair)"))
    if triton and numpy and triton[:2] == (3, 6) and numpy >= (2, 4):
        found.append(Finding(
            "error", "triton + numpy",
            f"triton {versions['triton']} with numpy {versions['numpy']}: the interpreter breaks on loops whose "
            "bounds are runtime values (puzzle 7 onwards), failing right kernels.",
            'pip install "numpy<2.4"   (or the tested pair: ' + TESTED_TRITON + ")"))
    # Measured on the H100 machine (torch 2.11.0, numpy 2.5.2): torch._dynamo.utils defines nothing
    # numpy-related, so FakeTensorMode, which records autograd wrappers, fails to import.
    torch = have.get("torch")
    if torch and numpy and torch[:2] <= (2, 11) and numpy >= (2, 4):
        found.append(Finding(
            "error", "torch + numpy",
            f"torch {versions['torch']} with numpy {versions['numpy']}: torch's fake tensors fail to import "
            "(NP_SUPPORTED_MODULES), so autograd puzzles (15, 22, 33, 34) cannot be recorded.",
            'pip install "numpy<2.4"'))
    if triton and triton >= (3, 9):
        found.append(Finding(
            "warning", "triton",
            f"triton {versions['triton']} removed block pointers: `tl.make_block_ptr` raises NotImplementedError, "
            "so puzzles 13 and 14 cannot be solved with it. Do puzzles 16 and 17 (tensor descriptors) instead.",
            TESTED_TRITON + "   (triton 3.7.1 still has block pointers)"))
    if viz and triton and viz < (3, 1) and triton >= (3, 8):
        found.append(Finding(
            "warning", "triton-viz",
            f"triton-viz {versions['triton-viz']} does not import on triton {versions['triton']}. The grader "
            "does not need it (its own pictures use matplotlib), but your own triton_viz cells will fail.",
            TESTED_TRITON + "   (or: pip uninstall triton-viz)"))
    if gpu.cuda_build and not gpu.available:
        found.append(Finding(
            "warning", "torch",
            f"torch {versions.get('torch')} is a CUDA {gpu.cuda_build} build (several GB), but no GPU is seen. "
            "Grading here runs on the CPU, which the much smaller CPU build does just as well.",
            f"pip uninstall torch && {CPU_TORCH}"))
    if not found:
        found.append(Finding("ok", "versions", "no known bad combination of torch, triton, numpy and triton-viz."))

    untested = [f"{name} {versions[name]} (tested: {pin})" for name, pin in (tested or {}).items()
                if versions.get(name) and release(versions[name]) != release(pin)]
    if untested:
        found.append(Finding("ok", "tested set", "not the tested set (for your information): "
                             + ", ".join(untested) + ".", TESTED_SET + "   (to match it exactly)"))

    if gpu.available:
        found.append(Finding("ok", "gpu", f"{gpu.name}: kernels are graded on it."))
    else:
        found.append(Finding("ok", "gpu", "none seen: kernels run in Triton's interpreter on the CPU and are "
                             "compiled for a GPU target (sm_90) to check they would build."))
    return found


def installed_versions() -> dict[str, str | None]:
    """Read from package metadata, so that nothing is imported (a broken package still shows)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in REQUIRED + OPTIONAL:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def detect_gpu() -> Gpu:
    try:
        import torch
    except ImportError:
        return Gpu(False)
    with warnings.catch_warnings():  # a CUDA build without a driver warns here; the finding says it better
        warnings.simplefilter("ignore")
        available = torch.cuda.is_available()
    return Gpu(available, torch.cuda.get_device_name(0) if available else None, torch.version.cuda)


def tested_pins(root: Path | None) -> dict[str, str]:
    """The ``name==version`` pins of constraints.txt for the packages the doctor reports."""
    path = root / "constraints.txt" if root is not None else None
    if path is None or not path.is_file():
        return {}
    pins = {}
    for line in path.read_text().splitlines():
        name, _, pin = line.split("#")[0].strip().partition("==")
        if pin and name.lower() in REQUIRED + OPTIONAL:
            pins[name.lower()] = pin.strip()
    return pins


def package_finding(spec: kinds.KindSpec, version: str | None) -> Finding:
    """Whether a kind's puzzles (the Helion track) can be graded here: its package installed, and
    importing (timed, in a process of its own set up as a grading worker imports it: this one
    never imports the package)."""
    import os
    import subprocess
    import sys
    package, install = spec.package, spec.install or ""
    if version is None:
        return Finding("warning", package, f"{package} is not installed: {spec.track_called}'s puzzles are graded "
                       "`unsupported` (the other tracks do not need it).", install)
    probe = (f"import time; t = time.perf_counter(); import {spec.probe_modules or package}; "
             "print(f'{time.perf_counter() - t:.1f}')")
    env = {**os.environ, **dict(spec.probe_env)}
    env.pop("TRITON_INTERPRET", None)
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                              timeout=PACKAGE_IMPORT_LIMIT_S)
    except subprocess.TimeoutExpired:
        return Finding("warning", package, f"{package} {version} did not import within {PACKAGE_IMPORT_LIMIT_S} s: "
                       f"grading {spec.one_puzzle} would time out.", install + "   (in a fresh environment)")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no error message"])[-1]
        note = f"   ({spec.install_note})" if spec.install_note else ""
        return Finding("warning", package, f"{package} {version} is installed but does not import: {last}. "
                       f"{spec.track_called[0].upper()}{spec.track_called[1:]} cannot be graded here.", install + note)
    seconds = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "?"
    return Finding("ok", package, f"{package} {version} imports ({seconds} s, with torch): {spec.track_called} is "
                   f"{spec.graded_how}.")


def interpreter_finding() -> Finding:
    """Whether Triton's interpreter computes a loop over a run-time bound right here: it grades every
    kernel on the CPU, and checks every load and store beside a GPU (the probe the grade runs too)."""
    from grader.judge import machine
    fault = machine.interpreter_fault()
    if fault is None:
        return Finding("ok", "interpreter", "Triton's interpreter runs the probe kernel (a loop over a run-time "
                       "bound, masked loads, a reduction) right.")
    return Finding("error", "interpreter", f"Triton's interpreter fails the probe kernel here: {fault}. Grading "
                   "on the CPU would be wrong, and on a GPU the bounds check beside each case cannot run: grades "
                   "are refused.", machine.fix())


SANDBOX_DOES = ("learner code runs there with no network, in its own PID namespace, and reads only the system, "
                "Python and the files it grades")
NO_SANDBOX = ("Your own checks still grade, in a process session with limits only; `batch` refuses a class's "
              "code without the sandbox unless given --no-sandbox.")


def sandbox_finding(probe, system: str | None = None) -> Finding:
    """Whether bubblewrap's sandbox works here, from ``probe`` (a tiny process started in a worker's
    jail: :func:`grader.judge.machine.sandbox_probe`): works, not installed, or installed but
    failing, with bwrap's words and the fix for what they say."""
    system = system or platform.system()
    if probe.state == "works":
        return Finding("ok", "sandbox", f"bubblewrap started a process in a worker's sandbox: {SANDBOX_DOES}.")
    if probe.state == "missing":
        fix = ("sudo apt-get install bubblewrap   (Debian, Ubuntu; `sudo dnf install bubblewrap` on Fedora)"
               if system == "Linux" else
               "bubblewrap is Linux's: grade a class in the course's container (Dockerfile), on Linux or WSL2")
        return Finding("warning", "sandbox", f"bubblewrap (bwrap) is not installed, so learner code runs "
                       f"without the sandbox. {NO_SANDBOX}", fix)
    error = probe.error or "no message"
    lowered = error.lower()
    if "proc" in lowered:  # a container that masks parts of its /proc refuses a new one
        fix = ("in Docker, start the container with `--security-opt seccomp=unconfined --security-opt "
               "apparmor=unconfined --security-opt systempaths=unconfined`; or keep grading without the sandbox, "
               "the container standing in for it")
    elif "namespace" in lowered or "uid map" in lowered or "permission" in lowered or "not permitted" in lowered:
        fix = ("this kernel forbids unprivileged user namespaces: `sudo sysctl -w kernel.unprivileged_userns_clone=1` "
               "(Debian), or `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 23.10 and later)")
    else:
        fix = "run `bwrap --unshare-all --ro-bind / / true` to see bwrap's error; bubblewrap 0.4 or later is needed"
    return Finding("warning", "sandbox", f"bubblewrap is installed but its sandbox fails here: {error.rstrip('.')}. "
                   f"{NO_SANDBOX}", fix)


def grade_puzzle01(course) -> Finding:
    """Grade puzzle 1 exactly as `python -m grader` does: worker, interpreter, GPU compile check."""
    from grader.course.loader import CourseError
    from grader.judge.options import Options
    from grader.judge.session import grade_many
    scratch = None
    try:
        path, what = course.solution_file("puzzle01"), "puzzle 1's reference solution"
    except CourseError:  # a learner's copy ships no solutions/
        scratch = Path(tempfile.mkdtemp(prefix="triton-puzzles-doctor-"))
        path, what = scratch / "puzzle01_known_good.py", "a known-good puzzle 1 kernel"
        path.write_text(KNOWN_GOOD_PUZZLE01)
    try:
        result = grade_many(course, [("puzzle01", path)], Options(device="cpu")).results[0]
    except Exception as exc:  # the point is to report whatever stops grading, not to crash on it
        return Finding("error", "grading", f"grading {what} raised {type(exc).__name__}: {exc}",
                       "fix the errors above first; if there are none, please report this with the output of "
                       "`python -m grader doctor --json`")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    steps = "the interpreter" + (" and the GPU compile check" if CheckName.GPU_COMPILE in result.checks else "")
    if result.passed:
        return Finding("ok", "grading", f"{what} passes {steps} ({result.seconds:.1f} s).")
    failed = [f"{name}: {check.message}" for name, check in result.checks.items()
              if not check.passed and check.message != result.message]
    return Finding("error", "grading", f"{what} does not pass {steps}, so verdicts here cannot be trusted: "
                   + "; ".join([result.message.rstrip("."), *failed]),
                   "fix the errors above; else install the tested set: " + TESTED_SET)


def checkup(course=None, grade: bool = True) -> Checkup:
    """The versions, the machine and its packages, then, with ``grade`` and a course, puzzle 1 graded
    (:func:`grade_puzzle01`)."""
    versions = installed_versions()
    gpu = detect_gpu()
    findings = diagnose(versions, gpu, tested_pins(course.root if course else None))
    from grader.judge import machine
    findings.append(sandbox_finding(machine.sandbox_probe(course.root if course else None)))
    if grade:
        findings.extend(package_finding(spec, versions.get(spec.package)) for spec in kinds.SPECS.values()
                        if spec.package)
        if not any(f.severity == "error" and f.topic in REQUIRED for f in findings):
            findings.append(interpreter_finding())
    if not grade:
        pass
    elif course is None:
        findings.append(Finding("warning", "grading", "not tried: no course here (the folder holding puzzles/).",
                                "run `python -m grader doctor` from the course folder, or pass --root PATH"))
    elif any(f.severity == "error" and f.topic in REQUIRED for f in findings):
        findings.append(Finding("error", "grading", "not tried: a required package is missing (above).",
                                "install it, then run `python -m grader doctor` again"))
    else:
        findings.append(grade_puzzle01(course))
    return Checkup(versions, gpu, tuple(findings))


STYLES = {"ok": "green", "warning": "yellow", "error": "bold red"}


def render_text(report: Checkup, console) -> None:
    """Versions, then one line per finding with its fix under it, on a rich Console."""
    from rich.table import Table
    from rich.text import Text
    table = Table.grid(padding=(0, 2))
    for name, version in report.versions.items():
        optional = " (optional)" if name in OPTIONAL else ""
        table.add_row(name, version or f"not installed{optional}")
    gpu = report.gpu
    cuda_note = f" (torch is a CUDA {gpu.cuda_build} build)" if gpu.cuda_build else ""
    table.add_row("GPU", gpu.name if gpu.available else f"none seen{cuda_note}")
    console.print(table)
    console.print()
    for finding in report.findings:
        # Text, not markup: messages hold brackets such as case labels ("classic[seed=0]").
        console.print(Text.assemble((f"{finding.severity:<8}", STYLES[finding.severity]),
                                    f"{finding.topic}: {finding.message}"), soft_wrap=True)
        if finding.fix:
            console.print(Text(f"{'':8}fix: {finding.fix}"), soft_wrap=True)
    errors = sum(f.severity == "error" for f in report.findings)
    warned = sum(f.severity == "warning" for f in report.findings)
    console.print()
    console.print(Text(f"{errors} error(s): verdicts on this machine could be wrong." if errors else
                       f"ready to grade ({warned} warning(s))." if warned else "ready to grade.",
                       style=STYLES["error" if errors else "warning" if warned else "ok"]), soft_wrap=True)


def render_json(report: Checkup) -> str:
    return json.dumps({"versions": dict(report.versions), "gpu": asdict(report.gpu),
                       "findings": [asdict(f) for f in report.findings], "exit_code": report.exit_code},
                      indent=2)
