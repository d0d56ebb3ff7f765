# BenchRig — the two front-door commands:
#   make run    set up .venv and run the coding suite on the embedded model (offline), then
#               replay the reference answers beside it
#   make test   set up .venv with the dev tools (and chromium, for the HTML report test) and
#               run lint, types and the test suite
#   make test-fast  the inner loop: the tests without the model, real agents or slow ones

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

PI_VERSION   := 0.73.1
AGENTS_STAMP := .agents/.pi-$(PI_VERSION)

# llama.cpp is built for a fixed x86-64 baseline (AVX2, FMA, F16C), not for the build
# machine: a native build on a CPU that lists AMX emits tile instructions that a virtual
# machine may refuse (SIGILL, "Illegal instruction"), and pip's own wheel cache would hand
# that build to every later checkout whatever the CPU. The wheel is kept in a cache of our
# own, keyed by version and flags, so it is compiled once per machine.
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE   := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
                 -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
WHEELS        := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/benchrig/wheels/llama-$(LLAMA_VERSION)-avx2
LLAMA_WHEEL   := $(WHEELS)/.built

.PHONY: install dev agents sandbox-tools browser run test test-fast lint bench clean

$(LLAMA_WHEEL):
	@echo "building llama-cpp-python $(LLAMA_VERSION) for x86-64 with AVX2 (once per machine, ~5 min on 2 cores)" >&2
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(PYTHON) -m pip wheel --quiet --no-deps --no-cache-dir \
	  --wheel-dir $(WHEELS) 'llama-cpp-python==$(LLAMA_VERSION)'
	touch $@

$(STAMP): pyproject.toml $(LLAMA_WHEEL)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-deps --force-reinstall --no-index --find-links $(WHEELS) \
	  'llama-cpp-python==$(LLAMA_VERSION)'
	$(BIN)/pip install --quiet -e '.[local,suites]'
	touch $(STAMP)

# What the tests, lint and the benchmarks add: the dev tools and Ray (the Ray executor's
# tests; ~240 MB, so not in `make run`).
$(DEV_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[local,dev,ray,suites]'
	touch $(DEV_STAMP)

install: $(STAMP)
dev: $(DEV_STAMP)

# The real pi, pinned, into the git-ignored .agents/ (its end-to-end test skips without node/npm).
$(AGENTS_STAMP):
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  echo "installing @mariozechner/pi-coding-agent@$(PI_VERSION) into .agents/" >&2; \
	  npm install --prefix .agents --no-save --no-audit --no-fund --loglevel=error \
	    @mariozechner/pi-coding-agent@$(PI_VERSION) && touch $@; \
	else echo "node/npm not found: the real-pi tests will be skipped" >&2; fi

agents: $(AGENTS_STAMP)

# Full sandbox isolation needs bubblewrap (docs/security.md): installed where we can (root
# with apt); elsewhere the sandbox runs degraded and every result says so.
sandbox-tools:
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && { apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
	       || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; }; }; } \
	  || echo "note: bubblewrap is not installed; the sandbox runs degraded (docs/security.md)" >&2

# The HTML report's test opens it in a real headless browser: Debian's chromium, installed
# where we can (root with apt); elsewhere that test is skipped and says so.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && { apt-get install -y -qq chromium >/dev/null 2>&1 \
	       || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; }; }; } \
	  || echo "note: chromium is not installed; the HTML report's browser test is skipped" >&2

# Exit status 1 only means the model failed some tasks: that is a result, not a broken run.
# Then the reference answers (tasks/.references/) are replayed as model `reference`: its
# row at 100 % beside SmolLM2's shows the harness works, whatever the model scored.
run: install sandbox-tools
	$(BIN)/benchrig run --suite coding --model smollm2 --driver llamacpp || [ $$? -eq 1 ]
	$(BIN)/benchrig run --suite coding --model reference --driver replay \
	  --provider tasks/.references > /dev/null
	$(BIN)/benchrig summary --suite coding --model smollm2 --model reference --table-only
	@echo "benchrig is installed in $(VENV): run '. $(VENV)/bin/activate' to put it on PATH" >&2

lint: dev
	$(BIN)/ruff check .
	$(BIN)/mypy

test: install sandbox-tools browser lint agents
	$(BIN)/pytest

# Under a minute on 2 cores; still every package (tests/README.md says what is left out).
test-fast: dev
	$(BIN)/pytest -q -m "not model and not agent and not slow"

bench: dev sandbox-tools
	$(BIN)/python bench/spine.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/agents.py
	$(BIN)/python bench/http_drivers.py
	$(BIN)/python bench/summary.py
	$(BIN)/python bench/report.py
	$(BIN)/python bench/executors.py

clean:
	rm -rf $(VENV) .agents .mypy_cache .ruff_cache .pytest_cache
