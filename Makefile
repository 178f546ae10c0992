# Two commands do everything on a fresh machine:
#   make demo   run the product on its embedded default (SQLite, local files, in-process tasks),
#               served as production serves it: gunicorn, DEBUG off, collected static files
#   make test   lint, type checks and the whole test suite on PostgreSQL and Redis
# and one for development:
#   make dev    the same data with Django's development server (DEBUG on, reloads on edits)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Two stamps: the runtime requirements (make demo, make dev) and the test tools on top (make test).
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
DEMO_WORKERS ?= $(shell echo $$((2 * $$(nproc) + 1)))
DEMO_BIND ?= 127.0.0.1:8000

.PHONY: demo dev demo-data test lint typecheck pytest bench bench-full mutation venv clean

$(RUNTIME): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(RUNTIME)

$(DEV): $(RUNTIME) requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(DEV)

venv: $(DEV)

demo-data: $(RUNTIME)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup

# gunicorn as the production web role runs it (docker/entrypoint.sh): 2 x CPUs + 1 processes,
# DEBUG off (DJANGO_DEBUG=true to ask for it), static files hashed and compressed by collectstatic.
demo: demo-data
	DJANGO_STATIC_MANIFEST=true $(PY) manage.py collectstatic --noinput -v 0
	$(PY) -m gunicorn annotation.wsgi:application --bind $(DEMO_BIND) --workers $(DEMO_WORKERS) \
	  --threads 1 --worker-class gthread --timeout 120 --access-logfile -

dev: demo-data
	DJANGO_DEBUG=true $(PY) manage.py runserver $(DEMO_BIND)

lint: $(DEV)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/djlint frontend/templates --lint

typecheck: $(DEV)
	$(VENV)/bin/mypy annotation pipeline devtools

pytest: $(DEV)
	$(PY) .ci/services.py -- $(PY) -m pytest $(PYTEST_ARGS)

test: lint typecheck pytest

# Every benchmark (devtools/bench/bench_*.py) at its CI size (bench) or full size (bench-full), as JSON;
# BENCH_ARGS="--only adversarial" for one of them (the adversarial crowd of docs/quality.md: gunicorn,
# PostgreSQL and SQLite, with issue 20's targets).
bench: $(DEV)
	$(PY) .ci/services.py -- $(PY) -m devtools.bench $(BENCH_ARGS)

bench-full: $(DEV)
	$(PY) .ci/services.py -- $(PY) -m devtools.bench --full $(BENCH_ARGS)

# Mutation testing (docs/mutation.md): mutmut plants small bugs in one module at a time and runs only
# its mirrored tests, on PostgreSQL. MUTATION_ARGS: target names (default: the modules measured in the
# docs; "all" for every target), --list, --jobs N, --survivors, --fail-under PERCENT.
mutation: $(DEV)
	$(PY) .ci/services.py -- $(PY) -m devtools.mutation $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) data/test-media .pytest_cache .mypy_cache .ruff_cache .mutation
