"""Create and fill the course's virtual environment, the first time `make` needs it.

    python3 scripts/setup_env.py [.venv]

Steps, each said as it is taken:

1. A Python that already imports torch (a GPU machine, Colab) keeps its own: the environment
   sees the system's packages and installs no torch.
2. Otherwise torch comes from PyTorch's CPU-only index, tried once with a short timeout.
3. If that index cannot be reached, the default index is asked what it would install, and
   used only if that is a CPU build (no NVIDIA packages): a laptop never gets the 5 GB CUDA
   build by accident. If it would be, this stops and says how to go on.
4. The course itself, with its test tools and the Helion track (the [test] and [helion] extras),
   pinned by constraints.txt: the two commands give the whole course, and every test can run.

Once filled, the environment is marked ready (``.venv/.ready``): `make` runs this again only
when pyproject.toml, constraints.txt or this script change. Only the standard library is used:
this runs before anything is installed.

    python3 scripts/setup_env.py .venv --notebooks

adds JupyterLab and Notebook 7 (the [notebooks] extra) to a filled environment, with the same
pins, and marks it (``.venv/.notebooks``): the first step of `make notebooks`.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH = "torch"
# Asked of the default index in turn when PyTorch's is out of reach: the release CI pins (which some
# mirrors carry as a CPU build), then the newest.
FALLBACKS = ("torch==2.13.0", "torch")
QUICK = ["--timeout", "15", "--retries", "0"]
# The whole course: the tests, and the Helion track (puzzles 35 on), whose tests would otherwise skip.
EXTRAS = ".[test,helion]"
NOTEBOOKS = ".[notebooks]"  # JupyterLab and Notebook 7: `make notebooks` only, the tests need neither
PINS = ["-c", "constraints.txt"]


class SetupError(Exception):
    """Setting up cannot go on; the message says why and what to do."""


def say(text: str) -> None:
    print(f"setup: {text}", flush=True)


def run(command: list[str]) -> bool:
    return subprocess.run(command, cwd=ROOT).returncode == 0


def has_torch(python: str) -> str | None:
    """The torch version ``python`` imports, or None."""
    done = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def would_install(pip: list[str], requirement: str) -> list[str] | None:
    """The packages pip would install for ``requirement`` from the default index, or None if it
    cannot tell (no network either)."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        if not run([*pip, "install", "--dry-run", "--quiet", *QUICK, "--report", str(report), requirement]):
            return None
        return [item["metadata"]["name"] for item in json.loads(report.read_text()).get("install", [])]


def install_torch(pip: list[str], runner=run, planner=would_install) -> str:
    """Install torch's CPU build; returns how it was done, for the closing line."""
    if runner([*pip, "install", "--quiet", *QUICK, "--index-url", CPU_INDEX, TORCH]):
        return "torch from PyTorch's CPU index"
    say(f"PyTorch's CPU index ({CPU_INDEX}) could not be reached; asking the default index instead")
    cuda_only = 0
    for requirement in FALLBACKS:
        planned = planner(pip, requirement)
        if planned is None:
            continue
        nvidia = [name for name in planned if name.lower().startswith("nvidia")]
        if nvidia:
            cuda_only = len(nvidia)
            continue
        if not runner([*pip, "install", "--quiet", requirement]):
            raise SetupError(f"installing {requirement} from the default index failed (pip's message is above)")
        return f"{requirement} from the default index (a CPU build: PyTorch's CPU index was unreachable)"
    if cuda_only:
        raise SetupError(f"the default index offers only the CUDA build of torch here ({cuda_only} NVIDIA packages, "
                         f"about 5 GB), which a CPU-only course does not need. Reach {CPU_INDEX}, or install a "
                         f"torch wheel you have (`.venv/bin/pip install path/to/torch.whl`), then run this again")
    raise SetupError("no package index could be reached: connect, or install torch yourself "
                     "(`.venv/bin/pip install torch`) and run this again")


def setup(target: Path, runner=run, planner=would_install, system_python: str = sys.executable) -> str:
    """Fill ``target`` (create it, install torch unless it has one, install the course); returns
    the summary line."""
    ready = target / ".ready"
    python = target / "bin" / "python"
    own_torch = has_torch(system_python)
    if not python.exists():
        say(f"creating {target}" + (f" beside this Python's torch {own_torch}" if own_torch else ""))
        venv.EnvBuilder(with_pip=True, system_site_packages=bool(own_torch)).create(target)
    pip = [str(python), "-m", "pip"]
    found = has_torch(str(python))
    if found:
        how = f"the torch already here ({found})"
    else:
        how = install_torch(pip, runner, planner)
    say(f"installing the course, its test tools and Helion ({EXTRAS}, constraints.txt)")
    pins = [] if own_torch else PINS  # a GPU machine's torch chooses its own triton
    if not runner([*pip, "install", "--quiet", "-e", EXTRAS, *pins]):
        raise SetupError("installing the course failed (pip's message is above)")
    ready.write_text(how + "\n")
    return f"{target} is ready: {how}"


def sees_system_packages(target: Path) -> bool:
    """Whether ``target`` was made beside a system torch (step 1): then nothing is pinned."""
    try:
        config = (target / "pyvenv.cfg").read_text()
    except OSError:
        return False
    return any(line.replace(" ", "").lower() == "include-system-site-packages=true" for line in config.splitlines())


def add_notebooks(target: Path, runner=run) -> str:
    """Install the [notebooks] extra into the filled ``target``; returns the summary line."""
    python = target / "bin" / "python"
    if not (target / ".ready").is_file() or not python.exists():
        raise SetupError(f"{target} is not set up yet: run `make check` first")
    say(f"installing JupyterLab and Notebook 7 ({NOTEBOOKS})")
    pins = [] if sees_system_packages(target) else PINS
    if not runner([str(python), "-m", "pip", "install", "--quiet", "-e", NOTEBOOKS, *pins]):
        raise SetupError("installing JupyterLab failed (pip's message is above)")
    (target / ".notebooks").write_text("jupyterlab\n")
    return f"{target} has JupyterLab"


def main(argv: list[str]) -> int:
    notebooks = "--notebooks" in argv
    argv = [a for a in argv if a != "--notebooks"]
    target = ROOT / (argv[0] if argv else ".venv")
    try:
        say(add_notebooks(target) if notebooks else setup(target))
    except SetupError as error:
        print(f"setup: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
