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

.PHONY: demo dev demo-data test lint typecheck pytest bench bench-full mutation venv clean lock

# Installed from the lock files (exact versions, every file's hash checked), which `make lock` writes from the
# requirements files; tests/ci/test_lock.py fails when a requirement is not in them.
$(RUNTIME): requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock
	touch $(RUNTIME)

$(DEV): $(RUNTIME) requirements-dev.lock
	$(PY) -m pip install --quiet --require-hashes -r requirements-dev.lock
	touch $(DEV)

# The lock files, for Python 3.11 on every platform (the image's and CI's), newest versions the requirements
# allow; the development lock keeps the runtime lock's versions. Needs uv (requirements-dev.txt).
UV ?= $(VENV)/bin/uv
lock:
	$(UV) pip compile requirements.txt --universal --python-version 3.11 --generate-hashes \
	  --custom-compile-command "make lock" -o requirements.lock
	$(UV) pip compile requirements-dev.txt -c requirements.lock --universal --python-version 3.11 \
	  --generate-hashes --custom-compile-command "make lock" -o requirements-dev.lock

venv: $(DEV)

# One process migrates and builds the demo (each manage.py start costs seconds on a busy machine);
# it prints the URL of DEMO_BIND.
demo-data: $(RUNTIME)
	$(PY) manage.py demo_setup --migrate --url http://$(DEMO_BIND)/

# collectstatic only when a static file changed since the last run (STATIC_ROOT keeps a stamp).
STATIC_STAMP := staticfiles/.collected
$(STATIC_STAMP): $(RUNTIME) $(shell find frontend/static -type f 2>/dev/null)
	DJANGO_STATIC_MANIFEST=true $(PY) manage.py collectstatic --noinput -v 0
	touch $(STATIC_STAMP)

# gunicorn as the production web role runs it (docker/entrypoint.sh): 2 x CPUs + 1 processes,
# DEBUG off (DJANGO_DEBUG=true to ask for it), static files hashed and compressed by collectstatic.
# --preload: the application is imported once, before the workers fork (they share it copy-on-write
# instead of each importing Django and every view on a busy machine's two cores). docker/gunicorn.conf.py:
# multiprocess metrics and gunicorn's lines in the app's log format (the app logs each request itself).
demo: demo-data $(STATIC_STAMP)
	$(PY) -m gunicorn annotation.wsgi:application --config docker/gunicorn.conf.py --preload --bind $(DEMO_BIND) \
	  --workers $(DEMO_WORKERS) --threads 1 --worker-class gthread --timeout 120

dev: demo-data
	DJANGO_DEBUG=true $(PY) manage.py runserver $(DEMO_BIND)

lint: $(DEV)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/djlint frontend/templates --lint

typecheck: $(DEV)
	$(VENV)/bin/mypy annotation pipeline devtools

# Two groups (docs/operations.md, "Tests"): the tests that allow it on PYTEST_WORKERS parallel processes
# (pytest-xdist, whole files per process, each process on its own test database), then the serial group
# one at a time (marked by tests/conftest.py: Chromium, Docker, nginx, tests/ci, the Redis broker, live
# servers). PYTEST_WORKERS=0 runs the first group in this process. A group with nothing selected
# (PYTEST_ARGS naming one file, say) is not a failure (pytest's exit code 5).
PYTEST_WORKERS ?= 2
pytest: $(DEV)
	$(PY) .ci/services.py -- sh -c '\
	  $(PY) -m pytest -m "not serial" -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS); rc=$$?; \
	  [ $$rc -eq 0 ] || [ $$rc -eq 5 ] || exit $$rc; \
	  $(PY) -m pytest -m serial $(PYTEST_ARGS); rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 5 ] || exit $$rc'

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
