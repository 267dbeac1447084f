"""Spark's real-time mode ('execution.latency' = 'low'): which queries it takes, and what it needs to run them.

Why it exists: a micro-batch pays a fixed cost (planning, offsets, commit: ~0.1-0.5 s here) before its first row
is written, so a filter from one topic into another answers in ~0.3 s at best. Spark 4.1's real-time mode runs
long-running batches instead (each one a checkpoint, `execution.checkpointing.interval`, at least Spark's 5 s) in
which every task reads its Kafka partition, computes and writes each row at once. It takes only part of what the
engine runs: in Spark 4.2, queries over Kafka that filter, project and union, into Kafka or into the driver, with
one task slot held per partition for the query's life. This module says, before anything starts, whether a query
is one of those (`refusal` from the plan, `refused_operators` from Spark's plan of it) and whether it would get
its slots (`check_slots`); engine/real_time_query.py starts it.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors import kafka_transactional
from shell.connectors.registry import connector_for, resolved
from shell.errors import UnsupportedFeatureError
from shell.planner.plan import Plan

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SETTING = "execution.latency"
LOW = "low"
NORMAL = "normal"
MIN_BATCH_MS = 5_000  # spark.sql.streaming.realTimeMode.minBatchDuration's default: Spark refuses shorter batches
SOURCES = ("kafka",)
SINKS = ("kafka", "upsert-kafka")
LOCAL_THREADS = 16  # a local job's task threads in real-time mode: one per partition it reads, held for its life
HINT = f"SET '{SETTING}' = '{NORMAL}' runs it in micro-batches"
# what Spark's optimized plan of a query holds that real-time mode cannot run (Spark 4.2), said as a user wrote it
REFUSED_OPERATORS = (
    (re.compile(r"^\W*Aggregate\b", re.M), "it aggregates (GROUP BY, a window aggregation or DISTINCT)"),
    (re.compile(r"^\W*Join\b", re.M), "it joins"),
    (re.compile(r"^\W*Deduplicate", re.M), "it removes duplicates"),
    (re.compile(r"^\W*Window\b", re.M), "it computes an OVER window"),
    (re.compile(r"^\W*(Sort|GlobalLimit|LocalLimit|Tail)\b", re.M), "it sorts or limits its rows"),
    (re.compile(r"^\W*(BatchEvalPython|ArrowEvalPython|MapInPandas|MapInArrow|PythonUDTF)", re.M),
     "it calls a Python function"),
    (re.compile(r"^\W*(FlatMapGroupsWithState|TransformWithState|FlatMapGroupsInPandas)", re.M), "it keeps state"),
)  # fmt: skip


def batch_duration_ms(trigger_ms: int) -> int:
    """A real-time batch's length: the checkpoint interval, at least Spark's minimum (rows are written as they
    come whatever it is; it says how often the offsets are checkpointed)."""
    return max(trigger_ms, MIN_BATCH_MS)


def refusal(plan: Plan, target: TableDef | None = None) -> str | None:
    """Why real-time mode cannot run the plan (into `target`, or a SELECT's view) as planned, or None; what
    Spark's own plan of it holds is looked at once it is built (`refused_operators`)."""
    if plan.bounded:
        return "the query reads to an end ('scan.bounded.mode'); real-time mode runs unbounded queries"
    for table in plan.sources:
        source = resolved(table)
        name = connector_for(source).name
        if name not in SOURCES:
            return (f"table '{source.name}' uses connector '{name}'; real-time mode reads Kafka topics "
                    "('connector' = 'kafka')")  # fmt: skip
        if "source.max-messages-per-trigger" in source.options:
            return f"table '{source.name}' sets 'source.max-messages-per-trigger', which only micro-batches have"
    if plan.lookups:
        return "it joins a lookup table, which is read again for each micro-batch"
    if plan.changelog is not None:
        return ("it keeps state (an aggregation, a join, Top-N, OVER, or a table of changes such as upsert-kafka), "
                "which Spark 4.2's real-time mode does not")  # fmt: skip
    if plan.first_rows or plan.processing_time:
        return "it keeps state (a deduplication or a processing-time window)"
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


def refused_operators(frame: "DataFrame") -> str | None:
    """Why Spark's real-time mode cannot run the built query (an operator of its optimized plan), or None. The
    optimizer is run on the analyzed plan itself: a streaming query's own optimizedPlan refuses to be asked
    outside writeStream.start(), and the Python functions are only told apart once optimized (ArrowEvalPython)."""
    jdf = frame._jdf  # noqa: SLF001
    tree = jdf.sparkSession().sessionState().optimizer().execute(jdf.queryExecution().analyzed()).treeString()
    return next((reason for pattern, reason in REFUSED_OPERATORS if pattern.search(tree)), None)


def refuse(reason: str | None) -> None:
    """Raise the refusal `reason` (of `refusal` or `refused_operators`), if any."""
    if reason is not None:
        raise UnsupportedFeatureError(f"real-time mode ('{SETTING}' = '{LOW}'): {reason}", hint=HINT)


def partitions(spark: "SparkSession", table: TableDef) -> int:
    """How many partitions the Kafka table's topics have, as the broker says (a consumer of Spark's own Kafka
    client asks for the topics' metadata; it reads no record)."""
    table = resolved(table)
    connector = connector_for(table)
    jvm = spark._jvm  # noqa: SLF001
    props = jvm.java.util.Properties()
    for key, value in connector.client_options(table).items():
        props.setProperty(key[len("kafka."):], value)
    for key in ("key.deserializer", "value.deserializer"):
        props.setProperty(key, "org.apache.kafka.common.serialization.ByteArrayDeserializer")
    consumer = jvm.org.apache.kafka.clients.consumer.KafkaConsumer(props)
    try:
        topics = connector.range_topics(table)  # the named topics; None for a 'topic-pattern'
        if topics is not None:
            return sum(len(consumer.partitionsFor(t) or []) for t in topics)
        pattern = re.compile(table.options["topic-pattern"])
        listed = consumer.listTopics()
        return sum(listed.get(t).size() for t in listed.keySet() if pattern.fullmatch(t))
    finally:
        consumer.close()


def check_slots(spark: "SparkSession", plan: Plan) -> None:
    """Refuse a query that would not get a task slot for every partition it reads: Spark would run it, but the
    rows of a partition without a slot would wait for the batch's end (seconds). Its dead-letter query takes
    slots between two batches, when the long-running tasks hand theirs back."""
    needed = sum(partitions(spark, table) for table in plan.sources)
    slots = int(spark.sparkContext.defaultParallelism)  # local[N]: N; a cluster: its executors' cores
    master = spark.sparkContext.master
    if needed > slots:
        more = f"streamshell --master local[{needed}]" if master.startswith("local") else "more executor cores"
        raise UnsupportedFeatureError(
            f"real-time mode ('{SETTING}' = '{LOW}') holds a task slot per partition for the query's life: "
            f"it reads {needed} partitions, and Spark ({master}) has {slots} slots",
            hint=f"give Spark more ({more}), or {HINT}",
        )


LOCAL_MASTER = re.compile(r"local(?:\[(\*|\d+)(,\d+)?\])?")


def local_master(master: str, settings: dict[str, str]) -> str:
    """The master of a job's own Spark: a local one (`local`, `local[N]`, `local[*]`, with its retries kept) in
    real-time mode gets at least LOCAL_THREADS task threads, one per partition it may read (they wait on the
    broker, they do not compete for the cores)."""
    match = LOCAL_MASTER.fullmatch(master)
    if settings.get(SETTING) != LOW or match is None:
        return master
    given = match.group(1)
    threads = 1 if given is None else (os.cpu_count() or 1) if given == "*" else int(given)
    return f"local[{max(threads, LOCAL_THREADS)}{match.group(2) or ''}]"
