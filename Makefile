# Safeground: `make run` serves the demo, `make test` runs everything CI runs.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DJANGO_SETTINGS_MODULE ?= safeground.settings.dev

.PHONY: run test lint audit print-libs bench bench-live bench-matching bench-entry bench-bundle bench-reports bench-faults bench-surge bench-supporters install browser clean

$(STAMP): pyproject.toml
	@PY=$$(scripts/find-python) || exit 1; \
	  [ -x $(BIN)/python ] || $$PY -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

install: $(STAMP)

# Pango and a font for printed documents (WeasyPrint): on Debian, Chromium brings them, a bare
# machine may not have them.
print-libs:
	@ldconfig -p | grep -q libpangoft2-1.0 && fc-list 2>/dev/null | grep -qi dejavu || { \
	  echo "Installing Debian's Pango and DejaVu fonts for printed documents"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends \
	    libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core fontconfig >/dev/null; }

run: $(STAMP) print-libs
	$(BIN)/safeground migrate --no-input -v 0
	$(BIN)/safeground demo --if-empty
	$(BIN)/safeground serve

# Debian's Chromium for the browser tests; Playwright never downloads a browser of its own.
browser:
	@command -v chromium >/dev/null || { \
	  echo "Installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

LINTED := src tests $(wildcard bench)

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	DJANGO_SETTINGS_MODULE=safeground.settings.test $(BIN)/mypy
	PYTHONPATH=src $(BIN)/lint-imports --no-cache

# Known vulnerabilities in the installed dependencies (pip-audit); says plainly when it cannot run.
audit: $(STAMP)
	scripts/audit

test: $(STAMP) print-libs browser lint audit
	DJANGO_SETTINGS_MODULE=safeground.settings.test $(BIN)/safeground makemigrations --check --dry-run
	scripts/run-tests

bench: $(STAMP)
	@set -e; for b in $(wildcard bench/bench_*.py); do echo "== $$b"; $(BIN)/python $$b; done

bench-live: $(STAMP)
	$(BIN)/python bench/bench_live.py

bench-matching: $(STAMP)
	$(BIN)/python bench/bench_matching.py

bench-bundle: $(STAMP)
	$(BIN)/python bench/bench_bundle.py

# The season dashboard and a post-match report over 50 matches, 20,000 log entries and 2,000,000
# scans, on PostgreSQL (127.0.0.1:5432, a database of its own); `--sqlite` in BENCH_REPORTS_ARGS
# for a SQLite file instead.
bench-reports: $(STAMP)
	$(BIN)/python bench/bench_reports.py $(BENCH_REPORTS_ARGS)

# Two server processes on PostgreSQL and Redis under faults: one killed (SIGKILL) and started
# again, then PostgreSQL cut for 3 s through a proxy; --restart-postgres in BENCH_FAULTS_ARGS
# restarts the real server instead (never on a machine others are using).
bench-faults: $(STAMP)
	$(BIN)/python bench/bench_faults.py $(BENCH_FAULTS_ARGS)

# The demo's worst ten minutes at ten times their rate on two processes (PostgreSQL and Redis):
# scans, reports on three zones, broadcasts acknowledged, 2,000 viewer sockets beside the plain
# `websockets` reference, one process killed and restarted; BENCH_SURGE_ARGS (--seconds 30).
bench-surge: $(STAMP)
	$(BIN)/python bench/bench_surge.py $(BENCH_SURGE_ARGS)

# Supporters' reports: 100/s from one stand and 10/s over the ground, the control room open.
bench-supporters: $(STAMP)
	$(BIN)/python bench/bench_supporters.py $(BENCH_SUPPORTERS_ARGS)

# Turnstile decisions against pretix's check-in endpoint (installed by the benchmark into a cache
# folder of its own, never into the project); Debian's wrk drives the load.
bench-entry: $(STAMP)
	@command -v wrk >/dev/null || { echo "Installing Debian's wrk for the entry benchmark"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
	$(BIN)/python bench/bench_entry.py $(BENCH_ENTRY_ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
