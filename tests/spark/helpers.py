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


def take(stream: ChangeStream, count: int, timeout: float = 120) -> list[tuple[str, tuple]]:
    """The first `count` changes of an unbounded result, then cancel it (fails after `timeout` seconds)."""
    try:
        return next_changes(stream, count, timeout)
    finally:
        stream.cancel()


def next_changes(stream: ChangeStream, count: int, timeout: float = 120) -> list[tuple[str, tuple]]:
    """The next `count` changes of a running result, which keeps running (fewer if it ended; fails after
    `timeout` seconds)."""
    import time

    deadline = time.monotonic() + timeout
    out: list[tuple[str, tuple]] = []
    for batch in stream.batches():
        out.extend((c.op, c.row) for c in batch or ())
        if len(out) >= count:
            return out
        assert time.monotonic() < deadline, f"only {len(out)} of {count} changes after {timeout} s: {out}"
    return out


def changes(stream: ChangeStream) -> list[tuple[str, tuple]]:
    """Drain a bounded result: every (op, row) in order."""
    assert isinstance(stream, ChangeStream)
    out = []
    for batch in stream.batches():
        out.extend((c.op, c.row) for c in batch or ())
    return out


def materialize(rows: list[tuple[str, tuple]], key: int | None = None) -> list[tuple]:
    """The final result: upserts by the first `key` columns, or a multiset of retractions."""
    if key is not None:
        table: dict = {}
        for op, row in rows:
            if op == "-D":
                table.pop(row[:key], None)
            else:
                table[row[:key]] = row
        return sorted(table.values(), key=repr)
    bag: list[tuple] = []
    for op, row in rows:
        if op in ("-D", "-U"):
            bag.remove(row)
        else:
            bag.append(row)
    return sorted(bag, key=repr)


def wait_for(predicate, timeout: float, what: str, interval: float = 1.0):  # noqa: ANN001, ANN201
    """The first truthy value of `predicate()`, polled every `interval` s; fails after `timeout` s."""
    import time

    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what}: not after {timeout} s (last: {last!r})")
