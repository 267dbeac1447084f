"""Kafka sink throughput, at-least-once beside exactly-once, in one run: what the transactions cost.

Why it exists: `'sink.delivery-guarantee' = 'exactly-once'` writes each task of each micro-batch in a Kafka
transaction through the transactional writer of jvm/kafkatx, where at-least-once is Spark's own Kafka sink; the
issue asks for the price beside at-least-once, measured in one run so one load average applies to both. On the
same N messages of ~100 bytes of JSON in a 4-partition topic (4 tasks a batch, so 4 transactions a batch):

* the writers alone: the topic read as a batch DataFrame and written back with Spark's Kafka sink, and with the
  transactional writer (no SQL layer, no streaming query);
* the SQL layer: `INSERT INTO sink SELECT * FROM src` as a job (the source bounded by
  `'scan.bounded.mode' = 'latest-offset'`), into a kafka table of each guarantee, once as one micro-batch of N
  rows and once in micro-batches of 10,000 (`'source.max-messages-per-trigger'`), where the per-batch cost of the
  transactions (begin, the batch record, commit, per task) shows.

Each measurement runs `--repeat` times (2; 1 with `--quick`), the guarantees alternating, and the table gives each
run's rows/s and their best; every run's sink is counted afterwards with isolation.level=read_committed and must
hold N rows.

    .venv/bin/python -m benchmarks.kafka_delivery [--rows 200000] [--repeat 2] [--quick] [--write]

Needs the Kafka broker of `scripts/services start` and the writer built (`scripts/jvm-deps kafkatx`). `--write`
replaces the section between the kafka-delivery markers in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import scratch
from benchmarks.report import machine, write_section

KAFKA = os.environ.get("STREAMSHELL_KAFKA_BOOTSTRAP", "127.0.0.1:9092")
DOC = Path(__file__).resolve().parents[1] / "docs" / "reliability.md"
MESSAGE_BYTES = 100
PARTITIONS = 4
SMALL_BATCH = 10_000
COLUMNS = "id BIGINT, name STRING, score DOUBLE, ok BOOLEAN, pad STRING"
GUARANTEES = ("at-least-once", "exactly-once")


@dataclass
class Measurement:
    what: str
    guarantee: str
    rows: int
    seconds: list[float] = field(default_factory=list)

    def rates(self) -> list[float]:
        return [self.rows / s for s in self.seconds]


def message(i: int) -> bytes:
    head = f'{{"id": {i}, "name": "name-{i:07d}", "score": {i % 1000 / 10}, "ok": {"true" if i % 2 else "false"}, "pad": "'
    return (head + "x" * (MESSAGE_BYTES - len(head) - 2) + '"}').encode()


def unique(prefix: str) -> str:
    return f"bench-{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(topic: str, partitions: int = PARTITIONS) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=KAFKA)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def produce(topic: str, count: int) -> None:
    from kafka import KafkaProducer

    create_topic(topic)
    producer = KafkaProducer(bootstrap_servers=KAFKA, linger_ms=5, batch_size=256 * 1024, acks=1)
    for i in range(count):
        producer.send(topic, message(i), key=str(i).encode())
    producer.flush()
    producer.close()


def committed_rows(spark, topic: str) -> int:
    """The records a read_committed consumer reads from the topic (Spark's batch read, isolation honoured)."""
    return (
        spark.read.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("subscribe", topic)
        .option("kafka.isolation.level", "read_committed").option("startingOffsets", "earliest")
        .option("endingOffsets", "latest").load().count()
    )  # fmt: skip


def execute(session, sql: str):
    from shell.sql.parse import parse_script

    result = None
    for statement in parse_script(sql):
        result = session.execute(statement)
    return result


def sink_table(name: str, topic: str, guarantee: str) -> str:
    return (f"CREATE TABLE {name} ({COLUMNS}) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
            f"'properties.bootstrap.servers' = '{KAFKA}', 'format' = 'json', "
            f"'sink.delivery-guarantee' = '{guarantee}', 'sink.transactional-id-prefix' = '{topic}');")  # fmt: skip


def source_table(name: str, topic: str, batch: int | None) -> str:
    limit = f", 'source.max-messages-per-trigger' = '{batch}'" if batch else ""
    return (f"CREATE TABLE {name} ({COLUMNS}) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
            f"'properties.bootstrap.servers' = '{KAFKA}', 'format' = 'json', "
            f"'scan.bounded.mode' = 'latest-offset'{limit});")  # fmt: skip


def writer_copy(spark, source: str, guarantee: str, n: int) -> float:
    """Seconds to read the topic as a batch and write it to a new topic with one guarantee's writer."""
    from shell.connectors import kafka_transactional

    target = unique("writer")
    create_topic(target)
    frame = (
        spark.read.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("subscribe", source)
        .option("startingOffsets", "earliest").option("endingOffsets", "latest").load().selectExpr("key", "value")
    )  # fmt: skip
    started = time.perf_counter()
    if guarantee == "exactly-once":
        frame.write.format(kafka_transactional.WRITER).mode("append").option("kafka.bootstrap.servers", KAFKA).option(
            "topic", target).option("transactional-id-prefix", target).option("batch-id", "0").save()
    else:
        frame.write.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("topic", target).save()
    seconds = time.perf_counter() - started
    check(f"{guarantee} writer", committed_rows(spark, target), n)
    return seconds


def sql_copy(session, spark, source: str, guarantee: str, n: int, batch: int | None) -> float:
    """Seconds from the INSERT to the end of its job, the source bounded, into a new topic of `guarantee`."""
    target = unique("sql")
    create_topic(target)
    tag = uuid.uuid4().hex[:6]
    execute(session, source_table(f"src_{tag}", source, batch))
    execute(session, sink_table(f"snk_{tag}", target, guarantee))
    started = time.perf_counter()
    job = session.jobs.get(execute(session, f"INSERT INTO snk_{tag} SELECT * FROM src_{tag};").job_id)
    job.await_end()
    seconds = time.perf_counter() - started
    if job.status != "FINISHED":
        raise RuntimeError(f"{guarantee} copy: job {job.status}: {job.failure}")
    check(f"{guarantee} job", committed_rows(spark, target), n)
    return seconds


def check(what: str, got: int, wanted: int) -> None:
    if got != wanted:
        raise RuntimeError(f"{what}: {got:,} rows committed, not {wanted:,}")


def measure(n: int, repeat: int) -> tuple[list[Measurement], dict]:
    from shell.engine.spark import SparkRuntime
    from shell.session import Session, SessionOptions

    info = {"load_start": os.getloadavg()[0]}
    home = Path(tempfile.mkdtemp(prefix="bench-kafka-delivery-"))
    runtime = SparkRuntime("local[*]", {}, home / "spark.log", app_name="bench-kafka-delivery")
    runtime.start()
    spark = runtime.get()
    session = Session(SessionOptions(home=home / "home"), runtime=runtime)
    info["shuffle"] = int(spark.conf.get("spark.sql.shuffle.partitions"))
    execute(session, "SET 'execution.target' = 'embedded'; SET 'table.dml-sync' = 'false';")
    batches = max(1, n // SMALL_BATCH)
    plan = [
        ("the writer alone (a batch DataFrame)", lambda g: writer_copy(spark, source, g, n)),
        ("INSERT ... SELECT, one micro-batch", lambda g: sql_copy(session, spark, source, g, n, None)),
        (f"INSERT ... SELECT, {batches} micro-batches of {min(n, SMALL_BATCH):,}",
         lambda g: sql_copy(session, spark, source, g, n, SMALL_BATCH)),
    ]  # fmt: skip
    results = {(what, g): Measurement(what, g, n) for what, _ in plan for g in GUARANTEES}
    try:
        warm = unique("warm")
        produce(warm, 2000)
        for guarantee in GUARANTEES:  # executors, Python workers, the JIT, the producers' classes
            writer_copy(spark, warm, guarantee, 2000)
            sql_copy(session, spark, warm, guarantee, 2000, None)
        source = unique("source")
        produce(source, n)
        for round_ in range(repeat):
            for what, run in plan:
                order = GUARANTEES if round_ % 2 == 0 else tuple(reversed(GUARANTEES))
                for guarantee in order:
                    results[(what, guarantee)].seconds.append(run(guarantee))
                    print(f"{what}, {guarantee}: {results[(what, guarantee)].seconds[-1]:.2f} s", flush=True)
    finally:
        session.close()
        runtime.stop()
        scratch.remove(home)
    info["load_end"] = os.getloadavg()[0]
    return list(results.values()), info


def table(measurements: list[Measurement], n: int, info: dict) -> str:
    by = {(m.what, m.guarantee): m for m in measurements}
    lines = [
        f"{n:,} messages of {MESSAGE_BYTES} bytes of JSON (`{COLUMNS}`), {PARTITIONS}-partition topics, read by "
        f"{PARTITIONS} tasks; the writer alone writes from those {PARTITIONS} tasks ({PARTITIONS} transactions), a "
        f"job's exactly-once sink from {info['shuffle']} (spread by content, `spark.sql.shuffle.partitions`: "
        f"{info['shuffle']} transactions a micro-batch), Spark's sink from the {PARTITIONS}; Spark local[*], pyspark "
        f"{_version('pyspark')}, kafka-clients 3.9.2 on the executors, Kafka 4.4.0 on the same machine; "
        f"Python {platform.python_version()}; 1-minute load average {info['load_start']:.1f} when it started, "
        f"{info['load_end']:.1f} when it ended.",
        "",
        "| path | at-least-once rows/s | exactly-once rows/s | exactly-once / at-least-once (best runs) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for what in dict.fromkeys(m.what for m in measurements):
        least, exact = by[(what, "at-least-once")], by[(what, "exactly-once")]
        cells = [", ".join(f"{r:,.0f}" for r in m.rates()) for m in (least, exact)]
        ratio = max(exact.rates()) / max(least.rates())
        lines.append(f"| {what} | {cells[0]} | {cells[1]} | {ratio:.2f} |")
    return "\n".join(lines)


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=DOC.parent.parent, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "?"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="messages copied by each measurement")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each measurement")
    parser.add_argument("--quick", action="store_true", help="20,000 messages, one run each (the test's form)")
    parser.add_argument("--write", action="store_true", help="update docs/reliability.md")
    args = parser.parse_args(argv)
    rows, repeat = (20_000, 1) if args.quick else (args.rows, args.repeat)
    measurements, info = measure(rows, repeat)
    text = table(measurements, rows, info)
    print(text)
    if args.write:
        command = " ".join([".venv/bin/python -m benchmarks.kafka_delivery", *argv])
        write_section("kafka-delivery", (
            f"Measured with `{command}` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC at commit "
            f"{commit()}, {machine()}.\n\n{text}"), doc=DOC)  # fmt: skip
        print(f"\nwrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
