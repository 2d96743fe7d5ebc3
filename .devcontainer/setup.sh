#!/bin/sh
# The container's set-up, run in the image (Dockerfile) and in a dev container's mounted clone
# (devcontainer.json's postCreateCommand): the README's first step, `make`'s .venv (through
# scripts/setup_env.py, the CPU build of torch and constraints.txt's pins), then the notebooks' extra.
set -eu
cd "$(dirname "$0")/.."
# A clone set up on the host first holds a .venv for macOS or Windows, which Linux cannot run.
if [ -e .venv ] && ! .venv/bin/python -c "" 2>/dev/null; then
    echo "setup: .venv was made for another system (the host?); move it away (mv .venv .venv-host) and rebuild" >&2
    exit 1
fi
make .venv/.ready
.venv/bin/pip install --quiet -e ".[notebooks]" -c constraints.txt
echo "setup: ready; grade a puzzle with: python -m grader puzzle01 (notebooks: jupyter lab notebooks/)"
