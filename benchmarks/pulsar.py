"""Pulsar data source benchmark: the raw pulsar-client rate against our Spark source and sink on the same broker.

Why it exists: `streamshell-pulsar` reads and writes through pulsar-client in Spark's Python workers, so its rates
are bounded by the client's own Python loop; this puts the three side by side. It produces N messages (~100 bytes,
async, batching) to a fresh topic, then measures (a) a plain pulsar-client Reader loop reading them all,
(b) the Spark source reading the same topic with Trigger.AvailableNow into the `noop` sink, (c) the Spark sink
writing N rows from `spark.range` to a fresh topic. Needs the broker of `scripts/services start pulsar`.

    .venv/bin/python -m benchmarks.pulsar [--messages 200000] [--write]

`--write` replaces the section between the pulsar markers in docs/benchmarks.md (other sections are left alone).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from benchmarks.report import DOC, machine
from benchmarks.report import write_section as write_section_text

SERVICE_URL = os.environ.get("STREAMSHELL_PULSAR_URL", "pulsar://127.0.0.1:6650")
ADMIN_URL = os.environ.get("STREAMSHELL_PULSAR_ADMIN_URL", "http://127.0.0.1:8080")
PAYLOAD_BYTES = 100


def fresh_topic(kind: str) -> str:
    return f"persistent://public/default/bench-{kind}-{uuid.uuid4().hex[:8]}"


def client():
    import pulsar

    from shell.connectors.pulsar_common import client_logger

    return pulsar.Client(SERVICE_URL, logger=client_logger())


def produce(topic: str, count: int) -> float:
    """Send `count` messages asynchronously with batching; return the seconds taken (until all are stored)."""
    c = client()
    try:
        producer = c.create_producer(
            topic, batching_enabled=True, block_if_queue_full=True, max_pending_messages=10_000
        )
        payload = b"x" * PAYLOAD_BYTES
        started = time.perf_counter()
        for i in range(count):
            producer.send_async(payload, None, partition_key=f"k{i % 1000}")
        producer.flush()
        elapsed = time.perf_counter() - started
        producer.close()
        return elapsed
    finally:
        c.close()


def raw_read(topic: str, count: int) -> float:
    """A plain pulsar-client loop: Reader from the earliest message, read_next and data() for each."""
    import pulsar

    c = client()
    try:
        reader = c.create_reader(topic, pulsar.MessageId.earliest, receiver_queue_size=5000)
        started = time.perf_counter()
        for _ in range(count):
            reader.read_next(30_000).data()
        elapsed = time.perf_counter() - started
        reader.close()
        return elapsed
    finally:
        c.close()


def spark_read(spark, topic: str) -> tuple[int, float, float]:
    """(rows, wall seconds, seconds inside micro-batches) of an AvailableNow query from our source into noop."""
    with tempfile.TemporaryDirectory() as checkpoint:
        frame = (
            spark.readStream.format("streamshell-pulsar").option("service-url", SERVICE_URL)
            .option("admin-url", ADMIN_URL).option("topic", topic).option("scan.startup.mode", "earliest").load()
        )
        started = time.perf_counter()
        writer = frame.writeStream.format("noop").option("checkpointLocation", checkpoint)
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination()
        elapsed = time.perf_counter() - started
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        progress = query.recentProgress
        in_batches = sum(p["durationMs"].get("triggerExecution", 0) for p in progress) / 1000
        return sum(p["numInputRows"] for p in progress), elapsed, in_batches


def spark_write(spark, topic: str, count: int) -> float:
    """Seconds for our sink to write `count` rows of spark.range (a batch write, one task per core)."""
    frame = spark.range(count).selectExpr(
        "CAST(id % 1000 AS STRING) AS key", f"CAST(repeat('x', {PAYLOAD_BYTES}) AS BINARY) AS value"
    )
    started = time.perf_counter()
    frame.write.format("streamshell-pulsar").option("service-url", SERVICE_URL).option("topic", topic).mode(
        "append"
    ).save()
    return time.perf_counter() - started


def create_partitioned(topic: str, partitions: int) -> None:
    path = topic.replace("persistent://", "/admin/v2/persistent/") + "/partitions"
    request = urllib.request.Request(ADMIN_URL + path, data=str(partitions).encode(), method="PUT",
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).close()


def stored_messages(topic: str) -> int:
    path = topic.replace("persistent://", "/admin/v2/persistent/") + "/stats"
    with urllib.request.urlopen(ADMIN_URL + path, timeout=30) as response:
        return int(json.loads(response.read())["msgInCounter"])


def start_spark():
    from shell.connectors.pulsar_source import register
    from shell.engine.spark import SparkRuntime

    runtime = SparkRuntime("local[*]", {}, Path(tempfile.mkdtemp()) / "spark.log", app_name="bench-pulsar")
    spark = runtime.get()
    register(spark)
    return runtime, spark


def measure(count: int) -> str:
    load = os.getloadavg()[0]
    read_topic, partitioned_topic = fresh_topic("read"), fresh_topic("read2p")
    produce_s = produce(read_topic, count)
    raw_s = raw_read(read_topic, count)
    create_partitioned(partitioned_topic, 2)
    produce(partitioned_topic, count)
    runtime, spark = start_spark()
    try:
        warmup = fresh_topic("warmup")  # starts Spark's Python workers before anything is timed
        produce(warmup, 1000)
        spark_read(spark, warmup)
        rows, read_s, batches_s = spark_read(spark, read_topic)
        rows2, read2_s, _ = spark_read(spark, partitioned_topic)
        if rows != count or rows2 != count:
            raise RuntimeError(f"the Spark source read {rows} and {rows2} rows, not {count}")
        write_topic = fresh_topic("write")
        write_s = spark_write(spark, write_topic, count)
        written = stored_messages(write_topic)
        if written != count:
            raise RuntimeError(f"the Spark sink stored {written} messages, not {count}")
    finally:
        runtime.stop()
    rows_table = [
        ("pulsar-client producer, send_async + batching (setup)", count, produce_s),
        ("(a) pulsar-client Reader loop: read_next + data()", count, raw_s),
        ("(b) Spark source, AvailableNow into noop (wall time, 1 partition)", count, read_s),
        ("(b) the same, time inside micro-batches only (sum of triggerExecution)", count, batches_s),
        ("(b) the same from a 2-partition topic (2 Spark tasks)", count, read2_s),
        ("(c) Spark sink, spark.range batch write (wall time)", count, write_s),
    ]
    return "\n".join(
        [
            f"{count:,} messages of {PAYLOAD_BYTES} bytes, 1000 distinct keys, non-partitioned topics unless said; "
            f"Spark local[*]; pulsar-client {_version('pulsar-client')}, pyspark {_version('pyspark')}, "
            f"Python {platform.python_version()}; 1-minute load average {load:.1f} when it started.",
            "",
            "| measurement | messages | seconds | messages/s |",
            "| --- | ---: | ---: | ---: |",
            *(f"| {name} | {n:,} | {secs:.2f} | {n / secs:,.0f} |" for name, n, secs in rows_table),
        ]
    )


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def write_section(table: str, argv: list[str]) -> None:
    command = " ".join([".venv/bin/python -m benchmarks.pulsar", *argv])
    note = (
        "The broker (Pulsar standalone) runs on the same machine and competes for its CPUs (and so do other\n"
        "jobs: see the load average). (b) and (c) are wall times of the whole query or write, planning and\n"
        "query start included (Python workers are warmed up by a small read first); the triggerExecution row\n"
        "counts only the time inside micro-batches (with the default `source.max-messages-per-trigger` of\n"
        "100,000, two batches here). Per message, the source pays one pulsar-client `read_next`, one id\n"
        "comparison, one C-level call per column and the text form that holds the sequence id; the sink one\n"
        "`send_async` through pulsar-client's Python wrapper, with a Python callback on 1 message in 64 only\n"
        "(one on each halves the send rate). Neither can approach the raw loop (a), which touches one field.\n"
        "On this shared 2-CPU machine, repeated runs differ by up to a factor of 1.5.\n"
    )
    section = (
        f"## Pulsar data source\n\nMeasured with `{command}` on {dt.date.today().isoformat()}, "
        f"{machine()}.\n\n{table}\n\n{note}"
    )
    write_section_text("pulsar", section)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000, help="messages to produce, read and write")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    table = measure(args.messages)
    print(table)
    if args.write:
        write_section(table, [a for a in argv if a != "--write"] + ["--write"])
        print(f"\nwrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
