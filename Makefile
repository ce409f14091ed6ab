# Common commands. `make run` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
SEED_OVERLAP ?= ../shared/tools/seed_overlap.py
export DJANGO_SETTINGS_MODULE ?= ecplatform.settings.dev

.PHONY: run test test-fast setup prereqs lint typecheck content fmt migrate demo image clean

# The system packages come first (scripts/prereqs.sh installs what is missing, or says how, and
# stops): every other target depends on them. `make test` also wants what the tests use; a
# target-specific value reaches every prerequisite built for that target.
PREREQS := run
test: PREREQS := test

setup: $(VENV)/.installed frontend/static/dist/learn.js

prereqs:
	@PYTHON=$(PYTHON) bash scripts/prereqs.sh $(PREREQS)

# PyPI's torch for Linux is the CUDA build (5 GB with its NVIDIA libraries), which the local sandbox
# cannot even load under its 2 GiB address-space limit. The CPU build goes in first, from PyTorch's
# CPU index or a wheel pip finds locally; requirements.txt's torch==X then finds it installed.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_VERSION := $(shell sed -n 's/^torch==//p' requirements.txt)

$(VENV)/.installed: requirements.txt requirements-dev.txt | prereqs
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --retries 1 --timeout 15 --extra-index-url $(TORCH_INDEX) "torch==$(TORCH_VERSION)+cpu"
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@# The local sandbox mounts this environment read-only: compile the bytecode now, or every
	@# run would recompile torch from source.
	$(PY) -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	touch $@

# The browser bundle is built from the committed lock file, never committed itself.
frontend/static/dist/learn.js: frontend/package-lock.json frontend/build.mjs $(wildcard frontend/src/*.js) | prereqs
	cd frontend && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build

migrate: setup
	$(PY) manage.py migrate --noinput

# The import validates each exercise it publishes in the local sandbox, here (a stored verdict of
# unchanged code is reused, so only the first `make run` pays for it).
demo: migrate
	$(PY) manage.py import_course courses/content/transformers --backend local
	$(PY) manage.py demo_accounts

# Serves the platform on http://$(HOST):$(PORT) with a worker in its own process, an embedded Redis
# and the local sandbox (unless DATABASE_URL, REDIS_URL or a Docker engine say otherwise).
run: demo
	$(PY) manage.py collectstatic --noinput --verbosity 0
	bash scripts/serve.sh $(HOST) $(PORT)

# The tests' own settings (pyproject's), not the development settings exported above. Most tests
# wait (on a worker, a sandbox, a browser), so they run in TEST_WORKERS processes (pytest-xdist),
# more than the cores; each has its own PostgreSQL and Redis database and sandbox scope
# (ecplatform/settings/test.py), and a module's tests stay in one process (its fixtures start once).
TEST_WORKERS ?= 3
TEST_XDIST = -n $(TEST_WORKERS) --dist loadscope
test: setup
	DJANGO_SETTINGS_MODULE=ecplatform.settings.test $(PY) -m pytest $(TEST_XDIST) $(PYTEST_ARGS)

# The inner loop: everything but the sandbox batteries, the worker and web processes and the
# browsers (the `services` and `browser` markers, which tests/conftest.py also sets from the
# fixtures a test takes). `make test` runs everything, as CI does.
test-fast: setup
	DJANGO_SETTINGS_MODULE=ecplatform.settings.test $(PY) -m pytest $(TEST_XDIST) -m "not services and not browser" $(PYTEST_ARGS)

lint: setup typecheck
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run

# Static types: mypy on the packages pyproject's [tool.mypy] names (sandbox/ and runner/), with the
# Django plugin, which loads the test settings it names there. A cold run takes under a minute; the
# cache (.mypy_cache) makes the next a few seconds.
typecheck: setup
	$(VENV)/bin/mypy

# The demo course: every exercise run in the sandbox (starter fails, solution passes, no hint gives
# the solution away), maths, glossary links; and its text in our own words beside the reference
# pages (../shared/tools/seed_overlap.py, where that folder is beside the checkout).
content: setup
	$(PY) manage.py validate_course courses/content/transformers --warm
	@if [ -f $(SEED_OVERLAP) ]; then $(PY) $(SEED_OVERLAP) courses/content/transformers; \
	else echo "$(SEED_OVERLAP) not found: text overlap not measured"; fi

fmt: setup
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The Docker sandbox image, built here without pulling anything (see runner/image/build.sh).
image:
	bash runner/image/build.sh

clean:
	rm -rf var .pytest_cache
