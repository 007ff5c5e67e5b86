# One set of commands for people and CI.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PORT

.PHONY: run test lint install install-dev migrate seed bench clean

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

## Start the service on DATABASE_URL (default: SQLite in ./data), migrated and seeded.
run: seed
	$(BIN)/python -m app serve

lint: install-dev
	$(BIN)/ruff check .

## Lint, then the whole suite on SQLite and PostgreSQL (TEST_DATABASE_URL).
test: lint
	$(BIN)/python -m pytest

bench: install-dev
	$(BIN)/python benchmarks/estimator.py

clean:
	rm -rf $(VENV) data .pytest_cache .ruff_cache
