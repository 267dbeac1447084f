"""Running statements against a real local Spark session in tests and collecting what they return."""

from __future__ import annotations

from shell.results import ChangeStream
from shell.sql.parse import parse_script


def run(session, sql: str):
    """Execute every statement of `sql`; return the last result."""
    result = None
    for statement in parse_script(sql):
        result = session.execute(statement)
    return result


def changes(stream: ChangeStream) -> list[tuple[str, tuple]]:
    """Drain a bounded result: every (op, row) in order."""
    assert isinstance(stream, ChangeStream)
    out = []
    for batch in stream.batches():
        out.extend((c.op, c.row) for c in batch or ())
    return out
