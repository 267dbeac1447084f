# The two commands a new user needs are `make setup` and `make test`; the rest are conveniences.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup test test-fast test-spark test-e2e services-start services-stop quickstart bench bench-frontend bench-startup bench-pulsar bench-connectors

## setup: virtual environment, the package in editable mode, JVM artifacts from Maven Central, then the quickstart
setup: $(VENV)/.installed
	scripts/jvm-deps spark kafka pulsar
	$(BIN)/streamshell -f examples/quickstart.sql

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

## test: every tier; brokers are started by the test session if they are not running, and stopped after
test:
	$(BIN)/python -m pytest

## test-fast: unit tests only (no Spark, no broker)
test-fast:
	$(BIN)/python -m pytest -m unit

test-spark:
	$(BIN)/python -m pytest -m spark

test-e2e:
	$(BIN)/python -m pytest -m e2e

services-start:
	scripts/services start

services-stop:
	scripts/services stop

quickstart:
	$(BIN)/streamshell -f examples/quickstart.sql

## bench: every benchmark, each writing its section of docs/benchmarks.md (brokers must be running for pulsar)
bench: bench-frontend bench-startup bench-pulsar bench-connectors

bench-frontend:
	$(BIN)/python -m benchmarks.frontend --write

bench-startup:
	$(BIN)/python -m benchmarks.startup --write

bench-pulsar:
	$(BIN)/python -m benchmarks.pulsar --write

bench-connectors:
	$(BIN)/python -m benchmarks.connectors --write
