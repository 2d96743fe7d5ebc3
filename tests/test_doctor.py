"""`python -m grader doctor`: each rule on injected versions, the puzzle 1 check, and the command."""
import io
import json
import subprocess
import sys
from importlib import metadata

import pytest
from rich.console import Console

from grader.app import doctor, versions
from grader.app.doctor import Checkup, Finding, Gpu, diagnose
from grader.app.release import release
from grader.course.loader import Course
from grader.judge.results import CheckResult, PuzzleResult, Report
from paths import ROOT
from pristine import PRISTINE

TESTED = {"python": "3.11.7", "torch": "2.13.0+cpu", "triton": "3.7.1", "numpy": "2.4.6", "jaxtyping": "0.3.11",
          "triton-viz": None, "jupyterlab": None, "notebook": None}
NO_GPU = Gpu(False)


def findings(gpu=NO_GPU, tested=None, **versions):
    return diagnose({**TESTED, **{k.replace("_", "-"): v for k, v in versions.items()}}, gpu, tested)


def only(found, topic, severity):
    matching = [f for f in found if f.topic == topic and f.severity == severity]
    assert len(matching) == 1, found
    return matching[0]


def severities(found):
    return {f.severity for f in found}


def test_tested_set_has_no_warning_or_error():
    found = findings()
    assert severities(found) == {"ok"}
    assert only(found, "versions", "ok").message.startswith("no known bad combination")


@pytest.mark.parametrize("package", ["torch", "triton", "numpy", "jaxtyping"])
def test_missing_required_package_is_an_error(package):
    finding = only(findings(**{package: None}), package, "error")
    assert "not installed" in finding.message and finding.fix


def test_missing_torch_suggests_the_cpu_wheel():
    assert "download.pytorch.org/whl/cpu" in only(findings(torch=None), "torch", "error").fix


def test_old_triton_with_numpy_2_is_an_error():
    finding = only(findings(triton="3.1.0", numpy="2.1.3"), "triton + numpy", "error")
    assert "silently wrong" in finding.message and "constraints.txt" in finding.fix


def test_old_triton_with_numpy_1_is_not_flagged():
    assert "error" not in severities(findings(triton="3.1.0", numpy="1.26.4"))


def test_triton_3_6_with_numpy_2_4_is_an_error():
    finding = only(findings(triton="3.6.0", numpy="2.4.0"), "triton + numpy", "error")
    assert "loops" in finding.message and 'numpy<2.4' in finding.fix


def test_torch_2_11_with_numpy_2_4_cannot_record_autograd_puzzles():
    finding = only(findings(torch="2.11.0+cu130", numpy="2.5.2"), "torch + numpy", "error")
    assert "autograd puzzles (15, 22, 33, 34) cannot be recorded" in finding.message
    assert finding.fix == 'pip install "numpy<2.4"'
    assert not [f for f in findings(torch="2.13.0+cpu", numpy="2.4.6") if f.topic == "torch + numpy"]


@pytest.mark.parametrize("triton, numpy", [("3.6.0", "2.3.5"), ("3.7.1", "2.4.6"), ("3.8.0", "2.4.6")])
def test_good_triton_numpy_pairs_pass(triton, numpy):
    assert "error" not in severities(findings(triton=triton, numpy=numpy))


def test_triton_3_9_cannot_do_block_pointer_puzzles():
    finding = only(findings(triton="3.9.0"), "triton", "warning")
    assert "puzzles 13 and 14" in finding.message and "16 and 17" in finding.message


def test_triton_viz_3_0_on_triton_3_8_is_a_warning():
    finding = only(findings(triton="3.8.0", triton_viz="3.0"), "triton-viz", "warning")
    assert "does not import" in finding.message


def test_triton_viz_3_0_on_triton_3_7_is_fine():
    assert severities(findings(triton_viz="3.0")) == {"ok"}


def test_cuda_torch_without_gpu_suggests_the_cpu_build():
    finding = only(findings(Gpu(False, None, "12.6"), torch="2.13.0+cu126"), "torch", "warning")
    assert "several GB" in finding.message and "whl/cpu" in finding.fix


def test_cuda_torch_with_a_gpu_is_fine():
    found = findings(Gpu(True, "NVIDIA H100", "12.6"), torch="2.13.0+cu126")
    assert severities(found) == {"ok"}
    assert "NVIDIA H100" in only(found, "gpu", "ok").message


def test_versions_outside_the_tested_set_are_informational():
    pins = doctor.tested_pins(ROOT)
    assert pins["triton"] == "3.7.1" and "pytest" not in pins  # only the packages the doctor reports
    finding = only(findings(tested=pins, numpy="2.3.1"), "tested set", "ok")
    assert "numpy 2.3.1 (tested: " in finding.message and "constraints.txt" in finding.fix
    assert not [f for f in findings(tested={"triton": "3.7.1"}) if f.topic == "tested set"]


def test_release_numbers():
    assert versions.release("2.13.0+cu126") == (2, 13, 0)
    assert versions.release("3.2.0rc1") == (3, 2, 0)
    assert versions.release("3.0") == (3, 0)


def test_errors_exit_1_and_warnings_exit_0():
    assert Checkup(TESTED, NO_GPU, (Finding("warning", "t", "m"),)).exit_code == 0
    assert Checkup(TESTED, NO_GPU, (Finding("ok", "t", "m"), Finding("error", "t", "m"))).exit_code == 1


def test_outside_a_course_grading_is_not_tried(monkeypatch):
    # helion's import probe (seconds, a minute on a busy machine) has tests of its own
    monkeypatch.setattr(doctor, "package_finding", lambda spec, version: doctor.Finding("ok", spec.package, "not probed here"))
    report = doctor.checkup(None)
    assert only(report.findings, "grading", "warning").message.startswith("not tried: no course here")


def test_a_failing_puzzle01_is_an_error(course, monkeypatch):
    from grader.judge import session
    failed = PuzzleResult(puzzle="puzzle01", title="Constant add", status="fail", source="x", device="cpu",
                          message="case classic[seed=0]: wrong values",
                          checks={"gpu_compile": CheckResult(False, "no sm_90", "compile"),
                                  "bounds": CheckResult(False, "case classic[seed=0]: wrong values")})
    monkeypatch.setattr(session, "grade_many", lambda *a, **k: Report(results=(failed,), seconds=1.0))
    finding = doctor.grade_puzzle01(course)
    assert finding.severity == "error"
    assert "cannot be trusted" in finding.message and "classic[seed=0]" in finding.message
    assert "gpu_compile: no sm_90" in finding.message
    assert finding.message.count("wrong values") == 1  # a check that repeats the reason is not said twice


def test_an_interpreter_that_fails_the_probe_is_an_error_with_the_fix(monkeypatch):
    from grader.judge import machine
    monkeypatch.setattr(machine, "interpreter_fault", lambda: "a loop over a run-time bound raised TypeError: x")
    monkeypatch.setattr(machine, "_version", {"triton": "3.6.0", "numpy": "2.5.2"}.get)
    finding = doctor.interpreter_finding()
    assert finding.severity == "error" and finding.message.startswith(
        "Triton's interpreter fails the probe kernel here: a loop over a run-time bound raised TypeError: x.")
    assert "on a GPU the bounds check beside each case cannot run: grades are refused" in finding.message
    assert finding.fix.startswith("pip install numpy==2.3.5")


@pytest.mark.slow  # builds a release and grades puzzle01 in it
def test_learner_copy_grades_the_built_in_kernel(tmp_path, course):
    release(course, tmp_path / "copy")
    finding = doctor.grade_puzzle01(Course(tmp_path / "copy"))
    assert finding == Finding("ok", "grading", finding.message)
    assert finding.message.startswith("a known-good puzzle 1 kernel passes the interpreter and the GPU compile check")


def test_text_keeps_brackets_and_shows_fixes():
    report = Checkup(TESTED, NO_GPU, (Finding("error", "grading", "case classic[seed=0] failed", "do this"),))
    out = io.StringIO()
    doctor.render_text(report, Console(file=out, width=60))
    text = out.getvalue()
    assert "triton-viz  not installed (optional)" in text
    assert "error   grading: case classic[seed=0] failed" in text
    assert "        fix: do this" in text
    assert "1 error(s): verdicts on this machine could be wrong." in text


def doctor_command(*args):
    # the course found from here is the one committed: a learner's broken puzzle 1 is no fault of the machine
    return subprocess.run([sys.executable, "-m", "grader", "doctor", *args], cwd=PRISTINE, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow  # runs the command line in a subprocess
def test_doctor_command_on_this_machine():
    run = doctor_command()
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [line.rstrip() for line in run.stdout.splitlines()]
    assert any(line.split()[:2] == ["triton", metadata.version("triton")] for line in lines), lines
    assert any(line.startswith("GPU ") for line in lines)
    assert ("ok      grading: puzzle 1's reference solution passes the interpreter and the GPU compile check"
            in run.stdout)
    assert lines[-1].startswith("ready to grade")


@pytest.mark.slow  # runs the command line in a subprocess
def test_doctor_json():
    run = doctor_command("--json")
    doc = json.loads(run.stdout)
    assert run.returncode == doc["exit_code"] == 0
    assert doc["versions"]["triton"] and doc["gpu"]["available"] in (True, False)
    assert {f["severity"] for f in doc["findings"]} <= {"ok", "warning", "error"}
    assert any(f["topic"] == "grading" and f["severity"] == "ok" for f in doc["findings"])


# ---- the sandbox: a tiny process started in a worker's jail, with bwrap's words where it fails ----
def _fake_bwrap(folder, script):
    """A `bwrap` first on PATH that runs ``script`` (sh): the probe meets it as it would the real one."""
    import os
    import stat
    path = folder / "bwrap"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin"


def test_the_sandbox_works_here_where_bwrap_does(course):
    from grader.channel.isolation import bubblewrap
    from grader.judge import machine
    if bubblewrap() is None:
        pytest.skip("bubblewrap does not run on this machine")
    probe = machine.sandbox_probe(course.root)
    assert probe.state == "works", probe
    finding = doctor.sandbox_finding(probe)
    assert finding == Finding("ok", "sandbox", "bubblewrap started a process in a worker's sandbox: learner code runs "
                              "there with no network, in its own PID namespace, and reads only the system, Python "
                              "and the files it grades.")


def test_no_bwrap_is_a_warning_with_the_package_to_install(tmp_path, monkeypatch):
    from grader.judge import machine
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap there
    probe = machine.sandbox_probe()
    assert probe.state == "missing"
    finding = doctor.sandbox_finding(probe, "Linux")
    assert finding.severity == "warning" and finding.message == (
        "bubblewrap (bwrap) is not installed, so learner code runs without the sandbox. Your own checks still grade, "
        "in a process session with limits only; `batch` refuses a class's code without the sandbox unless given "
        "--no-sandbox.")
    assert finding.fix.startswith("sudo apt-get install bubblewrap")
    assert "container" in doctor.sandbox_finding(probe, "Darwin").fix


def test_bwrap_refused_namespaces_is_said_in_its_words_with_the_sysctl(tmp_path, monkeypatch):
    from grader.judge import machine
    said = ("bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
            "non-privileged user namespaces.")
    monkeypatch.setenv("PATH", _fake_bwrap(tmp_path, f"echo '{said}' >&2\nexit 1\n"))
    probe = machine.sandbox_probe()
    assert probe == type(probe)("fails", said)
    finding = doctor.sandbox_finding(probe)
    assert finding.severity == "warning"
    assert finding.message.startswith(f"bubblewrap is installed but its sandbox fails here: {said} Your own checks")
    assert ".." not in finding.message
    assert "kernel.unprivileged_userns_clone=1" in finding.fix


def test_a_jail_whose_process_cannot_start_fails_though_bwrap_itself_runs(tmp_path, monkeypatch, course):
    """The mounts' probe passes (`... true`), the worker's jail does not: the process started in it is
    what tells."""
    from grader.judge import machine
    script = ('for last; do :; done\nif [ "$last" = true ]; then exit 0; fi\n'
              'echo "bwrap: Can\'t mount proc on /newroot/proc: Operation not permitted" >&2\nexit 1\n')
    monkeypatch.setenv("PATH", _fake_bwrap(tmp_path, script))
    from grader.channel import isolation
    isolation.bubblewrap.cache_clear()
    try:
        probe = machine.sandbox_probe(course.root)
    finally:
        isolation.bubblewrap.cache_clear()
    assert probe.state == "fails" and probe.error == "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"
    assert "--security-opt" in doctor.sandbox_finding(probe).fix
