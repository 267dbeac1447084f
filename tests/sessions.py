"""Sessions for the tests: jobs run inside the test's own Spark (`execution.target` = 'embedded'), and a catalog
made by a session's own DDL for the planning tests.

The engine and job-supervision tests share one Spark between many sessions; a job process per INSERT would start
a Spark of its own each time. The detached job processes are tested through the real CLI (tests/e2e).
"""

from __future__ import annotations

from pathlib import Path

from shell.catalog.store import Catalog
from shell.session import Session, SessionOptions
from shell.sql.parse import parse_script


def embedded_options(**options) -> SessionOptions:  # noqa: ANN003 - SessionOptions' fields
    settings = {"execution.target": "embedded", **options.pop("settings", {})}
    return SessionOptions(settings=settings, **options)


def catalog_after(ddl: str, home: Path) -> Catalog:
    """The catalog of a session under `home` once it has run `ddl` (planned before Spark starts: no Spark needed)."""
    session = Session(SessionOptions(home=home))
    for statement in parse_script(ddl):
        session.execute(statement)
    return session.catalog
