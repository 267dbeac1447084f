"""Spark's real-time mode ('execution.latency' = 'low'): a stateless query over a Kafka topic, each row read,
computed and written as it arrives, in milliseconds instead of a micro-batch's tenths of a second.

Why it exists: a micro-batch pays a fixed cost (planning, offsets, commit: ~0.1-0.5 s here) before its first row
is written, so a filter from one topic into another answers in ~0.4 s at best. Spark 4.1's real-time mode runs
long-running batches instead (each one a checkpoint, `execution.checkpointing.interval`, at least Spark's 5 s) in
which every task reads its Kafka partition, computes and writes each row at once. It takes only part of what the
engine runs: in Spark 4.2 a query over Kafka that filters and projects, into Kafka or into the driver, with one
task slot held per partition for the query's life. Which queries it takes is decided here, before anything
starts (`refusal`, `check_slots`), and starting them too: an INSERT into a Kafka topic (`start_insert`), a
SELECT whose rows the shell takes from the driver as they arrive (`start_select`, through
jvm/stages RealTimeResults: why there).

The records that do not decode are kept by the job's dead-letter query beside it (engine/dead_letter_queries.py),
in micro-batches: a real-time query has no per-batch function in which to keep them itself.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors import kafka_transactional
from shell.connectors.registry import connector_for, resolved
from shell.errors import UnsupportedFeatureError
from shell.planner.plan import Plan

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

SETTING = "execution.latency"
LOW = "low"
NORMAL = "normal"
MIN_BATCH_MS = 5_000  # spark.sql.streaming.realTimeMode.minBatchDuration's default: Spark refuses shorter batches
SOURCES = ("kafka",)
SINKS = ("kafka", "upsert-kafka")
LOCAL_THREADS = 16  # a local job's task threads in real-time mode: one per partition it reads, held for its life
POLL_S = 0.02  # how often a SELECT takes the rows that arrived at the driver
HINT = f"SET '{SETTING}' = '{NORMAL}' runs it in micro-batches"


def batch_duration_ms(trigger_ms: int) -> int:
    """A real-time batch's length: the checkpoint interval, at least Spark's minimum (rows are written as they
    come whatever it is; it says how often the offsets are checkpointed)."""
    return max(trigger_ms, MIN_BATCH_MS)


def refusal(plan: Plan, target: TableDef | None = None) -> str | None:
    """Why real-time mode cannot run the plan (into `target`, or a SELECT's view), or None when it can."""
    if plan.bounded:
        return "the query reads to an end ('scan.bounded.mode'); real-time mode runs unbounded queries"
    if plan.changelog is not None or not plan.stateless or len(plan.sources) != 1:
        return ("real-time mode runs a query over one table that filters and projects its rows (Spark 4.2's "
                "real-time mode keeps no state): this one aggregates, joins, windows, deduplicates or reads more "
                "than one table")  # fmt: skip
    source = resolved(plan.sources[0])
    name = connector_for(source).name
    if name not in SOURCES:
        return (f"table '{source.name}' uses connector '{name}'; real-time mode reads Kafka topics "
                "('connector' = 'kafka')")  # fmt: skip
    if "source.max-messages-per-trigger" in source.options:
        return f"table '{source.name}' sets 'source.max-messages-per-trigger', which only micro-batches have"
    if target is None:
        return None
    sink = resolved(target)
    name = connector_for(sink).name
    if name not in SINKS:
        return (f"table '{target.name}' uses connector '{name}'; real-time mode writes Kafka topics "
                f"({', '.join(repr(s) for s in SINKS)}) or shows a SELECT's rows")  # fmt: skip
    if "topic" not in sink.options or ";" in sink.options["topic"]:
        return f"table '{target.name}' can only be written with a single 'topic'"
    if kafka_transactional.is_exactly_once(sink):
        return (f"table '{target.name}' writes exactly once, in a transaction per micro-batch; real-time mode "
                "writes each row as it comes (at least once)")  # fmt: skip
    return None


def refuse(plan: Plan, target: TableDef | None = None) -> None:
    """Raise the refusal, if any."""
    reason = refusal(plan, target)
    if reason is not None:
        raise UnsupportedFeatureError(f"real-time mode ('{SETTING}' = '{LOW}'): {reason}", hint=HINT)


def partitions(spark: "SparkSession", table: TableDef) -> int:
    """How many partitions the Kafka table's topics have now (a batch read's partitions: one per topic
    partition; planning it asks the broker for offsets, it reads no record)."""
    connector = connector_for(resolved(table))
    options = connector.client_options(resolved(table))
    if "topic" in table.options:
        options["subscribe"] = ",".join(t.strip() for t in table.options["topic"].split(";") if t.strip())
    else:
        options["subscribePattern"] = table.options["topic-pattern"]
    frame = spark.read.format("kafka").options(**options, startingOffsets="earliest", endingOffsets="latest").load()
    return int(frame._jdf.rdd().getNumPartitions())  # noqa: SLF001 - no Python RDD needed to count


def check_slots(spark: "SparkSession", plan: Plan) -> None:
    """Refuse a query that would not get a task slot for every partition it reads: Spark would run it, but the
    rows of a partition without a slot would wait for the batch's end (seconds)."""
    table = plan.sources[0]
    needed = partitions(spark, table)
    slots = int(spark.sparkContext.defaultParallelism)
    master = spark.sparkContext.master
    if needed > slots:
        raise UnsupportedFeatureError(
            f"real-time mode ('{SETTING}' = '{LOW}') holds a task slot per partition for the query's life: "
            f"table '{table.name}' has {needed} partitions, and Spark ({master}) has {slots} slots",
            hint=f"start Spark with more, e.g. streamshell --master local[{needed + 1}], or {HINT}",
        )


def local_master(master: str, settings: dict[str, str]) -> str:
    """The master of a job's own Spark: a local one in real-time mode gets a thread per partition it may read
    (LOCAL_THREADS; they wait on the broker, they do not compete for the cores)."""
    if settings.get(SETTING) != LOW or not master.startswith("local"):
        return master
    inside = master[len("local["):-1] if master.startswith("local[") else "1"
    threads = inside.split(",")[0]
    if threads == "*" or not threads.isdigit() or int(threads) < LOCAL_THREADS:
        import os

        count = max(os.cpu_count() or 1, int(threads) if threads.isdigit() else 0, LOCAL_THREADS)
        return f"local[{count}]"
    return master


def start_insert(frame, sink_table: TableDef, connector, name: str, checkpoint: str, batch_ms: int) -> "StreamingQuery":  # noqa: ANN001
    """The INSERT's rows (`frame`, fitted to the target) written to its topic as they arrive."""
    connector.require_broker(sink_table)
    return (
        connector.records(sink_table, frame).writeStream.format("kafka")
        .options(**connector.client_options(sink_table))
        .option("topic", sink_table.options["topic"])
        .outputMode("update")
        .queryName(name)
        .trigger(realTime=f"{batch_ms} milliseconds")
        .option("checkpointLocation", checkpoint)
        .start()
    )


class DriverRows:
    """A SELECT's rows in real-time mode: the query (started into the driver by jvm/stages RealTimeResults) and
    `take`, which hands the rows that arrived since the last call to `publish`."""

    def __init__(self, spark: "SparkSession", frame, name: str, checkpoint: str, batch_ms: int) -> None:  # noqa: ANN001
        from pyspark.sql.streaming import StreamingQuery

        self.spark = spark
        results = spark._jvm.dev.streamshell.realtime.RealTimeResults  # noqa: SLF001
        self._results = results.start(frame._jdf, name, checkpoint, f"{batch_ms} milliseconds")  # noqa: SLF001
        self.query = StreamingQuery(self._results.query())
        self._lock = threading.Lock()

    def take(self, max_rows: int) -> tuple[list, int]:
        """The rows that arrived (at most `max_rows`, as Python rows) and how many more were dropped."""
        from pyspark.sql import DataFrame

        with self._lock:
            taken = self._results.take(max_rows)
            if taken is None:
                return [], 0
            dropped = int(self._results.dropped())
        return DataFrame(taken, self.spark).collect(), dropped  # a local relation: no task, no slot needed
