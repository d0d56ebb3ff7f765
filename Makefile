# BenchRig — the two front-door commands:
#   make run    set up .venv and run the coding suite on the embedded model (offline)
#   make test   set up .venv with the dev tools and run lint, types and the test suite

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@echo "installing BenchRig with llama-cpp-python (the first build of llama.cpp takes ~5 min)" >&2
	$(BIN)/pip install --quiet -e '.[local,dev]'
	touch $(STAMP)

install: $(STAMP)

# Exit status 1 only means the model failed some tasks: that is a result, not a broken run.
run: install
	$(BIN)/benchrig run --suite coding --model smollm2 --driver llamacpp || [ $$? -eq 1 ]

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

test: install lint
	$(BIN)/pytest

bench: install
	$(BIN)/python bench/spine.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
