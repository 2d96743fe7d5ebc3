"""The container for laptops without Triton wheels (Dockerfile, .devcontainer/, docs/container.md).
No image is built here or in CI (neither has Docker): these check what can be checked without
one. The set-up is the README's, through the same Makefile target; the dev container builds the
Dockerfile's stage that exists; Jupyter's port is the one forwarded; a host's .venv is never
copied in. The grader where bwrap cannot make its sandbox in a container: test_sandbox_probe.py."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess

import pytest

from paths import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()
DEVCONTAINER = ROOT / ".devcontainer"
SETUP = DEVCONTAINER / "setup.sh"


def stages() -> dict[str, str]:
    """Each stage's name and its instructions, in order (the last is what `docker build` makes)."""
    found = re.split(r"^FROM\s+", DOCKERFILE, flags=re.M)[1:]
    return {re.search(r"\bAS\s+(\S+)", body.splitlines()[0]).group(1): body for body in found}


def instructions(body: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, its text) with continuation lines joined and comments left out."""
    text = re.sub(r"\\\n\s*", " ", "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in text.splitlines()[1:] if line.strip()]


def devcontainer() -> dict:
    return json.loads((DEVCONTAINER / "devcontainer.json").read_text())


def test_the_image_is_slim_debian_with_the_dockerfiles_python_and_what_the_course_needs():
    assert re.search(r"^ARG PYTHON_VERSION=3\.11$", DOCKERFILE, re.M)  # CI's Python, the wheels checked for
    first = DOCKERFILE.split("\nFROM ", 1)[1].splitlines()[0]
    assert first == "python:${PYTHON_VERSION}-slim-bookworm AS system"
    [apt] = [text for kind, text in instructions(stages()["system"]) if kind == "RUN" and "apt-get install" in text]
    packages = set(apt.split("--no-install-recommends", 1)[1].split("&&")[0].split())
    assert {"make", "bubblewrap", "git"} <= packages
    assert not packages & {"gcc", "g++", "build-essential"}  # every pin is a wheel (scripts/check_wheels.py)


def test_it_runs_as_a_user_not_root_and_the_course_is_set_up_by_the_readmes_make_step():
    assert list(stages()) == ["system", "course"]  # course, the last, is docker build's default
    system, course = (instructions(body) for body in stages().values())
    assert ("USER", "learner") in system and ("WORKDIR", "/home/learner/triton-puzzles") in system
    [user] = [text for kind, text in system if kind == "RUN" and "useradd" in text]
    assert user.endswith("&& install -d -o learner -g learner /home/learner/triton-puzzles")  # .venv goes there
    assert not any(kind == "USER" for kind, _ in course)  # still learner when setting up
    assert ("COPY", "--chown=learner:learner . .") in course
    assert ("RUN", "PIP_NO_CACHE_DIR=1 sh .devcontainer/setup.sh") in course
    steps = [line for line in SETUP.read_text().splitlines() if line and not line.startswith(("#", " ", "if", "fi"))]
    assert steps == ["set -eu", 'cd "$(dirname "$0")/.."', "make .venv/.ready",
                     '.venv/bin/pip install --quiet -e ".[notebooks]" -c constraints.txt',
                     'echo "setup: ready; grade a puzzle with: python -m grader puzzle01 (notebooks: jupyter lab notebooks/)"']


def test_the_make_step_is_the_one_make_check_takes_first():
    """`make .venv/.ready` runs scripts/setup_env.py into .venv, as `make check` does the first
    time (asked of make itself, -n: nothing runs)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    rule = subprocess.run(["make", "--no-print-directory", "-n", "-B", ".venv/.ready"], cwd=ROOT,
                          capture_output=True, text=True)
    assert rule.returncode == 0, rule.stderr
    assert [shlex.split(line)[1:] for line in rule.stdout.splitlines()] == [["scripts/setup_env.py", ".venv"]]
    check = subprocess.run(["make", "--no-print-directory", "-n", "-B", "check"], cwd=ROOT,
                           capture_output=True, text=True)
    assert any(line.endswith("scripts/setup_env.py .venv") for line in check.stdout.splitlines()), check.stdout


def test_the_notebook_extra_installed_is_pyprojects():
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^notebooks = \[.*\"jupyterlab>=4\"", text, re.M)


def test_the_dev_container_builds_the_dockerfiles_system_stage_and_sets_up_in_the_mounted_clone():
    config = devcontainer()
    assert (DEVCONTAINER / config["build"]["dockerfile"]).resolve() == ROOT / "Dockerfile"
    assert (DEVCONTAINER / config["build"]["context"]).resolve() == ROOT
    assert config["build"]["target"] in stages() and config["build"]["target"] != list(stages())[-1]
    assert config["postCreateCommand"] == "sh .devcontainer/setup.sh"  # run in the workspace, the clone
    assert config["remoteEnv"]["PATH"].startswith("${containerWorkspaceFolder}/.venv/bin:")
    assert "workspaceMount" not in config  # Codespaces ignores it: the default mount works in both


def test_jupyter_answers_on_the_port_that_is_forwarded_and_exposed():
    traitlets = pytest.importorskip("traitlets.config")
    jupyter_paths = pytest.importorskip("jupyter_core.paths")
    config = traitlets.Config()
    exec((DEVCONTAINER / "jupyter_server_config.py").read_text(), {"get_config": lambda: config})
    port = config.ServerApp.port
    assert config.ServerApp.ip == "0.0.0.0" and config.ServerApp.open_browser is False
    assert devcontainer()["forwardPorts"] == [port] and str(port) in devcontainer()["portsAttributes"]
    assert ("EXPOSE", str(port)) in instructions(stages()["system"])
    # copied where every Jupyter reads its configuration, whatever environment it runs in
    assert ("COPY", ".devcontainer/jupyter_server_config.py /etc/jupyter/jupyter_server_config.py") in \
        instructions(stages()["system"])
    assert "/etc/jupyter" in jupyter_paths.jupyter_config_path()


def test_a_hosts_environment_is_never_copied_into_the_image():
    ignored = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert {".venv*", ".whl", "**/__pycache__"} <= set(ignored)
    assert ".git" not in ignored  # the tests read the course as committed (tests/pristine.py)


def test_the_scripts_keep_unix_line_endings_in_a_windows_clone():
    """git on Windows checks text out with CRLF by default; sh then fails on `set -eu\\r`."""
    attributes = (ROOT / ".gitattributes").read_text()
    for path in (".devcontainer/setup.sh", "Dockerfile"):
        done = subprocess.run(["git", "check-attr", "eol", "--", path], cwd=ROOT, capture_output=True, text=True)
        assert done.stdout.strip() == f"{path}: eol: lf", attributes


def test_the_setup_refuses_a_venv_made_for_another_system(tmp_path):
    """A clone set up on the host (a macOS .venv) cannot run in the container: setup.sh says so
    before make would try to fill it."""
    course = tmp_path / "course"
    (course / ".devcontainer").mkdir(parents=True)
    shutil.copy(SETUP, course / ".devcontainer" / "setup.sh")
    (course / ".venv" / "bin").mkdir(parents=True)
    (course / ".venv" / "bin" / "python").symlink_to("/Library/Frameworks/Python.framework/Versions/3.11/bin/python3")
    done = subprocess.run(["sh", ".devcontainer/setup.sh"], cwd=course, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip() == ("setup: .venv was made for another system (the host?); "
                                   "move it away (mv .venv .venv-host) and rebuild")
