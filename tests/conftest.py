"""Shared fixtures: one local Spark for the whole run, and sessions on a temporary home.

Tiers follow the folders (unit: no Spark; spark: local Spark; e2e: real brokers and the CLI; differential: the
CLI against Apache Flink in .venv-flink), and each test gets the marker of its folder, so `pytest -m unit` runs
the fast tier alone.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

# First, before any test module imports sqlglot: a compiled SQL front end, when one is in use, must be put
# first on the import path before sqlglot is imported (shell/compiled_sql.py).
import shell  # noqa: F401
from shell import compiled_sql

ROOT = Path(__file__).resolve().parents[1]
TIERS = ("unit", "spark", "e2e", "differential")


def pytest_configure(config):
    # A run started in the background by a non-interactive shell (`make test &` in a script) inherits SIGINT
    # ignored, and so would every shell a test starts: its Ctrl-C (SIGINT) would then do nothing. A handler here
    # is reset to the default in each child, as a terminal's session has it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # The other tiers' markers are declared in pyproject.toml; this one lives with its folder rule.
    config.addinivalue_line("markers", "differential: streamshell against Apache Flink (tests/differential)")
    if compiled_sql.active_dir is not None:
        # `make test-compiled-sql`: the tests below must run the compiled modules, not their sources.
        from shell.sql import grammar, scanner

        for module in (grammar, scanner):
            if not str(module.__file__).endswith(".so"):
                raise pytest.UsageError(f"compiled SQL front end in use but {module.__name__} is {module.__file__}")


def tier_of(path: str) -> str:
    """A test's tier: its folder under tests/ (tests/gateway is e2e by its own markers, and counted apart)."""
    parts = Path(path).parts
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "other"


def pytest_collection_modifyitems(items):
    for item in items:
        tier = tier_of(item.nodeid.split("::")[0])
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))


SECONDS_PER_TIER: dict[str, float] = {}


def pytest_runtest_logreport(report):
    # Setup, call and teardown of each test, summed per folder: make test's 25 minutes are budgeted per tier
    # (docs/development.md), and with -n the wall time of a tier is about this sum over the workers.
    tier = tier_of(report.nodeid.split("::")[0])
    SECONDS_PER_TIER[tier] = SECONDS_PER_TIER.get(tier, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    if SECONDS_PER_TIER:
        total = sum(SECONDS_PER_TIER.values())
        shares = ", ".join(f"{tier} {seconds:,.1f} s" for tier, seconds in sorted(SECONDS_PER_TIER.items()))
        terminalreporter.write_line(f"time per tier (setup, call and teardown summed): {shares}; {total:,.1f} s in all")


@pytest.fixture(scope="session")
def spark_runtime(tmp_path_factory):
    """One Spark for every test that needs it (a JVM start costs seconds)."""
    from shell.engine.spark import SparkRuntime

    log = tmp_path_factory.mktemp("spark-log") / "spark.log"
    runtime = SparkRuntime("local[2]", {"spark.sql.shuffle.partitions": "2"}, log)
    runtime.start()
    yield runtime
    runtime.stop()


@pytest.fixture
def session(tmp_path, spark_runtime):
    """A session with its own catalog and jobs under a temporary home, sharing the test run's Spark."""
    from shell.session import Session
    from tests.sessions import embedded_options

    s = Session(embedded_options(home=tmp_path / "home"), runtime=spark_runtime)
    yield s
    s.close()
