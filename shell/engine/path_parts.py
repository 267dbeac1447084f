"""The two paths' parts of running a plan: what differs between Spark's own operators (the native path, rows
appended) and the keyed stages (the changelog path, weighted rows turned into Flink's changes).

Why it exists: a plan runs as one streaming query either way (engine/query.py); what it builds, which columns it
shows, how a micro-batch reaches a SELECT's stream and how an INSERT writes it are chosen once, by
`parts_for(plan)`, and each path keeps its answers together in one class here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors.base import ConnectorContext, Lookup, SourceFrame
from shell.engine import bad_records, changelog, stage_cache, state_layout
from shell.engine.batch_dead_letters import sort_sources
from shell.engine.first_rows import first_rows_view
from shell.engine.processing_time import processing_time_input
from shell.engine.run_context import Built, RunContext
from shell.engine.shown_groups import ShownGroups
from shell.engine.sinks import conform_to_target, filled_columns, refuse_append_only_target
from shell.engine.sources import decoded, finished, open_lookup, open_table
from shell.formats.base import OP_COLUMN
from shell.planner.model import UPSERTS
from shell.planner.plan import CHANGELOG, Plan
from shell.planner.stages import KeyedJoin
from shell.results import DELETE, INSERT, Change, ChangeStream

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Observation


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


class NativeParts:
    """The native path's parts: the plan's Spark SQL over its sources, every row appended."""

    output_mode = "append"

    def __init__(self, plan: Plan):
        self.plan = plan

    def sink_net(self, target: TableDef, columns: list[str] | None, connector) -> tuple[str, ...]:  # noqa: ANN001
        """Nothing to net: the native path's rows are appended."""
        return ()

    def build(self, run: RunContext, ctx: ConnectorContext, net: tuple[str, ...] = ()) -> Built:
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
            for first in plan.first_rows:  # each key's first row by time: the views below may read them
                first_rows_view(session, first).createOrReplaceTempView(first.view)
                registered.append(first.view)
            for name, sql in plan.views:
                session.sql(sql).createOrReplaceTempView(name)
                registered.append(name)
            for window_input in plan.processing_time:
                rows = processing_time_input(session, session.table(window_input.relation), window_input.column)
                rows.createOrReplaceTempView(window_input.view)
                registered.append(window_input.view)
            frame = session.sql(plan.spark_sql)
            frame.schema  # noqa: B018 - analyze now, while the views exist
            if plan.stateless and not run.real_time and any(source.dead_letters is not None for _, source in opened):
                (table,) = plan.sources
                stream, bounded = decoded(ctx, table)
                view = plan.source_views[table.name.lower()]
                return Built(frame, ctx, [], PerBatch(stream, table, bounded, view, plan.spark_sql, ctx))
            counted, dead_letters = sort_sources(opened, in_batches=not run.real_time)
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

    def build(self, run: RunContext, ctx: ConnectorContext, net: tuple[str, ...] = ()) -> Built:
        """The stages and the rest of the query; `net` (`sink_net`): the stage columns of the upsert sink's key,
        by which the JVM's keyed join nets its changes."""
        loaded = run.jvm_stages and state_layout.jvm_stages_loaded(run.spark)
        built_before = (ctx.work_dir / state_layout.OPERATORS_FILE).is_file()  # a run of this job kept its stages
        jvm = state_layout.kept_jvm_stages(ctx.work_dir, run.jvm_stages, loaded)  # first: it reads if a layout was kept
        layout = state_layout.kept_layout(ctx.work_dir, run.layout)
        scope = stage_cache.scope_of(ctx.work_dir) if run.local_copies else None
        ttl = state_layout.kept_state_ttl(ctx.work_dir, run.state_ttl_ms, built_before) if self.result.joins_keyed else 0
        runtime = changelog.StageRuntime(layout, scope, jvm, net, ttl)
        frame, opened, netted = changelog.build(run.spark, ctx, self.result, runtime)
        counted, dead_letters = sort_sources(opened)
        return Built(frame, ctx, dead_letters, counted=counted, netted=netted)

    def sink_net(self, target: TableDef, columns: list[str] | None, connector) -> tuple[str, ...]:  # noqa: ANN001
        """The stage columns of an upsert sink's primary key, when the stage may net its changes by them: the result
        is a keyed join's rows passed on column for column (no filter after the stage, which could drop a key's new
        row and keep its old one), every sink key column is one of them, and a value of them is one joined row in
        one key of the stage (`_one_row_per`). Else ()."""
        result = self.result
        passed = result.passed_through
        if passed is None or not isinstance(result.stage, KeyedJoin) or not target.primary_key \
                or not connector.writes_in_one_pass or not _upserts_to(target, connector):
            return ()
        filled = filled_columns(target, columns)
        if len(filled) != len(passed):
            return ()
        by_sink = {f.name.lower(): stage for f, (_, stage) in zip(filled, passed)}
        net = tuple(by_sink.get(k.lower()) for k in target.primary_key)
        if None in net or not _one_row_per(net, result.inputs):
            return ()
        return net

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

        refuse_append_only_target(self.plan, target, connector)
        shown_columns = changelog.output_columns(built.frame)
        shown = built.frame.select(*(f"`{c}`" for c in shown_columns))
        conform_to_target(shown, target, columns)  # the columns fit, or the INSERT fails now
        upsert = _upserts_to(target, connector)
        if built.netted or (upsert and connector.writes_in_one_pass
                            and self._one_row_per_sink_key(shown_columns, target, columns)):
            # Each group's row (or, netted by the stage, each sink key's change) once per micro-batch, keyed as the
            # sink is: the changes are made in the streaming plan itself, and a batch goes to the sink as it is (no
            # DataFrames built per batch, no cache).
            rows = conform_to_target(changelog.changes(built.frame, self.result), target, columns)
            return rows, lambda batch, batch_id: connector.write_batch(built.ctx, sink_table, batch, batch_id)

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

    def _one_row_per_sink_key(self, shown: list[str], target: TableDef, columns: list[str] | None) -> bool:
        """Whether a micro-batch of the result already holds at most one row per key of the sink: the result is
        Spark's update-mode aggregation (one row per touched group and batch) and the sink's primary key is its
        GROUP BY key, column for column."""
        key = self.result.key
        if self.result.output != UPSERTS or not key or not target.primary_key:
            return False
        filled = filled_columns(target, columns)
        if len(filled) != len(shown) or any(k not in shown for k in key):
            return False
        sink_key = {filled[shown.index(k)].name.lower() for k in key}
        return sink_key == {k.lower() for k in target.primary_key}


def _upserts_to(target: TableDef, connector) -> bool:  # noqa: ANN001 - a Connector
    """Whether the sink keeps one row per key (an upsert table), taking a change as the key's row or its deletion."""
    from shell.planner.model import UPSERT_INPUT
    from shell.planner.planner import input_kind

    return input_kind(target, connector) == UPSERT_INPUT or connector.writes_upserts(target)


def _one_row_per(net: tuple[str, ...], inputs: list) -> bool:  # noqa: ANN001 - StageInputs
    """Whether a value of the stage columns `net` is at most one joined row, all of whose changes are in one key
    of the stage: every joined input is an upsert table, the first one's primary key is among them, each other
    one is joined on its primary key, and no RIGHT or FULL join can leave the first one's row out. No BYTES among
    them (the stage would compare their values by reference)."""
    from shell.planner.model import UPSERT_INPUT

    joined = [i for i in inputs if i.shown]
    first = inputs[0]
    if any(i.kind != UPSERT_INPUT or i.join in ("right", "full") for i in joined):
        return False
    if not {first.stage_column(k) for k in first.table.primary_key} <= set(net):
        return False
    if any({k.lower() for k in i.key} != {k.lower() for k in i.table.primary_key} for i in joined[1:]):
        return False
    types = {i.stage_column(c.name): (c.data_type or "").upper() for i in joined for c in i.table.columns}
    return not any(types.get(c, "").startswith(("BYTES", "BINARY", "VARBINARY")) for c in net)


def parts_for(plan: Plan) -> NativeParts | ChangelogParts:
    """What running `plan` takes that depends on its path: chosen here, once."""
    return ChangelogParts(plan) if plan.path == CHANGELOG else NativeParts(plan)
