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

# Every agent CLI, pinned (docs/agents.md). Bumping a version reinstalls that agent alone:
# each has its own stamp, named by its version.
PI_VERSION       := 0.73.1
CLAUDE_VERSION   := 2.1.332
CODEX_VERSION    := 0.171.0
GEMINI_VERSION   := 0.61.0
OPENCODE_VERSION := 1.18.33
QWEN_VERSION     := 0.24.4
AIDER_VERSION    := 0.86.2
MINISWE_VERSION  := 2.4.6
AGENTS_STAMP     := .agents/.stamp-pi-$(PI_VERSION)

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

.PHONY: install dev agents agents-all sandbox-tools browser run test test-fast lint bench bench-load-peers clean

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

# The agent CLIs, pinned, into the git-ignored .agents/ (docs/agents.md has the table):
#   make agents      pi only: what `make run` needs (the offline default,
#                    scripts/run.sh <task> smollm2, runs pi); quick and small
#   make agents-all  all eight: pi, Claude Code, Codex, Gemini CLI, opencode and Qwen Code
#                    from npm into .agents/node_modules/.bin/, aider and mini-swe-agent from
#                    PyPI each into a venv of its own (.agents/<name>/bin/); about 1.5 GB.
#                    `make test` runs it: every agent's end-to-end test needs its real CLI
#                    (tests/drivers/test_agent_clis*.py; skipped only without node or python3).
# npm and pip keep their own download caches, so a reinstall after `make clean` is offline
# where the cache holds the version. --save-exact records each agent in .agents/package.json:
# npm prunes from a prefix whatever its package.json does not list.
NPM_INSTALL := npm install --prefix .agents --save-exact --no-audit --no-fund --loglevel=error

define npm_agent
.agents/.stamp-$(1)-$(3):
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  echo "installing $(2)@$(3) into .agents/" >&2; \
	  $(NPM_INSTALL) $(2)@$(3) && rm -f .agents/.stamp-$(1)-* && touch $$@; \
	else echo "node/npm not found: the $(1) tests will be skipped" >&2; fi
endef

define pypi_agent
.agents/.stamp-$(1)-$(3):
	@echo "installing $(2)==$(3) into .agents/$(1)/ (a venv of its own)" >&2
	rm -rf .agents/$(1) && $(PYTHON) -m venv .agents/$(1)
	.agents/$(1)/bin/pip install --quiet --disable-pip-version-check '$(2)==$(3)'
	rm -f .agents/.stamp-$(1)-* && touch $$@
endef

$(eval $(call npm_agent,pi,@mariozechner/pi-coding-agent,$(PI_VERSION)))
$(eval $(call npm_agent,claude,@anthropic-ai/claude-code,$(CLAUDE_VERSION)))
$(eval $(call npm_agent,codex,@openai/codex,$(CODEX_VERSION)))
$(eval $(call npm_agent,gemini,@google/gemini-cli,$(GEMINI_VERSION)))
$(eval $(call npm_agent,opencode,opencode-ai,$(OPENCODE_VERSION)))
$(eval $(call npm_agent,qwen,@qwen-code/qwen-code,$(QWEN_VERSION)))
$(eval $(call pypi_agent,aider,aider-chat,$(AIDER_VERSION)))
$(eval $(call pypi_agent,miniswe,mini-swe-agent,$(MINISWE_VERSION)))

ALL_AGENT_STAMPS := $(AGENTS_STAMP) .agents/.stamp-claude-$(CLAUDE_VERSION) \
  .agents/.stamp-codex-$(CODEX_VERSION) .agents/.stamp-gemini-$(GEMINI_VERSION) \
  .agents/.stamp-opencode-$(OPENCODE_VERSION) .agents/.stamp-qwen-$(QWEN_VERSION) \
  .agents/.stamp-aider-$(AIDER_VERSION) .agents/.stamp-miniswe-$(MINISWE_VERSION)

# What is installed, and how big (every agent's stamp names its version).
define agents_report
	@echo "agents in .agents/:" >&2; \
	for s in .agents/.stamp-*; do [ -e "$$s" ] && echo "  $${s#.agents/.stamp-}" >&2; done; \
	du -sh .agents 2>/dev/null | sed 's/^/  total /' >&2 || true
endef

agents: $(AGENTS_STAMP)
	$(agents_report)

agents-all: $(ALL_AGENT_STAMPS)
	$(agents_report)

# Full sandbox isolation needs bubblewrap (docs/security.md): installed where we can (root
# with apt); elsewhere the sandbox runs degraded and every result says so.
sandbox-tools:
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && { apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
	       || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; }; }; } \
	  || echo "note: bubblewrap is not installed; the sandbox runs degraded (docs/security.md)" >&2

# The HTML report's and the viewer's tests drive a real headless browser: Debian's chromium
# and chromium-driver, installed where we can (root with apt), and Selenium in the venv;
# elsewhere those tests are skipped and say so.
browser:
	@{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } \
	  || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && { apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 \
	       || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1; }; }; } \
	  || echo "note: chromium/chromium-driver not installed; the browser tests are skipped" >&2
	@$(BIN)/python -c "import selenium" 2>/dev/null || $(BIN)/pip install --quiet 'selenium>=4.20' \
	  || echo "note: selenium not installed; the viewer's browser tests are skipped" >&2

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

# Two passes: every test but Ray's on two pytest-xdist workers, a test file on one worker (its
# tests share one real run: a module-scoped fixture), then the Ray cluster's tests alone: a
# Ray node on the host stops every agent attempt from starting (docs/scale-out.md).
test: install sandbox-tools browser lint agents-all
	$(BIN)/pytest -n 2 --dist loadfile -m "not ray"
	$(BIN)/pytest -m ray

# Under a minute on 2 cores when the machine is quiet: 55 s with four workers, 64 s with two,
# 89 s before issue 23's test step (load 1-2; tests/README.md has the figures). Still every
# package (tests/README.md says what is left out). Four xdist workers (pytest-xdist, in the
# dev extra) on two cores: much of the lane is still waits (a subprocess, a sandbox, a
# timeout under test), which the extra workers overlap, for ~3 s of CPU each to collect.
test-fast: dev
	$(BIN)/pytest -q -n 4 -m "not model and not agent and not slow"

bench: dev sandbox-tools
	$(BIN)/python bench/spine.py
	$(BIN)/python bench/load_fidelity.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/agents.py
	$(BIN)/python bench/http_drivers.py
	$(BIN)/python bench/summary.py
	$(BIN)/python bench/report.py
	$(BIN)/python bench/executors.py

# GuideLLM and AIPerf for the load suite's side-by-side (docs/benchmarks.md), each in a venv
# of its own: never in $(VENV), never by `make run`.
PEERS := .bench-venvs
# guidellm 0.8.1 requires `torch` (its one data loader is torch's DataLoader); PyPI's Linux
# torch pulls the CUDA wheels (cuda-toolkit, nvidia-*, triton), its CPU build none: first.
TORCH_CPU := torch==2.13.0+cpu
bench-load-peers:
	$(PYTHON) -m venv $(PEERS)/guidellm
	$(PEERS)/guidellm/bin/pip install --quiet --extra-index-url https://download.pytorch.org/whl/cpu '$(TORCH_CPU)'
	$(PEERS)/guidellm/bin/pip install --quiet 'guidellm==0.8.1' '$(TORCH_CPU)'
	$(PYTHON) -m venv $(PEERS)/aiperf && $(PEERS)/aiperf/bin/pip install --quiet 'aiperf==0.13.0' gguf
	$(PEERS)/aiperf/bin/python bench/gguf_tokenizer.py \
	  "$$($(BIN)/python -c 'from benchrig.local.model import resolve_model; print(resolve_model("smollm2"))')" \
	  $(PEERS)/smollm2-tokenizer

clean:
	rm -rf $(VENV) .agents .mypy_cache .ruff_cache .pytest_cache
