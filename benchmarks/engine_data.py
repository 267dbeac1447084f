"""Input data, Kafka bookkeeping and result checks for the engine benchmark (benchmarks/engine.py).

Why it exists: the benchmark needs millions of keyed changes in Kafka quickly and in a known order, and a way to
tell that an engine's sink holds the right result. kafka-python sends ~24K messages/s (docs/benchmarks.md), so
the bulk data is written by Spark's Kafka batch writer in a process of its own (a Spark JVM that ends when the
data is written), from deterministic Spark SQL expressions:

* user count: the preload inserts users `u0..u{K-1}` into 10K accounts `a*`; each change `v` then picks a user
  (a hash of `v`) and either deletes it (a tombstone, 1 change in 10) or moves it to an account (a hash of `v`);
* three-way join: the preload inserts every user, a favourite colour and a favourite cheese per user (3
  messages per user); each change picks one of the three topics and a user, then deletes or updates that row;
* orders per account: the preload inserts users `u0..u{K-1}` as the user count does and orders `o0..o{K-1}`,
  each of a user (a hash of `v`) with an amount; each change picks the users or the orders topic (half and half)
  and a key, then deletes it (1 in 10) or updates it: a user moves to another account, an order gets another
  user and amount (a deleted order or user comes back when a later change updates it);
* orders (the append and window queries): `id`, `price`, `qty` and an event time `ts` 1 ms apart.

Two Spark tasks write a phase, each its own contiguous range of `v` in order, and a change of task `p` only
picks keys `u{2n + p}` (or `o{2n + p}`): so all changes of a key are sent by one task in the order of `v`, with
no shuffle.
Kafka's default partitioner puts a key in one partition (2 per topic), so a key's changes are in Kafka in the
order of `v`. The latency phase's messages come from kafka-python, whose default
partitioner is the same murmur2 hash.

    .venv/bin/python -m benchmarks.engine_data produce --pipeline count|join|orders --phase preload|changes ...
    .venv/bin/python -m benchmarks.engine_data orders --topic T --rows N
    .venv/bin/python -m benchmarks.engine_data verify --pipeline count|join|orders --inputs T1,T2,T3 --sink S

Each prints one JSON object on stdout. `verify` recomputes the pipeline's result from the latest message per key
of the input topics and compares it with the latest message per key of the sink (tombstones delete). Up to 50,000
messages, a phase is written and a sink checked without a Spark, by the same rules
(benchmarks/engine_data_python.py): the small runs that `make test` executes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import engine_data_python as python

KAFKA = os.environ.get("STREAMSHELL_KAFKA_BOOTSTRAP", "127.0.0.1:9092")
PARTITIONS = 2
TASKS = 2  # Spark tasks that write a phase's rows
COLORS = ("red", "green", "blue", "yellow", "purple", "orange", "black", "white", "pink", "grey", "brown", "teal")
CHEESES = ("brie", "cheddar", "gouda", "comte", "feta", "stilton", "edam", "emmental", "gruyere", "manchego",
           "roquefort", "parmesan")  # fmt: skip
PIPELINES = ("count", "join", "orders")
KEY_PREFIXES = {"count": ("u",), "join": ("u", "u", "u"), "orders": ("u", "o")}  # per input topic: u users, o orders


# ---- Kafka bookkeeping (kafka-python, no Spark) ----------------------------------------------------------------


def create_topics(names: list[str], partitions: int = PARTITIONS) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=KAFKA)
    try:
        admin.create_topics([NewTopic(n, num_partitions=partitions, replication_factor=1) for n in names])
    finally:
        admin.close()


def delete_topics(names: list[str]) -> None:
    from kafka.admin import KafkaAdminClient

    try:
        admin = KafkaAdminClient(bootstrap_servers=KAFKA)
        try:
            admin.delete_topics(names)
        finally:
            admin.close()
    except Exception:  # noqa: BLE001 - best effort: left-over topics only take disk
        pass


def end_offsets(topics: list[str]) -> dict[tuple[str, int], int]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=KAFKA)
    try:
        parts = [TopicPartition(t, p) for t in topics for p in sorted(consumer.partitions_for_topic(t) or ())]
        return {(tp.topic, tp.partition): o for tp, o in consumer.end_offsets(parts).items()}
    finally:
        consumer.close()


def record_timestamps(offsets: dict[tuple[str, int], int]) -> list[float]:
    """The Kafka timestamps (epoch s) of the records at the given (topic, partition) -> offset positions."""
    from kafka import KafkaConsumer, TopicPartition

    wanted = {TopicPartition(t, p): o for (t, p), o in offsets.items() if o >= 0}
    if not wanted:
        return []
    consumer = KafkaConsumer(bootstrap_servers=KAFKA, enable_auto_commit=False, max_poll_records=1,
                             fetch_max_bytes=1024 * 1024)  # fmt: skip
    try:
        consumer.assign(list(wanted))
        for tp, offset in wanted.items():
            consumer.seek(tp, offset)
        found: dict[TopicPartition, float] = {}
        deadline = time.monotonic() + 30
        while len(found) < len(wanted) and time.monotonic() < deadline:
            for tp, records in consumer.poll(timeout_ms=500).items():
                if records and tp not in found:
                    found[tp] = records[0].timestamp / 1000
                    consumer.pause(tp)
        return list(found.values())
    finally:
        consumer.close()


def last_write(topics: list[str]) -> float | None:
    """When the last record of these topics was written (its Kafka timestamp), or None if they are empty."""
    stamps = record_timestamps({tp: end - 1 for tp, end in end_offsets(topics).items() if end > 0})
    return max(stamps) if stamps else None


def first_after(before: dict[tuple[str, int], int]) -> float | None:
    """The timestamp of the first record written after the `before` end offsets (the earliest over partitions)."""
    now = end_offsets(sorted({t for t, _ in before}))
    stamps = record_timestamps({tp: o for tp, o in before.items() if now.get(tp, 0) > o})
    return min(stamps) if stamps else None


def stored(topics: list[str]) -> int:
    return sum(end_offsets(topics).values())


# ---- generating the input (Spark) ------------------------------------------------------------------------------


def spark_session():
    from shell.engine.spark import SparkRuntime

    log = Path(tempfile.mkdtemp(prefix="bench-engine-data-")) / "spark.log"
    runtime = SparkRuntime("local[*]", {}, log, app_name="bench-engine-data")
    return runtime.get()


def change_rows(spark, pipeline: str, phase: str, keys: int, changes: int, accounts: int, topics: list[str]):
    """(v, topic, key, value) of one phase, value NULL for a tombstone, as a Spark DataFrame."""
    from pyspark.sql import functions as F

    if phase == "preload":
        rows = spark.range(0, keys, 1, TASKS).withColumnRenamed("id", "v").withColumn("n", F.col("v"))
        rows = rows.withColumn("gone", F.lit(False))
        rows = rows.withColumn("t", F.explode(F.array(*(F.lit(i) for i in range(len(topics))))))
    else:
        # Task p of the write only touches keys numbered TASKS * m + p: each key's changes come from one task, in order.
        rows = spark.range(keys, keys + changes, 1, TASKS).withColumnRenamed("id", "v")
        rows = rows.withColumn("n", F.expr(f"{TASKS} * pmod(xxhash64(v, 12), {keys // TASKS}) + spark_partition_id()"))
        rows = rows.withColumn("gone", F.expr("pmod(xxhash64(v, 13), 10) = 0"))
        rows = rows.withColumn("t", F.expr(f"CAST(pmod(xxhash64(v, 15), {len(topics)}) AS INT)"))
    prefixes = ", ".join(f"'{c}'" for c in KEY_PREFIXES[pipeline])
    rows = rows.withColumn("key", F.expr(f"concat(element_at(array({prefixes}), t + 1), n)"))
    colors = ", ".join(f"'{c}'" for c in COLORS)
    cheeses = ", ".join(f"'{c}'" for c in CHEESES)
    user = (f"to_json(named_struct('uid', key, 'accountId', concat('a', pmod(xxhash64(v, 14), {accounts})), "
            "'fullName', concat('name-', v)))")  # fmt: skip
    color = f"to_json(named_struct('userUid', key, 'favoriteColor', element_at(array({colors}), CAST(pmod(xxhash64(v, 16), 12) + 1 AS INT))))"
    cheese = f"to_json(named_struct('userUid', key, 'favoriteCheese', element_at(array({cheeses}), CAST(pmod(xxhash64(v, 17), 12) + 1 AS INT))))"
    order = (f"to_json(named_struct('oid', key, 'uid', concat('u', pmod(xxhash64(v, 18), {keys})), "
             "'amount', CAST(pmod(xxhash64(v, 19), 1000) AS INT)))")  # fmt: skip
    value = {"count": [user], "join": [user, color, cheese], "orders": [user, order]}[pipeline]
    choice = "CASE t " + " ".join(f"WHEN {i} THEN {e}" for i, e in enumerate(value)) + " END"
    names = "array(" + ", ".join(f"'{t}'" for t in topics) + ")"
    return rows.select(
        "v", F.expr(f"element_at({names}, t + 1)").alias("topic"), "key",
        F.expr(f"IF(gone, CAST(NULL AS STRING), {choice})").alias("value"),
    )  # fmt: skip


def write_ordered(frame) -> None:
    """Write (topic, key, value) rows as generated: each task sends its rows in `v` order, no shuffle."""
    (
        frame.select("topic", "key", "value").write.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("kafka.linger.ms", "20")
        .option("kafka.batch.size", str(512 * 1024)).save()
    )  # fmt: skip


def produce(args) -> dict:
    topics = args.topics.split(",")
    rows = args.keys * len(topics) if args.phase == "preload" else args.changes
    if rows <= python.SMALL:
        return python.produce(args, KAFKA, TASKS)
    spark = spark_session()
    frame = change_rows(spark, args.pipeline, args.phase, args.keys, args.changes, args.accounts, topics)
    started = time.time()
    write_ordered(frame)
    return {"writing": started, "done": time.time(), "rows": rows}


def order_frame(spark, rows: int):
    """`rows` JSON orders as (key, value): id, price, qty 0..9, ts 1 ms apart from 2026-01-01 (Flink's 'SQL' text)."""
    return spark.range(rows).selectExpr(
        "CAST(id AS STRING) AS key",
        "to_json(named_struct('id', id, 'price', round((id % 1000) / 10.0 + 1, 2), "
        "'qty', CAST(pmod(xxhash64(id), 10) AS INT), "
        "'ts', date_format(TIMESTAMP '2026-01-01 00:00:00' + make_dt_interval(0, 0, 0, id / 1000.0), "
        "'yyyy-MM-dd HH:mm:ss.SSS'))) AS value",
    )


def orders(args) -> dict:
    if args.rows <= python.SMALL:
        return python.orders(args, KAFKA)
    frame = order_frame(spark_session(), args.rows)
    started = time.time()
    frame.write.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("topic", args.topic).save()
    return {"writing": started, "done": time.time(), "rows": args.rows}


# ---- checking a sink -------------------------------------------------------------------------------------------


def raw_values(spark, topic: str):
    """Every message of a topic: (key, value, offset), as Kafka holds them."""
    raw = (
        spark.read.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("subscribe", topic)
        .option("startingOffsets", "earliest").option("endingOffsets", "latest").load()
    )  # fmt: skip
    return raw.selectExpr("CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value", "offset")


def latest(spark, topic: str):
    """The latest value per key of a topic (NULL: deleted), as (key STRING, value STRING)."""
    raw = (
        spark.read.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("subscribe", topic)
        .option("startingOffsets", "earliest").option("endingOffsets", "latest").load()
    )  # fmt: skip
    return raw.selectExpr("CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value", "offset").groupBy("key").agg(
        {"offset": "max"}
    ).withColumnRenamed("max(offset)", "offset").join(
        raw.selectExpr("CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value", "offset"), ["key", "offset"]
    ).select("key", "value")


def present(spark, topic: str, field: str, name: str):
    """(k, `name`) of the rows a topic holds at its end (latest message per key, deletes gone): `field` of the JSON."""
    return latest(spark, topic).where("value IS NOT NULL").selectExpr(
        "key AS k", f"get_json_object(value, '$.{field}') AS {name}")


def per_account(rows):
    """(k, x): the number of `rows` per accountId, as the sink's JSON gives it."""
    return rows.groupBy("accountId").count().selectExpr("accountId AS k", "CAST(count AS STRING) AS x")


def verify(args) -> dict:
    if not args.spark and stored([*args.inputs.split(","), args.sink]) <= python.SMALL:
        return python.verify(args, KAFKA)
    return verify_in_spark(args)


def verify_in_spark(args) -> dict:
    inputs = args.inputs.split(",")
    spark = spark_session()
    sink = latest(spark, args.sink).where("value IS NOT NULL")
    users = present(spark, inputs[0], "accountId", "accountId")
    if args.pipeline == "count-messages":  # every message per account, none retracted (engine_pyspark's floor job)
        messages = raw_values(spark, inputs[0]).where("value IS NOT NULL").selectExpr(
            "get_json_object(value, '$.accountId') AS accountId")
        expected = per_account(messages)
        actual = sink.selectExpr("key AS k", "get_json_object(value, '$.userCount') AS x")
    elif args.pipeline == "count":
        expected = per_account(users)
        actual = sink.selectExpr("key AS k", "get_json_object(value, '$.userCount') AS x")
    elif args.pipeline == "orders":
        orders = present(spark, inputs[1], "uid", "uid")
        expected = per_account(orders.join(users.withColumnRenamed("k", "uid"), "uid"))
        actual = sink.selectExpr("key AS k", "get_json_object(value, '$.orderCount') AS x")
    else:
        colors = present(spark, inputs[1], "favoriteColor", "color")
        cheeses = present(spark, inputs[2], "favoriteCheese", "cheese")
        expected = users.join(colors, "k", "left").join(cheeses, "k", "left").selectExpr(
            "k", "to_json(array(accountId, k, color, cheese)) AS x")
        actual = sink.selectExpr("key AS k", "to_json(array(get_json_object(value, '$.accountId'), "
                                 "get_json_object(value, '$.userUid'), get_json_object(value, '$.favoriteColor'), "
                                 "get_json_object(value, '$.favoriteCheese'))) AS x")  # fmt: skip
    both = expected.alias("e").join(actual.alias("a"), "k", "full_outer")
    wrong = both.where("NOT (e.x <=> a.x)").selectExpr("k", "e.x AS expected", "a.x AS actual").cache()
    return {
        "ok": wrong.count() == 0,
        "expected_rows": expected.count(),
        "sink_rows": actual.count(),
        "mismatches": wrong.count(),
        "examples": [r.asDict() for r in wrong.limit(5).collect()],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("produce")
    p.add_argument("--pipeline", choices=PIPELINES, required=True)
    p.add_argument("--phase", choices=("preload", "changes"), required=True)
    p.add_argument("--topics", required=True, help="input topics, comma-separated (users[,colors,cheeses] or users,orders)")
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--changes", type=int, default=0)
    p.add_argument("--accounts", type=int, default=10_000)
    o = commands.add_parser("orders")
    o.add_argument("--topic", required=True)
    o.add_argument("--rows", type=int, required=True)
    v = commands.add_parser("verify")
    v.add_argument("--pipeline", choices=(*PIPELINES, "count-messages"), required=True)
    v.add_argument("--inputs", required=True)
    v.add_argument("--sink", required=True)
    v.add_argument("--spark", action="store_true", help="check with Spark however few the messages")
    args = parser.parse_args(argv)
    result = {"produce": produce, "orders": orders, "verify": verify}[args.command](args)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
