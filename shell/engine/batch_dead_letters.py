"""A stateful job's bad records, kept by the job itself: counted as it reads, read again only where there are some.

Why it exists: a stateful query (a window, a join, the changelog path) has one sink, its result, and the records
that did not decode never reach it. A second streaming query used to read and decode each topic again to keep
them, so every record was read and decoded twice. Here the job's own read counts each table's bad records (an
observed metric, computed in the same pass). After a micro-batch is written, a table that had some in it is read
again over that batch's offset range (from the query's offset log) as a Spark batch, and its bad records are
written aside. A batch without bad records costs nothing more.

This runs inside the batch's foreachBatch, before Spark commits the batch: a batch replayed after a crash writes
its bad records again into the same folder (overwritten), so none are lost or doubled. The count and the offsets
come from the query's execution on the driver (py4j): Spark has no public API for a batch's observed metrics or
offsets before the batch commits. If they cannot be read, the job fails with an error rather than losing records.

A table qualifies when its connector can read it by offset range and no other table of the query reads any of its
topics (its offsets are told apart by their topics). The others keep the second query (native.start_dead_letters).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors.base import ConnectorContext, SourceFrame
from shell.connectors.registry import connector_for, resolved
from shell.engine import bad_records
from shell.errors import ExecutionError
from shell.formats.base import ERROR_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

_names = itertools.count()
START_TIMEOUT_S = 300  # how long a first micro-batch waits for start() to hand over its query


def counted(frame: "DataFrame", table: TableDef) -> tuple["DataFrame", str | None]:
    """`frame` (decoded rows, bad records included) with its bad records counted per micro-batch, and the
    metric's name; or `frame` and None when the table's bad records are not kept or it cannot be read by range."""
    table = resolved(table)
    keeps = bad_records.errors_mode(table) == "dead-letter" and ERROR_COLUMN in frame.columns
    if not keeps or connector_for(table).range_topics(table) is None:
        return frame, None
    name = f"bad-records-{next(_names)}"  # unique within the query: the same table may be read twice
    return bad_records.with_bad_count(frame, name), name


@dataclass(frozen=True)
class CountedTable:
    """A table whose bad records the job counts, and reads again by offset range for a batch that has some."""

    table: TableDef  # resolved
    metric: str
    folder: str
    topics: frozenset[str]


def sort_sources(
    opened: list[tuple[TableDef, SourceFrame]], in_batches: bool = True,
) -> tuple[list[CountedTable], list[tuple[str, "DataFrame", str]]]:
    """The opened tables whose bad records the job keeps itself, and (table, frame, folder) of those that need a
    dead-letter query: no read by range, or a topic that another table of the query may read too (its offsets
    would not be told apart), or every one when the job has no micro-batches to keep them in (`in_batches`
    False: real-time mode). A table read twice (a self-join) gets one dead-letter query: same bad records."""
    tables = [resolved(table) for table, _ in opened]
    topics = [connector_for(table).range_topics(table) for table in tables]
    kept, streamed = [], {}
    for n, (table, (_, source)) in enumerate(zip(tables, opened)):
        if source.dead_letters is None:
            continue
        mine = topics[n]
        shared = any(
            "topic-pattern" in other.options or bool(mine and theirs and mine & theirs)
            for m, (other, theirs) in enumerate(zip(tables, topics))
            if m != n
        )
        if in_batches and source.bad_count and mine is not None and not shared:
            kept.append(CountedTable(table, source.bad_count, source.dead_letter_path, mine))
        else:
            streamed.setdefault(table.name.lower(), (table.name, source.dead_letters, source.dead_letter_path))
    return kept, list(streamed.values())


class QueryHandle:
    """The running query, for its own foreachBatch function: Spark may run the first batch before start()
    returns it."""

    def __init__(self) -> None:
        self._query: StreamingQuery | None = None
        self._ready = threading.Event()

    def set(self, query: "StreamingQuery") -> None:
        self._query = query
        self._ready.set()

    def execution(self):  # noqa: ANN201 - the JVM's StreamExecution (py4j)
        if not self._ready.wait(START_TIMEOUT_S) or self._query is None:
            raise ExecutionError("the query did not start in time to keep its bad records")
        return self._query._jsq.streamingQuery()  # noqa: SLF001


def keep_bad_records(
    handle: QueryHandle, tables: list[CountedTable], ctx: ConnectorContext, batch_id: int, owner: str
) -> None:
    """Write aside the bad records of micro-batch `batch_id` of every table that had some in it."""
    if not tables:
        return
    try:
        execution = handle.execution()
        counts = observed_counts(execution, [t.metric for t in tables])
        pending = [t for t in tables if counts.get(t.metric) != 0]  # some, or not counted: read the range
        ranges = [(t, *offset_range(execution, batch_id, t)) for t in pending]
    except ExecutionError:
        raise
    except Exception as exc:  # noqa: BLE001 - py4j: Spark's internals changed or the query went away
        raise ExecutionError(
            f"cannot read micro-batch {batch_id}'s offsets to keep its bad records: {exc}".splitlines()[0],
            hint="set 'errors.mode' = 'ignore' on the table to drop bad records instead",
        ) from None
    for table, start, end in ranges:
        frame = connector_for(table.table).read_range(ctx, table.table, start, end)
        _, dead = bad_records.split(frame, table.table)
        bad_records.write_batch(dead, table.folder, owner, batch_id, known_bad=counts.get(table.metric) is not None,
                                table=table.table.name)  # fmt: skip


def observed_counts(execution, metrics: list[str]) -> dict[str, int]:  # noqa: ANN001 - py4j
    """The bad-record counts of the batch being written, by metric name (a metric missing is left out)."""
    observed = execution.lastExecution().observedMetrics()
    counts = {}
    for name in metrics:
        row = observed.get(name)
        if row.isDefined():
            counts[name] = int(row.get().getLong(0))
    return counts


def offset_range(execution, batch_id: int, table: CountedTable) -> tuple[str, str]:  # noqa: ANN001 - py4j
    """(start, end) offsets, as JSON, of the source of `table` in micro-batch `batch_id`: its end from the offset
    log, its start from the batch before, or the source's initial offset for the first batch."""
    connector = connector_for(table.table)
    log = execution.offsetLog()
    batch = log.get(batch_id)
    if not batch.isDefined():
        raise ExecutionError(f"micro-batch {batch_id} is not in the query's offset log")
    ends = batch.get().offsets()
    mine = []
    for i in range(ends.size()):
        end = ends.apply(i)
        if end.isDefined() and connector.offset_topics(end.get().json()) & table.topics:
            mine.append((i, end.get().json()))
    if len(mine) != 1:
        raise ExecutionError(f"micro-batch {batch_id}: cannot tell which offsets are table {table.table.name}'s")
    i, end = mine[0]
    before = log.get(batch_id - 1) if batch_id > 0 else None
    start = before.get().offsets().apply(i) if before is not None and before.isDefined() else None
    if start is not None and start.isDefined():
        return start.get().json(), end
    return execution.sources().apply(i).initialOffset().json(), end
