# Every target builds .venv itself, so each one works on a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.kairox-installed
# llama.cpp's native build faults on some virtual CPUs.
export CMAKE_ARGS := -DGGML_NATIVE=OFF
export PIP_DISABLE_PIP_VERSION_CHECK := 1

SYSDEPS := $(VENV)/.system-deps

.PHONY: run test test-fast lint check bench format clean screenshots

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The CPU build of torch; an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[all,dev]"
	touch $@

# Debian packages the tests drive for real: Chromium (web UI tests), tmux (terminal test) and
# util-linux's unshare (the read-only home test mounts the home read-only in its own namespace).
$(SYSDEPS): | $(STAMP)
	@if ! command -v chromium >/dev/null || ! command -v tmux >/dev/null \
		|| ! command -v unshare >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium tmux util-linux; \
	fi
	touch $@

run: $(STAMP)
	$(VENV)/bin/kairox chat

test: $(STAMP) $(SYSDEPS)
	$(PY) -m pytest -q -p no:cacheprovider

# The inner loop: no browsers or terminals, no real models, no Postgres (markers set in
# tests/conftest.py).
test-fast: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m "not slow and not postgres"

# Static checks: format, lint, types and the import layers.
lint: $(STAMP)
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy src
	$(VENV)/bin/lint-imports

check: lint test

bench: $(STAMP)
	$(PY) bench/markers.py
	$(PY) bench/assembly.py
	$(PY) bench/compaction.py
	$(PY) bench/retrieval_speed.py
	$(PY) bench/retrieval_quality.py
	$(PY) bench/retrieval_quality.py --data ../shared/data/cmrc2018-dev --no-semantic
	$(PY) bench/cli_startup.py
	$(PY) bench/store_concurrency.py
	$(PY) bench/recall_locomo.py
	$(PY) bench/first_token.py
	$(PY) bench/lean_log.py
	$(PY) bench/memory_search.py
	$(PY) bench/memory_scale.py
	$(PY) bench/fresh_search.py
	$(PY) bench/embedder_speed.py
	# The 1M rows take many minutes to build: KAIROX_BENCH_1M=1 adds them.
	$(PY) bench/ann_speed.py $${KAIROX_BENCH_1M:+--sizes 10000,100000,300000,1000000}
	$(PY) bench/hybrid_scale.py --postgres $${KAIROX_BENCH_1M:+--sizes 100000,1000000}
	$(PY) bench/ann_saved.py --cache /tmp/kairox-bench-scale --ef 128,256,512
	$${KAIROX_BENCH_1M:+$(PY) bench/ann_saved.py --cache /tmp/kairox-bench-scale --sizes 1000000 --ef 512,1024,2048 --no-build}
	$(PY) bench/real_repo_index.py

# The web UI screenshots in docs/screenshots/ (tests never write them).
screenshots: $(STAMP) $(SYSDEPS)
	$(PY) tests/integration/web/screenshots.py

format: $(STAMP)
	$(VENV)/bin/ruff format src tests bench
	$(VENV)/bin/ruff check --fix src tests bench

clean:
	rm -rf $(VENV)
