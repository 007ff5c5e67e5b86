# One set of commands for people and CI.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PORT

.PHONY: run test test-fast lint install install-dev migrate seed bench load clean system-deps browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

migrate: install
	$(BIN)/python -m app migrate

seed: migrate
	$(BIN)/python -m app seed

## Debian packages WeasyPrint needs for quote PDFs (Pango, HarfBuzz font subsetting: fast, and a CJK font
## so Chinese renders):
## skipped when installed, else apt-get (as root, or through sudo).
SYSTEM_PACKAGES := libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core fonts-noto-cjk
system-deps:
	@dpkg -s $(SYSTEM_PACKAGES) >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(SYSTEM_PACKAGES); }

## Debian's Chromium for the browser tests (tests/web, Playwright with executable_path): quick when
## /usr/bin/chromium exists, else apt-get. Playwright never downloads a browser of its own.
browser:
	@test -x /usr/bin/chromium || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium; }

## Start the service on DATABASE_URL (default: SQLite in ./data), migrated and seeded.
run: system-deps seed
	$(BIN)/python -m app serve

## Format, lint (complexity at most 12), types (mypy strict for all of app/), the import layers
## (pyproject.toml), every planner module placed as pure or not (scripts/pure_planner.py) and the 800-line module
## limit (scripts/module_size.py, with its named exceptions).
lint: install-dev
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/pure_planner.py
	$(BIN)/python scripts/module_size.py

## Lint, then the whole suite on SQLite and PostgreSQL (TEST_DATABASE_URL), with the browser tests, and the
## line coverage of app/ reported and held at [tool.coverage.report] fail_under (pyproject.toml).
test: system-deps browser lint
	$(BIN)/python -m pytest --cov --cov-report=term:skip-covered --durations=25

## The quick loop: unit and API tests on SQLite only, leaving out the tests marked slow (they start processes),
## browser and postgres (tests/conftest.py sets the markers), on two worker processes (pytest-xdist; a test
## module stays on one worker). Under 90 s here. `make test` runs in one process, as before.
## Bytecode is cached (__pycache__, ignored by git) even where PYTHONDONTWRITEBYTECODE is set: otherwise each of the
## three processes compiles the app again and pytest rewrites the asserts of every test module again, 5 s of CPU a
## worker on every run. Schemathesis' plugin is not loaded: the modules that fuzz with it are slow, not collected here.
test-fast: install-dev
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -m "not slow and not browser and not postgres" -n 2 --dist loadfile \
	  -p no:schemathesis

bench: install-dev
	$(BIN)/python benchmarks/estimator.py

## 50 clients for 60 s against `serve --workers 2` on PostgreSQL (LOAD_DATABASE_URL; it is emptied).
load: install-dev
	$(BIN)/python benchmarks/load.py

clean:
	rm -rf $(VENV) data .pytest_cache .ruff_cache .mypy_cache .import_linter_cache
