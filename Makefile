# Each target builds .venv on first use and reinstalls only when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: demo test test-slow bench bench-quick install clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "==> installing tetrarch and its test/bench extras into $(VENV)"
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install --quiet --disable-pip-version-check -e ".[test,bench]"
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@$(PY) -m agents.demo

test: $(STAMP)
	@$(PY) -m pytest

test-slow: $(STAMP)
	@$(PY) -m pytest -m slow

bench: $(STAMP)
	@$(PY) -m agents.cli bench --all

bench-quick: $(STAMP)
	@$(PY) -m agents.cli bench --all --quick

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
