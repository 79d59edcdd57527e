# The two commands a user needs: `make demo` (a real local tune) and `make test`.
# Both install what is missing first (scripts/setup.sh is idempotent and fast when done):
# `make demo` only what the demo uses, `make test` also what the tests use.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup setup-test demo test lint bench clean

setup:
	@bash scripts/setup.sh

setup-test:
	@bash scripts/setup.sh --test

demo: setup
	@bash scripts/demo.sh

test: setup-test
	@bash scripts/test.sh

lint: setup-test
	$(PY) -m ruff check .
	$(PY) -m mypy

bench: setup
	$(PY) benchmarks/fit_speed.py
	$(PY) benchmarks/sim_speed.py
	$(PY) benchmarks/kernel_overhead.py --ranks 2 --mib-per-rank 64 --reps 5
	$(PY) benchmarks/state_aware.py
	$(PY) benchmarks/strategies.py
	$(PY) benchmarks/real_landscapes.py

clean:
	rm -rf scratch .pytest_cache .mypy_cache .ruff_cache
