# shopgen — `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
SHOPGEN := $(BIN)/shopgen

size ?= 10k
seed ?= 0
out ?= data/catalog
workers ?= 2

.DEFAULT_GOAL := help
.PHONY: help install demo test test-all lint format catalog bench schemas browser clean

help: ## Show this help.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The CPU build of torch, before sentence-transformers: a bare `torch` pulls a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[search,server,trl,hf,ray,vf,dev]"
	touch $(STAMP)

install: $(STAMP) ## Create .venv and install shopgen with its dev tools.

demo: install ## The whole pipeline on a small default: catalog, index, tasks, oracle vs cheats.
	$(SHOPGEN) catalog --size 5k --seed 0 --out data/demo/catalog --force
	$(SHOPGEN) index --catalog data/demo/catalog
	$(SHOPGEN) validate data/demo/catalog
	$(SHOPGEN) search --catalog data/demo/catalog "usb-c cable braided" --top-k 50
	$(SHOPGEN) tasks --env all --d 0-6 --n 2 --catalog data/demo/catalog --out data/demo/tasks --force
	$(SHOPGEN) validate data/demo/tasks
	$(SHOPGEN) eval --tasks data/demo/tasks --catalog data/demo/catalog --summary $(foreach p,oracle heuristic random do_nothing one_turn_answer made_up_ids recommend_every_hit recommend_top_hits add_everything_seen answer_every_status ask_forever repeat_one_id pad_one_id hedge_everything refuse_every_reason,--policy $(p))

# `pytest`, not `python -m pytest`: the latter puts the working directory on sys.path, where the
# verifiers/ folder would shadow the PyPI package of that name.
# Tests run in up to four pytest-xdist workers (one per core): on two cores the fast suite takes
# 3 minutes instead of 5. Each worker builds the session fixtures once.
PYTEST := $(BIN)/pytest -q -p no:cacheprovider -n auto --maxprocesses 4

test: install ## Run the test suite (fast tests; what CI runs).
	$(PYTEST) -m "not slow"

test-all: install ## Run every test, slow ones included.
	$(PYTEST)

lint: install ## ruff check and format check.
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install ## Apply ruff's fixes and formatting.
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

catalog: install ## Generate a catalog: make catalog size=1M [seed=0] [out=data/catalog] [workers=2]
	$(SHOPGEN) catalog --size $(size) --seed $(seed) --out $(out) --workers $(workers) --force
	$(SHOPGEN) index --catalog $(out)

bench: install ## Benchmarks (ratios against same-run baselines); writes bench/results.json.
	$(BIN)/python -m bench

schemas: install ## Export the tools' and records' JSON Schemas to schemas/json (commit the result).
	$(BIN)/python -m shopgen.env.tools.export
	$(BIN)/python -m shopgen.schemas.record_schemas

browser: ## Install headless Chromium (Debian package) for the report rendering test.
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

clean: ## Remove generated data (keeps .venv).
	rm -rf data/demo
