# The two commands a user needs: `make demo` (a real local tune) and `make test`.
# Both install what is missing first (scripts/setup.sh is idempotent and fast when done).
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint bench clean

setup:
	@bash scripts/setup.sh

demo: setup
	@bash scripts/demo.sh

test: setup
	@bash scripts/test.sh

lint: setup
	$(PY) -m ruff check .
	$(PY) -m mypy

bench: setup
	$(PY) benchmarks/fit_speed.py
	$(PY) benchmarks/kernel_overhead.py

clean:
	rm -rf scratch .pytest_cache .mypy_cache .ruff_cache
