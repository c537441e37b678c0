# Proofmark: `make run` serves the app with demo data; `make test` runs the whole suite.
# Both set up from nothing: a .venv with the Python packages, node_modules with htmx and KaTeX.

PYTHON ?= python3
# Python writes its bytecode (.pyc) and reuses it, even where the environment asks it not to
# (PYTHONDONTWRITEBYTECODE=1 on some machines): without it every process compiles each module it
# imports from source, every time (`export_dataset` of 1,906 rows: 2.9 s, 0.9 s with bytecode).
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
DEPS_STAMP := $(VENV)/.deps-installed
RUN_STAMP := $(VENV)/.run-deps-installed
# requirements.lock: runtime and dev (make test); requirements-run.lock: the runtime part of it,
# the same pins (make run, a deployment), so a newcomer's first `make run` installs half as much.
LOCK := requirements.lock
RUN_LOCK := requirements-run.lock
NPM_STAMP := node_modules/.installed
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/proofmark
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15
# pytest-xdist workers, each with its own test database, Redis database (15, 14, ...), queue and
# run folder (tests/suite.py); the tests that need the real Celery worker share one xdist worker.
# Three on two cores: a browser test spends most of its time waiting on Chromium and the live
# server, which a third worker fills (2026-12-06, the whole suite on a 2-core machine, nothing
# else running: pytest 532-627 s with three, 645 s with two; the machine's own speed swung as
# much between runs).
TEST_WORKERS ?= 3
XDIST := -n $(TEST_WORKERS) --dist loadgroup

.PHONY: run test docs drills nightly lint format bench deps run-deps lock services chromium clean

# The venv has no pip of its own: uv installs into it (below), from the lock files only, each
# package checked against its hashes (as pip's --require-hashes), in seconds where pip takes a
# minute, and without compiling every module ahead (Python compiles what it imports).
$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (found " + sys.version.split()[0] + ")")'
	$(PYTHON) -m venv --without-pip $(VENV)

# uv itself comes from the lock (its pin and hashes in requirements.lock), put into the venv by
# the system Python's pip, or by the venv's own pip where the system Python has none.
$(UV): | $(PY)
	@awk '/^uv==/ { p = 1 } p { print } p && !/\\$$/ { exit }' $(LOCK) > $(VENV)/uv-requirement.txt
	@if $(PYTHON) -m pip --version >/dev/null 2>&1; then \
		$(PYTHON) -m pip --python $(PY) install --quiet --require-hashes --no-deps -r $(VENV)/uv-requirement.txt; \
	else \
		$(PY) -m ensurepip --default-pip >/dev/null && \
		$(PY) -m pip install --quiet --require-hashes --no-deps -r $(VENV)/uv-requirement.txt; \
	fi

$(DEPS_STAMP): $(LOCK) | $(UV)
	$(UV) pip install --python $(PY) --quiet --require-hashes --no-deps -r $(LOCK)
	@touch $@ $(RUN_STAMP)

$(RUN_STAMP): $(RUN_LOCK) | $(UV)
	$(UV) pip install --python $(PY) --quiet --require-hashes --no-deps -r $(RUN_LOCK)
	@touch $@

# Re-resolves pyproject.toml's requirements (runtime and dev) into the lock file, with hashes,
# then the runtime part alone, held to the same pins.
lock: | $(UV)
	$(UV) pip compile pyproject.toml --extra dev --universal --python-version 3.11 \
		--generate-hashes --quiet --output-file $(LOCK)
	$(UV) pip compile pyproject.toml --universal --python-version 3.11 \
		--generate-hashes --quiet -c $(LOCK) --output-file $(RUN_LOCK)

$(NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed for htmx and KaTeX: apt-get install -y nodejs npm"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

deps: $(DEPS_STAMP) $(NPM_STAMP)

run-deps: $(RUN_STAMP) $(NPM_STAMP)
	@:

# PROOFMARK_T0: when `make run` started, for serve.sh's stage times ("first page answered after").
# The Python packages and npm's install side by side.
run:
	@T0=$$(date +%s%N) && $(MAKE) --no-print-directory -j2 run-deps && PROOFMARK_T0=$$T0 bash scripts/serve.sh

services:
	@bash scripts/services.sh

chromium:
	@bash scripts/chromium.sh

test: deps services chromium
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) DEBUG=true \
		$(PY) -m pytest $(XDIST) -m "not nightly" $(PYTEST_ARGS)

# The fault drills (benchmarks/fault_drills.py): abuse and failures against the Procfile's web
# process, printing what users saw.
drills: deps services
	DATABASE_URL=$(TEST_DATABASE_URL)_drills CELERY_BROKER_URL=$(TEST_BROKER_URL) \
		$(PY) benchmarks/fault_drills.py

# The manual (docs/, mkdocs.yml) as a site in .run/site; make test builds it too, strict.
docs: deps
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The long runs (marker `nightly`): schemathesis (tests/contract), 50 examples per operation, each
# role; a campaign of 70,000 proofs doubled adaptively and ranked (tests/annotation).
nightly: deps services
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) DEBUG=true \
		$(PY) -m pytest -m nightly tests/contract tests/annotation/test_large_selection.py $(PYTEST_ARGS)

lint: deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: deps
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Every benchmark, against the Procfile's processes; QUICK=1 for the short sizes (development).
# BASE=<revision>: the HTTP, import and export benchmarks against that revision (a worktree in
# .run/bench-base with its own .venv and database) and this tree in alternating rounds, side by
# side (benchmarks/compare.py); ROUNDS=n rounds (default 2, QUICK=1 one); WRITE=1 adds the section
# to benchmarks/RESULTS.md. COMPARE=label-studio: only the side by side with Label Studio
# (benchmarks/bench_versus_label_studio.py, the headline every `make bench` starts with).
bench: deps services
	$(if $(COMPARE),DATABASE_URL=$(TEST_DATABASE_URL)_bench $(PY) benchmarks/bench_versus_label_studio.py $(if $(QUICK),--quick) $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(WRITE),--write),$(if $(BASE),DATABASE_URL=$(TEST_DATABASE_URL)_bench $(PY) benchmarks/compare.py --base $(BASE) $(if $(QUICK),--quick) $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(WRITE),--write),DATABASE_URL=$(TEST_DATABASE_URL)_bench $(PY) benchmarks/run_all.py $(if $(QUICK),--quick)))

clean:
	rm -rf $(VENV) node_modules .run
