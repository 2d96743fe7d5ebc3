"""`python -m grader` outside the course's environment says in one line how to get into it (issue 44):
never a traceback naming a module the learner has never heard of."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.app import ready
from paths import ROOT


def test_the_names_are_pyprojects_own_list():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11: the reference reading
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert ready.declared() == [re.match(r"[A-Za-z0-9_.-]+", entry).group() for entry in listed]
    assert "msgspec" in ready.declared() and "torch" not in ready.declared()


def test_the_list_is_read_with_comments_and_markers(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = [\n'
                                             '    "triton>=3.6,<3.10",  # 3.9: see README\n'
                                             "    'msgspec>=0.19,<0.20',\n"
                                             '    "typing-extensions; python_version < \'3.11\'",\n]\n'
                                             '[project.optional-dependencies]\ntest = ["pytest>=8"]\n')
    assert ready.declared(tmp_path) == ["triton", "msgspec", "typing-extensions"]


def test_what_is_missing_is_looked_up_not_imported(tmp_path):
    (tmp_path / "pyproject.toml").write_text('dependencies = [\n    "msgspec",\n    "typing-extensions",\n]\n')
    asked = []

    def find(name):
        asked.append(name)
        return None if name in ("msgspec", "torch") else object()
    assert ready.missing(tmp_path, find) == ["msgspec", "torch"]
    assert asked == ["msgspec", "typing_extensions", "torch"]  # torch: pyproject leaves it out on purpose


def test_this_environment_has_everything():
    assert ready.missing() == []


def _course(tmp_path: Path, venv: bool, makefile: bool = True) -> Path:
    root = tmp_path / "course"
    (root / ".venv" / "bin").mkdir(parents=True)
    if venv:
        (root / ".venv" / "bin" / "python").write_text("")
    if makefile:
        (root / "Makefile").write_text("")
    return root


def test_with_a_venv_it_says_to_activate_it(tmp_path, monkeypatch):
    root = _course(tmp_path, venv=True)
    monkeypatch.chdir(root)
    said = ready.advice(["msgspec", "torch"], root, python="/usr/bin/python3", prefix="/usr")
    assert said == ("error: this Python (/usr/bin/python3) cannot import msgspec, torch, which the grader needs. "
                    "Activate the course's environment first: `source .venv/bin/activate`")


def test_without_one_it_says_to_set_up(tmp_path, monkeypatch):
    root = _course(tmp_path, venv=False)
    monkeypatch.chdir(root)
    assert ready.advice(["torch"], root, python="/usr/bin/python3", prefix="/usr").endswith(
        "needs. Set the course up first with `make check`, then `source .venv/bin/activate`")
    monkeypatch.chdir(tmp_path)
    assert ready.advice(["torch"], root, python="/usr/bin/python3", prefix="/usr").endswith(
        "needs. Set the course up first with `make -C course check`, then `source course/.venv/bin/activate`")


def test_a_release_without_make_points_at_its_readme(tmp_path, monkeypatch):
    root = _course(tmp_path, venv=False, makefile=False)
    monkeypatch.chdir(root)
    assert ready.advice(["torch"], root, python="python3", prefix="/usr").endswith(
        "needs. Install the course first, as its README's \"Set up\" says")


def test_the_venv_itself_incomplete_is_filled_again(tmp_path, monkeypatch):
    root = _course(tmp_path, venv=True)
    monkeypatch.chdir(root)
    assert ready.advice(["msgspec"], root, python=".venv/bin/python", prefix=str(root / ".venv")).endswith(
        "needs. The course's environment .venv is incomplete: `rm .venv/.ready`, then `make check` fills it again")


@pytest.mark.slow  # runs the command line in a subprocess
def test_python_m_grader_without_the_packages_is_one_line_and_2():
    """`-S` leaves site-packages out: this Python then has none of the course's packages."""
    run = subprocess.run([sys.executable, "-S", "-m", "grader", "puzzle01"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: this Python ({sys.executable}) cannot import ")
    assert "msgspec" in lines[0] and "torch" in lines[0] and "Traceback" not in run.stderr
