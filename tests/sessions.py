"""Sessions for the engine tests: jobs run inside the test's own Spark (`execution.target` = 'embedded').

The engine and job-supervision tests share one Spark between many sessions; a job process per INSERT would start
a Spark of its own each time. The detached job processes are tested through the real CLI (tests/e2e).
"""

from __future__ import annotations

from shell.session import SessionOptions


def embedded_options(**options) -> SessionOptions:  # noqa: ANN003 - SessionOptions' fields
    settings = {"execution.target": "embedded", **options.pop("settings", {})}
    return SessionOptions(settings=settings, **options)
