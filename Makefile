# From a fresh clone: `make check` sets up and says what to do next, `make test` runs the tests,
# `make notebooks` opens the course in JupyterLab. Each creates and fills .venv the first time
# (scripts/setup_env.py says what it does).
PYTHON ?= python3
VENV := .venv
# Empty: puzzle 1, and while its kernel is the stub, the steps that come next (scripts/check.py).
PUZZLE ?=
ARGS ?=

.PHONY: check test notebooks

$(VENV)/.ready: pyproject.toml constraints.txt scripts/setup_env.py
	@$(PYTHON) scripts/setup_env.py $(VENV)

$(VENV)/.notebooks: $(VENV)/.ready
	@$(PYTHON) scripts/setup_env.py $(VENV) --notebooks

check: $(VENV)/.ready
	@$(VENV)/bin/python scripts/check.py $(PUZZLE) $(ARGS)

test: $(VENV)/.ready
	$(VENV)/bin/python -m pytest -q -rs $(ARGS)

# ARGS go to JupyterLab: in a container, ARGS="--ip 0.0.0.0 --no-browser".
notebooks: $(VENV)/.notebooks
	$(VENV)/bin/jupyter lab notebooks/00_start_here.ipynb $(ARGS)
