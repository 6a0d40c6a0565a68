# autograd-lab tasks. `make help` lists them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two installs: what the training job needs, and everything the tests need (a superset).
STAMP_TRAIN := $(VENV)/.installed-train
STAMP  := $(VENV)/.installed-dev
EXTRAS ?= dev,torch
# One BLAS thread: faster and steadier for the small matrices of this course (see benchmarks/).
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: help setup setup-system setup-python train test test-fast lint bench release check-notebooks nbval-twice clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

setup: setup-system setup-python  ## install everything the tests need (Debian packages + Python venv)

setup-system:  ## Debian packages: graphviz, arm-none-eabi gcc, QEMU, Fashion-MNIST, Chromium
	bash scripts/install_system_packages.sh

setup-python: $(STAMP)  ## Python venv in .venv with everything the tests need (EXTRAS=dev skips PyTorch)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(BIN)/pip install -q -c constraints.txt -e '.[$(EXTRAS)]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (autograd-lab)" >/dev/null
	touch $@ $(STAMP_TRAIN)

$(STAMP_TRAIN): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(BIN)/pip install -q -c constraints.txt -e '.[train]'
	touch $@

train: $(STAMP_TRAIN)  ## the main job: set up, then train the MLP on MNIST (offline: bundled subset) into runs/latest
	$(BIN)/autograd-lab train --output-dir runs/latest

test: setup  ## set up and run the whole test suite
	$(BIN)/python -m pytest -n 2 --dist loadgroup --durations=15

test-fast: setup-python  ## the fast tests only (about 2 min of CPU, 1.5-3 min of wall time on 2 cores)
	$(BIN)/python -m pytest -m "not slow" -q -n 2

lint:  ## ruff and mypy
	$(BIN)/ruff check autograd_lab tests benchmarks scripts
	$(BIN)/mypy autograd_lab

bench: setup-python  ## speed and memory benchmarks (ratios measured side by side)
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_training.py
	$(BIN)/python benchmarks/bench_export.py
	$(BIN)/python benchmarks/bench_rnn.py
	$(BIN)/python benchmarks/bench_cnn.py
	$(BIN)/python benchmarks/bench_transformer.py
	$(BIN)/python benchmarks/bench_grading.py

release: setup-python  ## regenerate the student notebooks (notebooks/) from assignments/source
	$(BIN)/autograd-lab course release

check-notebooks: setup-python  ## fail if notebooks/ drifted from assignments/source
	$(BIN)/python scripts/check_notebooks_in_sync.py

nbval-twice: setup-python  ## every source notebook under nbval, twice, fresh kernels
	for i in 1 2; do $(BIN)/python -m pytest -p no:cacheprovider -o addopts= --nbval-lax --nbval-current-env \
	  --nbval-cell-timeout=120 --nbval-sanitize-with assignments/nbval_sanitize.cfg -n 2 --dist loadfile \
	  assignments/source || exit 1; done

clean:  ## remove build products (keeps .venv and workspace/)
	rm -rf build runs .pytest_cache .ruff_cache .hypothesis
