# The usual targets. Each creates the virtual environment it needs (.venv, pinned by
# requirements.lock) the first time.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export RAY_AUTH_MODE ?= disabled
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1

.PHONY: setup run price eval eval-corpus eval-heldout test lint format bench clean

$(STAMP): pyproject.toml requirements.lock
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first and pinned: 2.13.0 is the CPU wheel here; an unpinned torch pulls a CUDA build.
	$(PY) -m pip install -q -c requirements.lock "torch==2.13.0"
	$(PY) -m pip install -q -c requirements.lock -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/raychunk run --input samples --output out/run --overwrite

price: $(STAMP)
	$(VENV)/bin/raychunk price --input samples --output out/price

eval: $(STAMP)
	$(VENV)/bin/raychunk eval --input samples --queries evals/samples.jsonl --output out/eval

# The labelled corpus set (evals/README.md) over the documents it names in CORPUS, and nothing else
# of it: structure (tables capped at EVAL_TABLE_CAP) against fixed at EVAL_SIZES, with the per-type
# profile, paired intervals (at the same size, and at an equal vector count) and tags.
CORPUS ?= ../shared/corpus
EVAL_QUERIES ?= evals/corpus.jsonl
EVAL_SIZES ?= 194,250
EVAL_TABLE_CAP ?= 128
EVAL_ARGS ?=
eval-corpus: $(STAMP)
	$(VENV)/bin/raychunk eval --queries $(EVAL_QUERIES) --sizes $(EVAL_SIZES) --overlaps 0 \
		--strategies structure,fixed --table-max-tokens $(EVAL_TABLE_CAP) --output out/eval-corpus $(EVAL_ARGS) \
		--input $$($(PY) scripts/labelled_files.py $(EVAL_QUERIES) $(CORPUS))

# The held-out sets from outside the shared corpus (evals/README.md, "nodejs.jsonl" and "cmake.jsonl"):
# the default against LangChain's and Chonkie's chunkers at 256/200/160 cl100k tokens, through
# `raychunk eval`, vectors kept in out/eval-cache.
eval-heldout: $(STAMP)
	$(PY) scripts/peer_table.py --queries evals/nodejs.jsonl --corpus evals --cache out/eval-cache --output out/eval-heldout/nodejs
	$(PY) scripts/peer_table.py --queries evals/cmake.jsonl --corpus evals --cache out/eval-cache --output out/eval-heldout/cmake

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check raychunk tests jobs benchmarks scripts
	$(VENV)/bin/ruff format --check raychunk tests jobs benchmarks scripts

format: $(STAMP)
	$(VENV)/bin/ruff check --fix raychunk tests jobs benchmarks scripts
	$(VENV)/bin/ruff format raychunk tests jobs benchmarks scripts

# Every benchmark with a target, then one table of its figures; peers come from the bench extra.
bench: $(STAMP)
	$(PY) -m pip install -q -c requirements.lock -e ".[bench]"
	$(PY) benchmarks/bench_all.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
