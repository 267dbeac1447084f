"""Running a plan as one Spark streaming query: a SELECT's micro-batches handed to a `ChangeStream` for display,
an INSERT's to the target connector's sink as a detached job.

Why it exists: both paths end the same way (a streaming query with a checkpoint, a trigger, the bad records kept
aside: engine/dead_letter_queries.py); what differs is chosen once, at the entry, by `parts_for(plan)`
(engine/path_parts.py). The other parts: what a run needs and gives (engine/run_context.py) and the sinks
(engine/sinks.py).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from shell.catalog.model import TableDef
from shell.connectors.registry import resolved
from shell.engine import bad_records, real_time, real_time_query, stage_cache
from shell.engine.bad_records import DeadLetterQuery
from shell.engine.dead_letter_queries import start_dead_letters, trigger_for
from shell.engine.path_parts import MAX_ROWS_SETTING, SHOWN_ROWS, parts_for, shown_note
from shell.engine.progress_reports import LAST_REPORTS
from shell.engine.run_context import Built, RunContext
from shell.engine.sinks import conform_to_target, sink_connector
from shell.engine.spark_errors import from_spark
from shell.planner.plan import Plan
from shell.results import INSERT, Change, ChangeStream, Progress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

__all__ = ["Built", "RunContext", "build_frame", "progress_of", "start_insert", "start_select"]


GLOBAL_WATERMARK_CHECK = "spark.sql.streaming.statefulOperator.checkCorrectness.enabled"


@contextmanager
def window_results_checked_by_us(spark: "SparkSession", plan: Plan) -> Iterator[None]:
    """Spark's check of stateful operators after a window aggregation, off while a changelog plan that reads window
    results starts (an aggregate over a window aggregation: the busiest window per user).

    The check refuses any stateful operator after an aggregation, since one that evicts by the watermark could drop
    the aggregation's rows as late. The operators after a window aggregation here evict nothing by time: the keyed
    stage of a join, aggregate or Top-N keeps its rows until they are retracted, and the aggregation after it groups
    by the window's columns, not its event time, so no row is dropped (the differential case
    window_results_aggregated checks it against Flink). It is set back at once: the check runs as the query starts."""
    changelog = plan.changelog
    if changelog is None or not changelog.reads_window_results:
        yield
        return
    before = spark.conf.get(GLOBAL_WATERMARK_CHECK, None)
    spark.conf.set(GLOBAL_WATERMARK_CHECK, "false")
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(GLOBAL_WATERMARK_CHECK)
        else:
            spark.conf.set(GLOBAL_WATERMARK_CHECK, before)


def build_frame(run: RunContext, plan: Plan, net: tuple[str, ...] = ()) -> Built:
    """The plan's query as a streaming DataFrame, over its sources (Spark's analysis errors become ours); `net`:
    the stage columns of an upsert sink's key the changelog path's stage may net its changes by."""
    session = run.spark
    for key, value in run.spark_conf.items():
        if session.conf.isModifiable(key):  # a static one (spark.eventLog.*) took effect when the Spark started
            session.conf.set(key, value)
    ctx = run.connector_context(session)
    try:
        return parts_for(plan).build(run, ctx, net)
    except Exception as exc:  # noqa: BLE001 - Spark's analysis errors become ours
        raise from_spark(exc) from None


def start_select(run: RunContext, plan: Plan) -> ChangeStream:
    """Start the query and return the stream of its result changes."""
    parts = parts_for(plan)
    if run.real_time and plan.sources:  # a query of no table (SELECT 1) is answered at once, as in any mode
        real_time.refuse(real_time.refusal(plan))
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

    if run.real_time:
        return _start_real_time_select(run, plan, built, stream)
    on_batch = parts.publisher(stream, cap)
    if built.per_batch is not None:
        frame, publish = built.per_batch.stream, on_batch
        owner = run.work_dir.name

        def on_batch(batch: "DataFrame", batch_id: int) -> None:
            built.per_batch.run(batch, batch_id, owner, lambda result: publish(result, batch_id), one_pass=True)

    checkpoint = run.work_dir / "checkpoint"
    try:
        with window_results_checked_by_us(run.spark, plan):
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


def _start_real_time_select(run: RunContext, plan: Plan, built: Built, stream: ChangeStream) -> ChangeStream:
    """A SELECT in real-time mode: its rows reach the driver as they are computed and are taken from there every
    POLL_S (real_time_query.DriverRows), at most `max_rows_per_batch` at a time."""
    checkpoint = run.work_dir / "checkpoint"
    cap = run.max_rows_per_batch
    real_time.refuse(real_time.refused_operators(built.frame))
    try:
        real_time.check_slots(run.spark, plan)
        rows = real_time_query.DriverRows(run.spark, built.frame, run.work_dir.name, str(checkpoint),
                                          real_time.batch_duration_ms(run.trigger_ms))  # fmt: skip
        side = start_dead_letters(run, plan, built, owner=run.work_dir.name)
    except Exception as exc:  # noqa: BLE001
        raise from_spark(exc) from None
    query = rows.query

    def take() -> None:
        shown, dropped = rows.take(cap)
        if shown and not stream.cancelled:
            note = None
            if dropped:
                note = (SHOWN_ROWS, f"showing {len(shown)} of {len(shown) + dropped} rows that arrived together"
                                    f" ({MAX_ROWS_SETTING} = {cap})")  # fmt: skip
            stream.publish([Change(INSERT, tuple(row)) for row in shown], note)

    def stop_all() -> None:
        for q in (query, *side):
            q.stop()

    stream.cancel_callback = stop_all
    stream.progress_callback = lambda: progress_of(query)
    threading.Thread(target=_watch, args=(query, side, stream),
                     kwargs={"tick": take, "every": real_time_query.POLL_S}, name="select-watch", daemon=True).start()
    return stream


WATCH_S = 1.0  # how often a SELECT's watcher looks at its dead-letter queries while the query runs


def _watch(query: "StreamingQuery", side: list[DeadLetterQuery], stream: ChangeStream, on_end=None,  # noqa: ANN001
           tick=None, every: float = WATCH_S) -> None:  # noqa: ANN001
    """Finish the stream when the query ends, after its bad records are written (they end with it). Meanwhile,
    a dead-letter query that fails is said on the stream (the SELECT goes on without it), and `tick` (a real-time
    SELECT's taking of its rows) runs every `every` seconds, and once more after the query ended, however it
    ended (the rows that reached the driver are shown). A tick that fails ends the query with its error."""
    error = None
    failed: set[int] = set()
    looked_at = 0.0

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
            if query.awaitTermination(every):
                break
        except Exception as exc:  # noqa: BLE001 - handed to the consumer as our error
            if not stream.cancelled:
                error = from_spark(exc)
            break
        if tick is not None:
            try:
                tick()
            except Exception as exc:  # noqa: BLE001 - the rows cannot be shown: the SELECT ends with the reason
                if not stream.cancelled:
                    error = from_spark(exc)
                query.stop()
                break
        if time.monotonic() - looked_at >= WATCH_S:
            looked_at = time.monotonic()
            look_at_side_queries()
    if tick is not None:
        try:
            tick()
        except Exception as exc:  # noqa: BLE001 - the first error is the one said
            error = error or from_spark(exc)
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
    return Progress.from_spark(LAST_REPORTS.latest(query))  # JSON of a report only when it is a new one


def start_insert(
    run: RunContext, plan: Plan, target: TableDef, columns: list[str] | None, name: str, checkpoint: Path
) -> tuple["StreamingQuery", list[DeadLetterQuery]]:
    """Start an INSERT job: the plan's rows written to the target's sink, checkpointed under `checkpoint`.

    Returns the job's query and the side queries that keep its sources' bad records.
    """
    connector = sink_connector(target)
    sink_table = resolved(target)
    parts = parts_for(plan)
    if run.real_time:
        real_time.refuse(real_time.refusal(plan, target))
        built = build_frame(run, plan)
        real_time.refuse(real_time.refused_operators(built.frame))
        try:
            real_time.check_slots(run.spark, plan)
            frame = conform_to_target(built.frame, target, columns)
            query = real_time_query.start_insert(frame, sink_table, connector, name, str(checkpoint),
                                                 real_time.batch_duration_ms(run.trigger_ms))  # fmt: skip
            return query, start_dead_letters(run, plan, built, owner=name)
        except Exception as exc:  # noqa: BLE001
            raise from_spark(exc) from None
    net = parts.sink_net(target, columns, connector) if run.net_changes else ()
    built = build_frame(run, plan, net)
    frame, write = parts.insert(built, target, columns, connector, sink_table, name)
    try:
        with window_results_checked_by_us(run.spark, plan):
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
