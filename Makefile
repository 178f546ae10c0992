# Two commands do everything on a fresh machine:
#   make demo   run the product on its embedded default (SQLite, local files, in-process tasks)
#   make test   lint, type checks and the whole test suite on PostgreSQL and Redis
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench bench-full serve clean

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup
	$(PY) manage.py runserver 127.0.0.1:8000

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/djlint frontend/templates --lint

typecheck: $(STAMP)
	$(VENV)/bin/mypy annotation pipeline devtools

pytest: $(STAMP)
	$(PY) .ci/services.py -- $(PY) -m pytest $(PYTEST_ARGS)

test: lint typecheck pytest

bench: $(STAMP)
	$(PY) .ci/services.py -- $(PY) -m devtools.bench $(BENCH_ARGS)

bench-full: $(STAMP)
	$(PY) .ci/services.py -- $(PY) -m devtools.bench --full $(BENCH_ARGS)

clean:
	rm -rf $(VENV) data/test-media .pytest_cache .mypy_cache .ruff_cache
