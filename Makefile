# Two commands from a fresh clone: `make check` grades a puzzle, `make test` runs the tests.
# Each creates and fills .venv the first time (scripts/setup_env.py says what it does).
PYTHON ?= python3
VENV := .venv
PUZZLE ?= puzzle01
ARGS ?=

.PHONY: check test

$(VENV)/.ready: pyproject.toml constraints.txt scripts/setup_env.py
	@$(PYTHON) scripts/setup_env.py $(VENV)

check: $(VENV)/.ready
	$(VENV)/bin/python -m grader $(PUZZLE) $(ARGS)

test: $(VENV)/.ready
	$(VENV)/bin/python -m pytest -q -rs $(ARGS)
