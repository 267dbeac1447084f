"""Running a plan as one Spark streaming query: a SELECT's micro-batches handed to a `ChangeStream` for display,
an INSERT's to the target connector's sink as a detached job.

Why it exists: both paths end the same way (a streaming query with a checkpoint, a trigger, the bad records kept
aside); what differs is chosen once, at the entry, by `parts_for(plan)`: `NativeParts` (Spark's own operators
over the plan's SQL, rows appended) or `ChangelogParts` (engine/changelog.py's stages, weighted rows turned into
Flink's changes).
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from shell.catalog.model import TableDef
from shell.connectors.base import ConnectorContext, Lookup, SourceFrame
from shell.connectors.registry import connector_for, resolved
from shell.engine import bad_records, changelog, stage_cache
from shell.engine.bad_records import DeadLetterQuery
from shell.engine.batch_dead_letters import CountedTable, QueryHandle, keep_bad_records, sort_sources
from shell.engine.processing_time import processing_time_input
from shell.engine.shown_groups import ShownGroups
from shell.engine.sources import decoded, finished, open_lookup, open_table
from shell.engine.spark_errors import from_spark
from shell.errors import CatalogError, OptionError
from shell.formats.base import OP_COLUMN
from shell.planner.model import UPSERTS
from shell.planner.plan import APPEND_ONLY, CHANGELOG, Plan
from shell.results import DELETE, INSERT, Change, ChangeStream, Progress
from shell.sql.types import flink_type_to_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Observation, SparkSession
    from pyspark.sql.streaming import StreamingQuery


@dataclass
class RunContext:
    """What running a plan needs from the session."""

    spark: "SparkSession"
    work_dir: Path
    trigger_ms: int
    errors_dir: Path | None = None
    errors_trigger_ms: int = 10_000  # the dead-letter queries' interval (never shorter than trigger_ms)
    print_stream: TextIO | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)
    # the changelog path's keyed stage: key buckets and sub-buckets per bucket
    layout: tuple[int, int] = (changelog.DEFAULT_BUCKETS, changelog.DEFAULT_SUB_BUCKETS)
    local_copies: bool = True  # the keyed stage reads its sub-buckets from local copies (engine/stage_cache.py)
    max_rows_per_batch: int = 10_000  # the most rows of one micro-batch a SELECT brings to the driver

    def connector_context(self, session: "SparkSession") -> ConnectorContext:
        ctx = ConnectorContext(session, self.work_dir, self.errors_dir)
        if self.print_stream is not None:
            ctx.print_stream = self.print_stream
        return ctx


@dataclass
class Built:
    """A plan made into DataFrames: the query, and the records of its sources that did not decode."""

    frame: "DataFrame"
    ctx: ConnectorContext
    dead_letters: list[tuple[str, "DataFrame", str]] = field(default_factory=list)  # (table, frame, folder)
    per_batch: "PerBatch | None" = None  # set when one query both keeps the bad records and runs the plan
    counted: list[CountedTable] = field(default_factory=list)  # tables whose bad records the query keeps itself
    handle: QueryHandle = field(default_factory=QueryHandle)
    lookups: list[Lookup] = field(default_factory=list)  # the static sides of lookup joins (their caches expire)

    def keeping_bad_records(self, write, owner: str):  # noqa: ANN001, ANN201 - foreachBatch functions
        """`write` followed by writing aside the batch's bad records of the tables the query counts, then by each
        lookup join's turn to let its cached copy expire (read again by the next micro-batch)."""
        if not self.counted and not self.lookups:
            return write

        def write_and_keep(batch: "DataFrame", batch_id: int) -> None:
            write(batch, batch_id)
            if self.counted:
                keep_bad_records(self.handle, self.counted, self.ctx, batch_id, owner)
            for lookup in self.lookups:
                lookup.after_batch()

        return write_and_keep

    def close_lookups(self) -> None:
        for lookup in self.lookups:
            lookup.close()


@dataclass
class PerBatch:
    """A stateless plan (one table, filters and projections) run micro-batch by micro-batch over the table's
    decoded rows: each batch's bad records are written aside and its good rows queried with the plan's SQL, in
    the one streaming query. The topic is read and decoded once, not a second time by a dead-letter query."""

    stream: "DataFrame"  # the decoded rows, bad records included: what the streaming query reads
    table: TableDef
    bounded: bool
    view: str
    sql: str
    ctx: ConnectorContext

    def run(self, batch: "DataFrame", batch_id: int, owner: str, consume, one_pass: bool) -> None:  # noqa: ANN001
        """Hand the plan's result over the batch to `consume` and write the batch's bad records (idempotently: a
        replayed batch overwrites its own folder).

        With `one_pass` (`consume` runs one Spark action over every row), that action also counts the bad
        records, and only a batch that has some is read again to write them: the common batch is read once and
        never cached. Otherwise the batch is cached for the two reads.
        """
        from pyspark.sql import Observation

        if one_pass:
            watch = Observation(f"bad-records-{uuid.uuid4().hex}")
            counted = bad_records.with_bad_count(batch, watch)
            source = finished(self.ctx, self.table, counted, self.bounded, watermark=False)
            self._query(source, consume)
            bad = observed(watch, "bad")
            if bad != 0:  # some, or not counted (no action ran): then checked before writing
                self._keep_bad_records(source, batch_id, owner, known_bad=bad is not None)
            return
        batch.persist()
        try:
            source = finished(self.ctx, self.table, batch, self.bounded, watermark=False)
            self._keep_bad_records(source, batch_id, owner)
            self._query(source, consume)
        finally:
            batch.unpersist()

    def _query(self, source: SourceFrame, consume) -> None:  # noqa: ANN001
        source.frame.createOrReplaceTempView(self.view)
        consume(source.frame.sparkSession.sql(self.sql))

    def _keep_bad_records(self, source: SourceFrame, batch_id: int, owner: str, known_bad: bool = False) -> None:
        bad_records.write_batch(source.dead_letters, source.dead_letter_path, owner, batch_id, known_bad,
                                table=self.table.name)  # fmt: skip


def observed(watch: "Observation", name: str) -> int | None:
    """The metric `name` of an observation whose action has run, or None when none ran (it would block)."""
    if watch._jo is None or not watch._jo.future().isCompleted():  # noqa: SLF001 - pyspark's get() has no timeout
        return None
    return watch.get[name]


SHOWN_ROWS = "shown-rows"  # the kind of note a batch shown in part gets (ChangeStream.note)
MAX_ROWS_SETTING = "sql-client.display.max-rows-per-batch"
ROW_IN_PARTITION = (1 << 33) - 1  # monotonically_increasing_id(): the row's number within its partition


def rows_to_show(frame: "DataFrame", max_rows: int) -> tuple[list, int | None]:
    """At most `max_rows` rows of a micro-batch's result for the driver, and how many rows it has (None when
    Spark did not say).

    The rows are cut on the executors: a filter keeps the first `max_rows` rows of each partition (its row
    numbers come from monotonically_increasing_id), so at most `max_rows` per partition reach the driver, and
    the first `max_rows` of those are kept. A filter, not a LIMIT: every row is still computed, so no partition
    is skipped (a stateful query's tasks commit its state once they have read all their rows, and a stateless
    one counts its bad records in the same pass: a LIMIT would leave both short), and the rows are counted on the
    way, by an observed metric. A single stage: no shuffle to cut the batch to `max_rows` exactly (it cost about
    40 ms more per micro-batch).
    """
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    watch = Observation(f"shown-rows-{uuid.uuid4().hex}")
    counted = frame.observe(watch, F.count(F.lit(1)).alias("rows"))
    in_partition = F.monotonically_increasing_id().bitwiseAND(F.lit(ROW_IN_PARTITION))
    rows = counted.where(in_partition < F.lit(max_rows)).collect()
    total = observed(watch, "rows")
    return rows[:max_rows], (len(rows) if total is None and len(rows) <= max_rows else total)


def shown_note(shown: int, total: int | None, batch_id: int, max_rows: int) -> tuple[str, str] | None:
    """What the status line says of a batch shown in part (None when it is shown whole)."""
    if total is not None and total <= shown:
        return None
    of = f"{shown} of {total}" if total is not None else f"the first {shown}"
    return SHOWN_ROWS, f"showing {of} rows of batch {batch_id} ({MAX_ROWS_SETTING} = {max_rows})"


def build_frame(run: RunContext, plan: Plan) -> Built:
    """The plan's query as a streaming DataFrame, over its sources (Spark's analysis errors become ours)."""
    session = run.spark
    for key, value in run.spark_conf.items():
        if session.conf.isModifiable(key):  # a static one (spark.eventLog.*) took effect when the Spark started
            session.conf.set(key, value)
    ctx = run.connector_context(session)
    try:
        return parts_for(plan).build(run, ctx)
    except Exception as exc:  # noqa: BLE001 - Spark's analysis errors become ours
        raise from_spark(exc) from None


class NativeParts:
    """The native path's parts: the plan's Spark SQL over its sources, every row appended."""

    output_mode = "append"

    def __init__(self, plan: Plan):
        self.plan = plan

    def build(self, run: RunContext, ctx: ConnectorContext) -> Built:
        """Everything runs in the one Spark session (Python data sources are registered per session); the plan's
        view names are unique, and the views are dropped again once the query is analyzed."""
        plan, session = self.plan, run.spark
        registered = []
        lookups: list[Lookup] = []
        try:
            opened = []
            for table in plan.sources:
                lookup = open_lookup(ctx, table) if table.name.lower() in plan.lookups else None
                if lookup is not None:  # the static side of a stream-static join, read every micro-batch
                    lookups.append(lookup)
                    view = plan.source_views[table.name.lower()]
                    finished(ctx, table, lookup.frame, bounded=False, watermark=False).frame.createOrReplaceTempView(view)
                    registered.append(view)
                    continue
                # processing-time windows close by the wall clock alone: the tables' own watermarks would hold them back
                source = open_table(ctx, table, watermark=not plan.processing_time)
                view = plan.source_views[table.name.lower()]
                source.frame.createOrReplaceTempView(view)
                registered.append(view)
                opened.append((table, source))
            for name, sql in plan.views:
                session.sql(sql).createOrReplaceTempView(name)
                registered.append(name)
            for window_input in plan.processing_time:
                rows = processing_time_input(session, session.table(window_input.relation), window_input.column)
                rows.createOrReplaceTempView(window_input.view)
                registered.append(window_input.view)
            frame = session.sql(plan.spark_sql)
            frame.schema  # noqa: B018 - analyze now, while the views exist
            if plan.stateless and any(source.dead_letters is not None for _, source in opened):
                (table,) = plan.sources
                stream, bounded = decoded(ctx, table)
                view = plan.source_views[table.name.lower()]
                return Built(frame, ctx, [], PerBatch(stream, table, bounded, view, plan.spark_sql, ctx))
            counted, dead_letters = sort_sources(opened)
            return Built(frame, ctx, dead_letters, counted=counted, lookups=lookups)
        except BaseException:
            for lookup in lookups:
                lookup.close()
            raise
        finally:
            for view in registered:
                session.catalog.dropTempView(view)

    def shown_columns(self, frame: "DataFrame") -> list[str]:
        return list(frame.columns)

    @property
    def key(self) -> list[str]:
        return []

    def publisher(self, stream: ChangeStream, max_rows: int):  # noqa: ANN201 - a foreachBatch function
        def on_batch(batch: "DataFrame", batch_id: int) -> None:
            if not stream.cancelled:
                rows, total = rows_to_show(batch, max_rows)
                stream.publish([Change(INSERT, tuple(row)) for row in rows], shown_note(len(rows), total, batch_id, max_rows))

        return on_batch

    def insert(self, built: Built, target: TableDef, columns: list[str] | None, connector, sink_table: TableDef,  # noqa: ANN001
               name: str):  # noqa: ANN201 - (the streaming frame, its foreachBatch function)
        """The frame the INSERT's query streams and the function that writes each of its micro-batches."""
        if built.per_batch is None:
            frame = conform_to_target(built.frame, target, columns)
            return frame, lambda batch, batch_id: connector.write_batch(built.ctx, sink_table, batch, batch_id)
        conform_to_target(built.frame, target, columns)  # the columns fit, or the INSERT fails now

        def write(batch: "DataFrame", batch_id: int) -> None:
            def put(result: "DataFrame") -> None:
                connector.write_batch(built.ctx, sink_table, conform_to_target(result, target, columns), batch_id)

            built.per_batch.run(batch, batch_id, name, put, one_pass=connector.writes_in_one_pass)

        return built.per_batch.stream, write


class ChangelogParts:
    """The changelog path's parts: keyed stages (engine/changelog.py), weighted rows turned into Flink's changes."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.result = plan.changelog

    @property
    def output_mode(self) -> str:
        """An aggregation of the changelog path updates its groups; the rest appends."""
        return "update" if self.result.output == UPSERTS else "append"

    def build(self, run: RunContext, ctx: ConnectorContext) -> Built:
        layout = changelog.kept_layout(ctx.work_dir, run.layout)
        scope = stage_cache.scope_of(ctx.work_dir) if run.local_copies else None
        frame, opened = changelog.build(run.spark, ctx, self.result, layout, scope)
        counted, dead_letters = sort_sources(opened)
        return Built(frame, ctx, dead_letters, counted=counted)

    def shown_columns(self, frame: "DataFrame") -> list[str]:
        return changelog.output_columns(frame)

    @property
    def key(self) -> list[str]:
        return list(self.result.key)

    def publisher(self, stream: ChangeStream, max_rows: int):  # noqa: ANN201 - a foreachBatch function
        """Micro-batches to the stream: retractions before additions; a grouped result's upserts as Flink's
        changes (+I, -U/+U, -D of the row shown last: engine/shown_groups.py). At most `max_rows` changes of a
        batch are shown (rows_to_show)."""
        result = self.result
        groups = None
        if result.output == UPSERTS:
            key = [stream.columns.index(k) for k in result.key] if result.key else \
                list(range(len(stream.columns), len(stream.columns) + len(result.hidden_key)))
            groups = ShownGroups(key, len(stream.columns))

        def on_batch(batch: "DataFrame", batch_id: int) -> None:
            if stream.cancelled:
                return
            taken, total = rows_to_show(changelog.changes(batch, result, hidden_key=True), max_rows)
            note = shown_note(len(taken), total, batch_id, max_rows)
            rows = [tuple(r) for r in taken]
            rows.sort(key=lambda r: r[-1] != DELETE)
            if groups is None:
                stream.publish([Change(r[-1], r[:-1]) for r in rows], note)
            else:
                stream.publish(groups.changes([(r[-1], r[:-1]) for r in rows]), note)

        return on_batch

    def insert(self, built: Built, target: TableDef, columns: list[str] | None, connector, sink_table: TableDef,  # noqa: ANN001
               name: str):  # noqa: ANN201 - (the streaming frame, its foreachBatch function)
        """Weighted rows to changes, one per key for upsert sinks; an append-only sink of an updating result is
        refused now, with the reason."""
        from pyspark.sql import functions as F

        from shell.planner.model import UPSERT_INPUT
        from shell.planner.planner import input_kind

        refuse_append_only_target(self.plan, target, connector)
        shown = built.frame.select(*(f"`{c}`" for c in changelog.output_columns(built.frame)))
        conform_to_target(shown, target, columns)  # the columns fit, or the INSERT fails now
        upsert = input_kind(target, connector) == UPSERT_INPUT or connector.writes_upserts(target)

        def write(batch: "DataFrame", batch_id: int) -> None:
            batch.persist()
            try:
                rows = conform_to_target(changelog.changes(batch, self.result), target, columns)
                if upsert:
                    rows = changelog.latest_per_key(rows, list(target.primary_key))
                else:
                    rows = rows.orderBy(F.col(OP_COLUMN) != F.lit(DELETE))
                connector.write_batch(built.ctx, sink_table, rows, batch_id)
            finally:
                batch.unpersist()

        return built.frame, write


def parts_for(plan: Plan) -> NativeParts | ChangelogParts:
    """What running `plan` takes that depends on its path: chosen here, once."""
    return ChangelogParts(plan) if plan.path == CHANGELOG else NativeParts(plan)


def start_dead_letters(run: RunContext, plan: Plan, built: Built, owner: str) -> list[DeadLetterQuery]:
    """One small streaming query per source whose bad records the job cannot keep itself (batch_dead_letters:
    no read by offset range, or a topic two tables share), writing them as JSON lines beside the catalog.

    It reads the source again beside the job, so it takes a micro-batch less often than the job
    (`table.exec.errors.interval`): on a busy machine its batches would otherwise hold the task slots the job's
    own batches wait for. One that cannot start (its folder cannot be written) does not stop the job: it is
    returned failed, and the job says so (DEGRADED in SHOW JOBS, a note on a SELECT's status line)."""
    queries = []
    for table, frame, folder in built.dead_letters:
        try:
            query = (
                frame.writeStream.format("json")
                .option("path", f"{folder}/{owner}")
                .option("checkpointLocation", str(run.work_dir / "dead-letters" / table.lower()))
                .trigger(**dead_letter_trigger(plan, run))
                .start()
            )
        except Exception as exc:  # noqa: BLE001 - the job runs on without its bad records, and says so
            queries.append(DeadLetterQuery(table, None, exc))
            continue
        queries.append(DeadLetterQuery(table, query))
    return queries


def dead_letter_trigger(plan: Plan, run: RunContext) -> dict:
    """A dead-letter query's trigger: to the input's end for a bounded job, else every `errors_trigger_ms`."""
    return trigger_for(plan, max(run.trigger_ms, run.errors_trigger_ms))


def trigger_for(plan: Plan, trigger_ms: int) -> dict:
    """Bounded inputs are read to their end and the query stops; unbounded ones run a batch per interval."""
    return {"availableNow": True} if plan.bounded else {"processingTime": f"{trigger_ms} milliseconds"}


def start_select(run: RunContext, plan: Plan) -> ChangeStream:
    """Start the query and return the stream of its result changes."""
    parts = parts_for(plan)
    built = build_frame(run, plan)
    frame = built.frame
    shown = parts.shown_columns(frame)
    types = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    stream = ChangeStream(columns=shown, types=[types[c] for c in shown], key=parts.key, bounded=plan.bounded)

    cap = run.max_rows_per_batch
    if not frame.isStreaming:  # no table at all (SELECT 1): the result is known at once
        try:
            rows = frame.limit(cap + 1).collect()
            total = frame.count() if len(rows) > cap else len(rows)
        except Exception as exc:  # noqa: BLE001
            raise from_spark(exc) from None
        stream.publish([Change(INSERT, tuple(row)) for row in rows[:cap]], shown_note(len(rows[:cap]), total, 0, cap))
        stream.finish()
        return stream

    on_batch = parts.publisher(stream, cap)
    if built.per_batch is not None:
        frame, publish = built.per_batch.stream, on_batch
        owner = run.work_dir.name

        def on_batch(batch: "DataFrame", batch_id: int) -> None:
            built.per_batch.run(batch, batch_id, owner, lambda result: publish(result, batch_id), one_pass=True)

    checkpoint = run.work_dir / "checkpoint"
    try:
        query = (
            frame.writeStream.foreachBatch(built.keeping_bad_records(on_batch, owner=run.work_dir.name))
            .outputMode(parts.output_mode)
            .trigger(**trigger_for(plan, run.trigger_ms))
            .option("checkpointLocation", str(checkpoint))
            .start()
        )
        built.handle.set(query)
        side = start_dead_letters(run, plan, built, owner=run.work_dir.name)
    except Exception as exc:  # noqa: BLE001
        raise from_spark(exc) from None

    def stop_all() -> None:
        for q in (query, *side):
            q.stop()
        built.close_lookups()
        stage_cache.remove(run.work_dir)

    stream.cancel_callback = stop_all
    stream.progress_callback = lambda: progress_of(query)
    threading.Thread(target=_watch, args=(query, side, stream, built.close_lookups), name="select-watch",
                     daemon=True).start()
    return stream


WATCH_S = 1.0  # how often a SELECT's watcher looks at its dead-letter queries while the query runs


def _watch(query: "StreamingQuery", side: list[DeadLetterQuery], stream: ChangeStream, on_end=None) -> None:  # noqa: ANN001
    """Finish the stream when the query ends, after its bad records are written (they end with it). Meanwhile,
    a dead-letter query that fails is said on the stream (the SELECT goes on without it)."""
    error = None
    failed: set[int] = set()

    def look_at_side_queries() -> None:
        for n, q in enumerate(side):
            if n in failed:
                continue
            try:
                failure = bad_records.side_failure(q)
            except Exception:  # noqa: BLE001 - the query is ending; looked at again below
                continue
            if failure is not None and not stream.cancelled:
                failed.add(n)
                stream.note(f"dead-letters:{q.table.lower()}", failure)

    while True:
        try:
            if query.awaitTermination(WATCH_S):
                break
        except Exception as exc:  # noqa: BLE001 - handed to the consumer as our error
            if not stream.cancelled:
                error = from_spark(exc)
            break
        look_at_side_queries()
    if error is not None:
        for other in side:
            other.stop()
    for q in side:
        try:
            q.awaitTermination()
        except Exception:  # noqa: BLE001 - said on the stream, not the result's error
            pass
    look_at_side_queries()
    if on_end is not None:
        on_end()
    stream.finish(error)


def progress_of(query: "StreamingQuery") -> Progress:
    return Progress.from_spark(query.lastProgress)


def conform_to_target(frame: "DataFrame", target: TableDef, columns: list[str] | None) -> "DataFrame":
    """Map the query's columns onto the target's writable columns, by position, cast to the target's types.

    With an explicit column list (`INSERT INTO t (a, b) SELECT ...`) the query fills those columns in order and
    the rest are NULL, as in Flink.
    """
    has_op = OP_COLUMN in frame.columns  # a changelog's row kinds travel with the rows
    if has_op:
        frame = frame.select(*(f"`{c}`" for c in frame.columns if c != OP_COLUMN), OP_COLUMN)
    writable = target.persisted_columns()
    by_name = {c.name.lower(): c for c in writable}
    if columns is None:
        chosen = writable
    else:
        chosen = []
        for name in columns:
            column = by_name.get(name.lower())
            if column is None:
                raise CatalogError(f"table '{target.name}' has no writable column '{name}'")
            chosen.append(column)
    given = len(frame.columns) - has_op
    if given != len(chosen):
        raise CatalogError(
            f"INSERT INTO {target.name} gives {given} columns but expects {len(chosen)}"
            f" ({', '.join(c.name for c in chosen)})",
            hint="list the target columns, INSERT INTO t (a, b) SELECT ..., or select one value per column",
        )
    source_of = {c.name.lower(): src for c, src in zip(chosen, frame.columns)}
    projection = []
    for column in writable:
        spark_type = flink_type_to_spark(column.data_type)
        src = source_of.get(column.name.lower())
        value = f"`{src}`" if src is not None else "NULL"
        projection.append(f"CAST({value} AS {spark_type}) AS `{column.name}`")
    return frame.selectExpr(*projection, *([OP_COLUMN] if has_op else []))


def write_values(
    run: RunContext, target: TableDef, columns: list[str] | None, rows: list[list], kind: str | None = None
) -> int:
    """`INSERT INTO t VALUES (...)`: the rows written once through the target's batch writer; returns the count.

    With `kind` (a row kind, '-D' for DELETE FROM) the rows are changes of that kind: the upsert sink writes a
    `-D` row as its key's tombstone.
    """
    from shell.sql.translate import to_spark_expression

    connector = _sink_connector(target)
    session = run.spark
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        raise CatalogError("every row of VALUES must have the same number of values")
    values = ", ".join("(" + ", ".join(to_spark_expression(v) for v in row) + ")" for row in rows)
    names = ", ".join(f"c{i}" for i in range(width))
    try:
        op = f", '{kind}' AS `{OP_COLUMN}`" if kind else ""
        frame = session.sql(f"SELECT *{op} FROM VALUES {values} AS v({names})")
        # One task writes the rows in their order, as Flink's VALUES source (parallelism 1) does: a key's versions
        # must reach its partition in the order they were written.
        batch = conform_to_target(frame.coalesce(1), target, columns)
        connector.write_batch(run.connector_context(session), resolved(target), batch, 0)
    except Exception as exc:  # noqa: BLE001
        raise from_spark(exc) from None
    return len(rows)


def accepts_changes(target: TableDef, connector) -> bool:  # noqa: ANN001 - a Connector
    """Whether a sink can take updates and deletes: an upsert table, a changelog format, print or blackhole."""
    from shell.planner.model import APPEND
    from shell.planner.planner import input_kind

    return input_kind(target, connector) != APPEND or connector.writes_upserts(target) or \
        connector.name in ("print", "blackhole")


def refuse_append_only_target(plan: Plan, target: TableDef, connector) -> None:  # noqa: ANN001
    if plan.output != APPEND_ONLY and not accepts_changes(target, connector):
        raise OptionError(
            f"INSERT INTO {target.name}: the query's result is updated as its input changes ({plan.reason}),"
            f" but '{connector.name}' table '{target.name}' is append-only",
            hint="write into an upsert table (upsert-kafka, upsert-pulsar with a PRIMARY KEY) or a changelog format"
            " (debezium-json)",
        )


def _sink_connector(target: TableDef):  # noqa: ANN202 - a Connector
    connector = connector_for(target)
    if not connector.is_sink:
        raise OptionError(
            f"table '{target.name}' uses connector '{connector.name}', which cannot be written to",
            hint="INSERT INTO a table whose connector is a sink (kafka, pulsar, filesystem, print, blackhole)",
        )
    return connector


def start_insert(
    run: RunContext, plan: Plan, target: TableDef, columns: list[str] | None, name: str, checkpoint: Path
) -> tuple["StreamingQuery", list[DeadLetterQuery]]:
    """Start an INSERT job: the plan's rows written to the target's sink, checkpointed under `checkpoint`.

    Returns the job's query and the side queries that keep its sources' bad records.
    """
    connector = _sink_connector(target)
    sink_table = resolved(target)
    parts = parts_for(plan)
    built = build_frame(run, plan)
    frame, write = parts.insert(built, target, columns, connector, sink_table, name)
    try:
        query = (
            frame.writeStream.foreachBatch(built.keeping_bad_records(write, owner=name))
            .outputMode(parts.output_mode)
            .queryName(name)
            .trigger(**trigger_for(plan, run.trigger_ms))
            .option("checkpointLocation", str(checkpoint))
            .start()
        )
        built.handle.set(query)
        return query, start_dead_letters(run, plan, built, owner=name)
    except Exception as exc:  # noqa: BLE001
        raise from_spark(exc) from None
