"""scripts/setup_env.py, the first step of `make check` and `make test`: which torch it installs,
and that it never pulls the CUDA build onto a laptop. pip is not run: a fake runner records the
commands."""
from __future__ import annotations

import importlib.util

import pytest

from paths import ROOT

spec = importlib.util.spec_from_file_location("setup_env", ROOT / "scripts" / "setup_env.py")
setup_env = importlib.util.module_from_spec(spec)
spec.loader.exec_module(setup_env)

PIP = ["python", "-m", "pip"]


class Runner:
    def __init__(self, failing: tuple[str, ...] = ()) -> None:
        self.commands, self.failing = [], failing

    def __call__(self, command: list[str]) -> bool:
        self.commands.append(command)
        return not any(word in command for word in self.failing)


def test_torch_comes_from_pytorchs_cpu_index_first():
    runner = Runner()
    assert setup_env.install_torch(PIP, runner, planner=None) == "torch from PyTorch's CPU index"
    assert runner.commands == [[*PIP, "install", "--quiet", "--timeout", "15", "--retries", "0",
                                "--index-url", "https://download.pytorch.org/whl/cpu", "torch"]]


def test_an_unreachable_cpu_index_falls_back_to_the_default_index_only_for_a_cpu_build(capsys):
    runner = Runner(failing=("--index-url",))
    plans = {"torch==2.13.0": ["torch", "nvidia-cublas"], "torch": ["torch", "sympy", "filelock"]}
    how = setup_env.install_torch(PIP, runner, planner=lambda pip, req: plans[req])
    assert how == "torch from the default index (a CPU build: PyTorch's CPU index was unreachable)"
    assert runner.commands[-1] == [*PIP, "install", "--quiet", "torch"]
    assert "could not be reached; asking the default index instead" in capsys.readouterr().out


def test_the_cuda_build_is_never_pulled_by_the_fallback():
    runner = Runner(failing=("--index-url",))
    with pytest.raises(setup_env.SetupError, match=r"only the CUDA build of torch here \(2 NVIDIA packages, about 5 GB\)"):
        setup_env.install_torch(PIP, runner, planner=lambda pip, req: ["torch", "nvidia-cublas", "nvidia-cudnn"])
    assert len(runner.commands) == 1  # nothing installed after the refusal


def test_no_index_at_all_says_so():
    with pytest.raises(setup_env.SetupError, match="no package index could be reached"):
        setup_env.install_torch(PIP, Runner(failing=("--index-url",)), planner=lambda pip, req: None)


def test_an_environment_that_has_torch_keeps_it(tmp_path, monkeypatch):
    """A GPU machine or Colab: the new environment sees the system's torch, installs none, and
    leaves triton to that torch (no constraints)."""
    target = tmp_path / "env"
    (target / "bin").mkdir(parents=True)
    (target / "bin" / "python").write_text("")
    monkeypatch.setattr(setup_env, "has_torch", lambda python: "2.11.0+cu130")
    runner = Runner()
    assert setup_env.setup(target, runner, planner=None) == f"{target} is ready: the torch already here (2.11.0+cu130)"
    assert runner.commands == [[str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "-e", ".[test,helion]"]]
    assert (target / ".ready").read_text() == "the torch already here (2.11.0+cu130)\n"


def test_the_makefile_has_the_two_commands():
    text = (ROOT / "Makefile").read_text()
    assert "\ncheck: $(VENV)/.ready\n" in text and "\ntest: $(VENV)/.ready\n" in text
    assert "$(VENV)/.ready: pyproject.toml constraints.txt scripts/setup_env.py" in text


def test_ci_runs_the_readmes_test_command():
    readme, ci = (ROOT / "README.md").read_text(), (ROOT / ".ci" / "run").read_text()
    assert "make test     # the full test suite" in readme
    assert "\nmake test\n" in ci and "touch .venv/.ready\n" in ci


def _filled(tmp_path, system_site: bool):
    target = tmp_path / ".venv"
    (target / "bin").mkdir(parents=True)
    (target / "bin" / "python").write_text("")
    (target / ".ready").write_text("torch from PyTorch's CPU index\n")
    (target / "pyvenv.cfg").write_text(f"home = /usr/bin\ninclude-system-site-packages = {str(system_site).lower()}\n")
    return target


def test_make_notebooks_adds_jupyterlab_with_the_same_pins(tmp_path):
    target, runner = _filled(tmp_path, system_site=False), Runner()
    assert setup_env.add_notebooks(target, runner) == f"{target} has JupyterLab"
    assert runner.commands == [[str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "-e",
                                ".[notebooks]", "-c", "constraints.txt"]]
    assert (target / ".notebooks").is_file()


def test_beside_a_system_torch_jupyterlab_is_not_pinned_either(tmp_path):
    target, runner = _filled(tmp_path, system_site=True), Runner()
    setup_env.add_notebooks(target, runner)
    assert runner.commands[0][-1] == ".[notebooks]"


def test_make_notebooks_before_set_up_says_so(tmp_path):
    with pytest.raises(setup_env.SetupError, match=r"\.venv is not set up yet: run `make check` first"):
        setup_env.add_notebooks(tmp_path / ".venv", Runner())


def test_a_failed_jupyterlab_install_is_not_marked_done(tmp_path):
    target = _filled(tmp_path, system_site=False)
    with pytest.raises(setup_env.SetupError, match="installing JupyterLab failed"):
        setup_env.add_notebooks(target, Runner(failing=(".[notebooks]",)))
    assert not (target / ".notebooks").exists()
