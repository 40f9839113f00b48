# Safeground: `make run` serves the demo, `make test` runs everything CI runs.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DJANGO_SETTINGS_MODULE ?= safeground.settings.dev

.PHONY: run test lint audit print-libs gettext messages bench bench-live bench-matching bench-entry bench-bundle bench-reports bench-faults bench-surge bench-alerts bench-exchange bench-supporters bench-sms bench-seat-sheet bench-network bench-soak bench-gates install browser clean

$(STAMP): pyproject.toml
	@PY=$$(scripts/find-python) || exit 1; \
	  [ -x $(BIN)/python ] || $$PY -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

# The translations (src/safeground/locale): Django reads compiled catalogues (.mo), made here from
# the committed .po files, never committed themselves.
MO := $(patsubst %.po,%.mo,$(wildcard src/safeground/locale/*/LC_MESSAGES/*.po))
$(MO): %.mo: %.po | gettext
	msgfmt --check-format -o $@ $<

install: $(STAMP) $(MO)

# Debian's gettext: makemessages and msgfmt for the translation catalogues.
gettext:
	@command -v msgfmt >/dev/null && command -v xgettext >/dev/null || { \
	  echo "Installing Debian's gettext for the translation catalogues"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends gettext >/dev/null; }

# Every string marked in the code into the catalogues (then fill in the translations, commit).
messages: $(STAMP) gettext
	$(BIN)/python scripts/messages refresh

# Pango and a font for printed documents (WeasyPrint): on Debian, Chromium brings them, a bare
# machine may not have them.
print-libs:
	@ldconfig -p | grep -q libpangoft2-1.0 && fc-list 2>/dev/null | grep -qi dejavu || { \
	  echo "Installing Debian's Pango and DejaVu fonts for printed documents"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends \
	    libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core fontconfig >/dev/null; }

run: $(STAMP) $(MO) print-libs
	$(BIN)/safeground migrate --no-input -v 0
	$(BIN)/safeground demo --if-empty
	$(BIN)/safeground serve

# Debian's Chromium for the browser tests; Playwright never downloads a browser of its own.
browser:
	@command -v chromium >/dev/null || { \
	  echo "Installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

LINTED := src tests $(wildcard bench)

lint: $(STAMP) gettext
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	DJANGO_SETTINGS_MODULE=safeground.settings.test $(BIN)/mypy
	PYTHONPATH=src $(BIN)/lint-imports --no-cache
	$(BIN)/python scripts/messages check

# Known vulnerabilities in the installed dependencies (pip-audit); says plainly when it cannot run.
audit: $(STAMP)
	scripts/audit

test: $(STAMP) $(MO) print-libs browser lint audit
	DJANGO_SETTINGS_MODULE=safeground.settings.test $(BIN)/safeground makemigrations --check --dry-run
	scripts/run-tests

bench: $(STAMP)
	@set -e; for b in $(wildcard bench/bench_*.py); do echo "== $$b"; $(BIN)/python $$b; done

bench-live: $(STAMP)
	$(BIN)/python bench/bench_live.py

bench-matching: $(STAMP)
	$(BIN)/python bench/bench_matching.py

bench-exchange: $(STAMP)
	$(BIN)/python bench/bench_exchange.py

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
# scans, reports on three zones, broadcasts acknowledged, 2,000 viewer sockets, one process killed
# and restarted; then the plain `websockets` reference alone over the same frames at the same
# moments; a verdict only where the servers had a core to themselves; BENCH_SURGE_ARGS.
bench-surge: $(STAMP)
	$(BIN)/python bench/bench_surge.py $(BENCH_SURGE_ARGS)

# The grounds' networks (bench/impair.py's profiles) between the clients and two processes on
# PostgreSQL and Redis: reports to the screens, scans decided offline, nothing lost or twice.
# BENCH_NETWORK_ARGS=--sqlite runs the default install instead (one process on SQLite, no Redis).
bench-network: $(STAMP)
	$(BIN)/python bench/bench_network.py $(BENCH_NETWORK_ARGS)

# A match day without a restart, compressed to 30 minutes, on SQLite (the default install): memory,
# open files, database connections and p99s every five minutes; BENCH_SOAK_ARGS (--minutes 3,
# --postgres --pg-db sg_me --redis-url redis://127.0.0.1:6379/7).
bench-soak: $(STAMP)
	$(BIN)/python bench/bench_soak.py $(BENCH_SOAK_ARGS)

# An urgent broadcast to 500 subscribed stewards through a push service on this machine.
bench-alerts: $(STAMP)
	$(BIN)/python bench/bench_alerts.py $(BENCH_ALERTS_ARGS)

# Supporters' reports: 100/s from one stand and 10/s over the ground, the control room open.
bench-supporters: $(STAMP)
	$(BIN)/python bench/bench_supporters.py $(BENCH_SUPPORTERS_ARGS)

# Gate pressure: 40 turnstiles on the arrival curve, a forged-ticket wave at Gate A and a
# tailgating burst at Gate C, warned on a control-room socket; BENCH_GATES_ARGS (--postgres).
bench-gates: $(STAMP)
	$(BIN)/python bench/bench_gates.py $(BENCH_GATES_ARGS)

bench-sms: $(STAMP)
	$(BIN)/python bench/bench_sms.py

bench-seat-sheet: $(STAMP)
	$(BIN)/python bench/bench_seat_sheet.py

# Turnstile decisions against pretix's check-in endpoint (installed by the benchmark into a cache
# folder of its own, never into the project); Debian's wrk drives the load.
bench-entry: $(STAMP)
	@command -v wrk >/dev/null || { echo "Installing Debian's wrk for the entry benchmark"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
	$(BIN)/python bench/bench_entry.py $(BENCH_ENTRY_ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
