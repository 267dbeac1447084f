"""Connector benchmark: rows/s through our `kafka` and `pulsar` tables beside the raw clients and the layers below.

Why it exists: a table adds work to the connector underneath it (format decoding with Spark expressions, bad
records split off to the dead-letter place, the job machinery), and the issue asks what that costs on this
machine. For each broker this measures, on the same N messages of ~100 bytes of JSON and in one run (so one load
average applies to all rows):

* the raw Python client's own rate (kafka-python, pulsar-client): produce, then a plain read loop;
* the connector under our table: Spark's Kafka source (`readStream.format("kafka")`, AvailableNow into `noop`)
  and our Pulsar data source (`streamshell-pulsar`, the same); Spark's Kafka batch write and our Pulsar data
  source's batch write of `spark.range` rows;
* our SQL layer, end to end from the statement to the job's end: `INSERT INTO blackhole SELECT * FROM t` over a
  json table (Kafka bounded by `'scan.bounded.mode' = 'latest-offset'`; Pulsar tables are unbounded, so until
  the job has processed N rows), with the default dead-letter mode and with `'errors.mode' = 'ignore'`; a Kafka
  SELECT drained through the shell's result path; `INSERT INTO t SELECT * FROM datagen` (N bounded rows) and
  INSERT VALUES (a small statement: VALUES is not a bulk path) into a kafka and a pulsar table.

    .venv/bin/python -m benchmarks.connectors [--rows 200000] [--write]

Needs the brokers of `scripts/services start`. `--write` replaces the section between the connectors markers in
docs/benchmarks.md (other sections are left alone).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from benchmarks import scratch
from benchmarks.pulsar import raw_read as raw_pulsar_read  # the same loop as the Pulsar data source benchmark
from benchmarks.report import DOC, machine
from benchmarks.report import write_section as write_section_text

KAFKA = os.environ.get("STREAMSHELL_KAFKA_BOOTSTRAP", "127.0.0.1:9092")
PULSAR_SERVICE = os.environ.get("STREAMSHELL_PULSAR_URL", "pulsar://127.0.0.1:6650")
PULSAR_ADMIN = os.environ.get("STREAMSHELL_PULSAR_ADMIN_URL", "http://127.0.0.1:8080")
MESSAGE_BYTES = 100
VALUES_ROWS = 2000
COLUMNS = "id BIGINT, name STRING, score DOUBLE, ok BOOLEAN, pad STRING"


@dataclass
class Row:
    group: str
    what: str
    rows: int
    seconds: float
    note: str = ""

    def markdown(self) -> str:
        rate = f"{self.rows / self.seconds:,.0f}" if self.seconds > 0 else "-"
        return f"| {self.group} | {self.what} | {self.rows:,} | {self.seconds:.2f} | {rate} |"


def message(i: int) -> bytes:
    """A JSON record of exactly MESSAGE_BYTES bytes (the pad takes up the rest)."""
    head = f'{{"id": {i}, "name": "name-{i:07d}", "score": {i % 1000 / 10}, "ok": {"true" if i % 2 else "false"}, "pad": "'
    return (head + "x" * (MESSAGE_BYTES - len(head) - 2) + '"}').encode()


def unique(prefix: str) -> str:
    return f"bench-{prefix}-{uuid.uuid4().hex[:8]}"


# ---- Kafka: raw client and Spark's connector -------------------------------------------------------------------


def kafka_produce(topic: str, count: int) -> float:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=KAFKA, linger_ms=5, batch_size=256 * 1024, acks=1)
    started = time.perf_counter()
    for i in range(count):
        producer.send(topic, message(i))
    producer.flush()
    elapsed = time.perf_counter() - started
    producer.close()
    return elapsed


def kafka_read(topic: str, count: int) -> float:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=KAFKA, auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=30000, fetch_max_bytes=64 * 1024 * 1024)  # fmt: skip
    started = time.perf_counter()
    seen = 0
    for record in consumer:
        record.value  # noqa: B018 - touch the value, as a reader would
        seen += 1
        if seen == count:
            break
    elapsed = time.perf_counter() - started
    consumer.close()
    if seen != count:
        raise RuntimeError(f"kafka-python read {seen} of {count} messages")
    return elapsed


def kafka_stored(topic: str) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=KAFKA)
    partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
    total = sum(consumer.end_offsets(partitions).values())
    consumer.close()
    return total


def spark_noop(frame) -> tuple[int, float, float]:
    """(rows, wall seconds, seconds inside micro-batches) of an AvailableNow query of `frame` into noop."""
    with tempfile.TemporaryDirectory() as checkpoint:
        started = time.perf_counter()
        query = (
            frame.writeStream.format("noop").option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
        )
        query.awaitTermination()
        elapsed = time.perf_counter() - started
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        progress = query.recentProgress
        return sum(p["numInputRows"] for p in progress), elapsed, in_batches(progress)


def in_batches(progress) -> float:
    return sum(p["durationMs"].get("triggerExecution", 0) for p in progress) / 1000


def spark_kafka_read(spark, topic: str) -> tuple[int, float, float]:
    frame = (
        spark.readStream.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("subscribe", topic)
        .option("startingOffsets", "earliest").load()
    )  # fmt: skip
    return spark_noop(frame)


def json_rows(spark, count: int):
    """`count` rows of the benchmark's columns, their JSON value about MESSAGE_BYTES long."""
    return spark.range(count).selectExpr(
        "id", "concat('name-', lpad(CAST(id AS STRING), 7, '0')) AS name", "(id % 1000) / 10.0 AS score",
        "id % 2 = 1 AS ok", "repeat('x', 18) AS pad",
    )  # fmt: skip


def spark_kafka_write(spark, topic: str, count: int) -> float:
    frame = json_rows(spark, count).selectExpr("to_json(struct(*)) AS value")
    started = time.perf_counter()
    frame.write.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("topic", topic).save()
    return time.perf_counter() - started


# ---- Pulsar: raw client and our data source ---------------------------------------------------------------------


def pulsar_client():
    import pulsar

    from shell.connectors.pulsar_common import client_logger

    return pulsar.Client(PULSAR_SERVICE, logger=client_logger())


def pulsar_produce(topic: str, count: int) -> float:
    client = pulsar_client()
    try:
        producer = client.create_producer(topic, batching_enabled=True, block_if_queue_full=True,
                                          max_pending_messages=10_000)  # fmt: skip
        started = time.perf_counter()
        for i in range(count):
            producer.send_async(message(i), None)
        producer.flush()
        elapsed = time.perf_counter() - started
        producer.close()
        return elapsed
    finally:
        client.close()


def pulsar_stored(topic: str) -> int:
    import urllib.request

    path = topic.replace("persistent://", "/admin/v2/persistent/") + "/stats"
    with urllib.request.urlopen(PULSAR_ADMIN + path, timeout=30) as response:
        return int(json.loads(response.read())["msgInCounter"])


def spark_pulsar_read(spark, topic: str) -> tuple[int, float, float]:
    frame = (
        spark.readStream.format("streamshell-pulsar").option("service-url", PULSAR_SERVICE)
        .option("admin-url", PULSAR_ADMIN).option("topic", topic).option("scan.startup.mode", "earliest").load()
    )  # fmt: skip
    return spark_noop(frame)


def spark_pulsar_write(spark, topic: str, count: int) -> float:
    frame = json_rows(spark, count).selectExpr("CAST(NULL AS BINARY) AS key", "CAST(to_json(struct(*)) AS BINARY) AS value")
    started = time.perf_counter()
    frame.write.format("streamshell-pulsar").option("service-url", PULSAR_SERVICE).option("topic", topic).mode("append").save()
    return time.perf_counter() - started


# ---- our SQL layer ---------------------------------------------------------------------------------------------


def execute(session, sql: str):
    from shell.sql.parse import parse_script

    result = None
    for statement in parse_script(sql):
        result = session.execute(statement)
    return result


def kafka_table(name: str, topic: str, extra: str = "") -> str:
    return (f"CREATE TABLE {name} ({COLUMNS}) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
            f"'properties.bootstrap.servers' = '{KAFKA}', 'format' = 'json'{extra});")  # fmt: skip


def pulsar_table(name: str, topic: str, extra: str = "") -> str:
    return (f"CREATE TABLE {name} ({COLUMNS}) WITH ('connector' = 'pulsar', 'topic' = '{topic}', "
            f"'service-url' = '{PULSAR_SERVICE}', 'admin-url' = '{PULSAR_ADMIN}', 'format' = 'json'{extra});")  # fmt: skip


def datagen_table(name: str, count: int) -> str:
    return (f"CREATE TABLE {name} ({COLUMNS}) WITH ('connector' = 'datagen', 'number-of-rows' = '{count}', "
            f"'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{count}', "
            "'fields.name.length' = '12', 'fields.pad.length' = '18');")  # fmt: skip


END_OF_INPUT_ROWS = 1  # a bounded table's source adds one row after its last (shell/engine/sources.py)


def bounded_job(session, sql: str) -> tuple[float, float, int]:
    """(wall seconds from the statement to the job's end, seconds inside its micro-batches, rows it read)."""
    started = time.perf_counter()
    job = session.jobs.get(execute(session, sql).job_id)
    job.await_end()
    elapsed = time.perf_counter() - started
    if job.status != "FINISHED":
        raise RuntimeError(f"{sql}: job {job.status}: {job.failure}")
    progress = job.query.recentProgress
    return elapsed, in_batches(progress), sum(p["numInputRows"] for p in progress) - END_OF_INPUT_ROWS


def unbounded_job(session, sql: str, count: int, timeout: float = 900) -> tuple[float, float]:
    """(wall seconds from the statement until the job has read `count` rows, seconds inside its micro-batches)."""
    started = time.perf_counter()
    job = session.jobs.get(execute(session, sql).job_id)
    try:
        while True:
            progress = job.query.recentProgress
            if sum(p["numInputRows"] for p in progress) >= count:
                return time.perf_counter() - started, in_batches(progress)
            if job.status != "RUNNING":
                raise RuntimeError(f"{sql}: job {job.status}: {job.failure}")
            if time.perf_counter() - started > timeout:
                raise RuntimeError(f"{sql}: fewer than {count} rows after {timeout} s")
            time.sleep(0.1)
    finally:
        job.stop()


def drain_select(session, sql: str) -> tuple[float, int]:
    started = time.perf_counter()
    stream = execute(session, sql)
    rows = sum(len(batch or ()) for batch in stream.batches())
    return time.perf_counter() - started, rows


def values_statement(table: str, count: int) -> str:
    rows = ", ".join(f"({i}, 'name-{i:07d}', {i % 1000 / 10}, {'TRUE' if i % 2 else 'FALSE'}, '{'x' * 18}')" for i in range(count))
    return f"INSERT INTO {table} VALUES {rows};"


def timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def check(what: str, got: int, wanted: int) -> None:
    if got != wanted:
        raise RuntimeError(f"{what}: {got} rows, not {wanted}")


# ---- the run ---------------------------------------------------------------------------------------------------


def measure_kafka(spark, session, n: int) -> list[Row]:
    rows = []
    topic = unique("kafka")
    rows.append(Row("Kafka, raw client", "kafka-python producer: send + flush (linger 5 ms, acks=1)", n, kafka_produce(topic, n)))
    check("kafka topic", kafka_stored(topic), n)
    rows.append(Row("Kafka, raw client", "kafka-python consumer loop (from earliest)", n, kafka_read(topic, n)))
    read, wall, inside = spark_kafka_read(spark, topic)
    check("Spark's Kafka source", read, n)
    rows.append(Row("Kafka source", "Spark's Kafka source, raw bytes, AvailableNow into noop", n, wall))
    rows.append(Row("Kafka source", "  the same, time inside micro-batches only", n, inside))
    execute(session, "CREATE TABLE sink_hole (" + COLUMNS + ") WITH ('connector' = 'blackhole');")
    bounded = ", 'scan.bounded.mode' = 'latest-offset'"
    execute(session, kafka_table("k_src", topic, bounded))
    wall, inside, read = bounded_job(session, "INSERT INTO sink_hole SELECT * FROM k_src;")
    check("kafka table job", read, n)
    rows.append(Row("Kafka source", "our kafka table, json: INSERT INTO blackhole, bad records to dead letters (default)", n, wall))
    rows.append(Row("Kafka source", "  the same, time inside the job's micro-batches only", n, inside))
    execute(session, kafka_table("k_src_ignore", topic, bounded + ", 'errors.mode' = 'ignore'"))
    wall, _, read = bounded_job(session, "INSERT INTO sink_hole SELECT * FROM k_src_ignore;")
    check("kafka table job (ignore)", read, n)
    rows.append(Row("Kafka source", "our kafka table, json: INSERT INTO blackhole, 'errors.mode' = 'ignore'", n, wall))
    wall, read = drain_select(session, "SELECT * FROM k_src_ignore;")
    check("kafka SELECT", read, n)
    rows.append(Row("Kafka source", "our kafka table, json: SELECT drained through the shell's result stream", n, wall))

    sink_topic = unique("kafka-spark-sink")
    rows.append(Row("Kafka sink", "Spark's Kafka batch write of spark.range rows as JSON", n, spark_kafka_write(spark, sink_topic, n)))
    check("Spark's Kafka sink", kafka_stored(sink_topic), n)
    execute(session, datagen_table("gen", n))
    sql_topic = unique("kafka-sql-sink")
    execute(session, kafka_table("k_dst", sql_topic))
    wall, inside, _ = bounded_job(session, "INSERT INTO k_dst SELECT * FROM gen;")
    check("kafka table sink", kafka_stored(sql_topic), n)
    rows.append(Row("Kafka sink", "our kafka table, json: INSERT INTO t SELECT * FROM datagen", n, wall))
    values_topic = unique("kafka-values")
    execute(session, kafka_table("k_values", values_topic))
    statement = values_statement("k_values", VALUES_ROWS)
    rows.append(Row("Kafka sink", f"our kafka table, json: one INSERT VALUES of {VALUES_ROWS:,} rows", VALUES_ROWS,
                    timed(execute, session, statement)))  # fmt: skip
    check("kafka INSERT VALUES", kafka_stored(values_topic), VALUES_ROWS)
    return rows


def measure_pulsar(spark, session, n: int) -> list[Row]:
    base = "persistent://public/default/"
    rows = []
    topic = base + unique("pulsar")
    rows.append(Row("Pulsar, raw client", "pulsar-client producer: send_async + batching", n, pulsar_produce(topic, n)))
    check("pulsar topic", pulsar_stored(topic), n)
    rows.append(Row("Pulsar, raw client", "pulsar-client Reader loop: read_next + data()", n, raw_pulsar_read(topic, n)))
    read, wall, inside = spark_pulsar_read(spark, topic)
    check("our Pulsar data source", read, n)
    rows.append(Row("Pulsar source", "our Pulsar data source, raw bytes, AvailableNow into noop", n, wall))
    rows.append(Row("Pulsar source", "  the same, time inside micro-batches only", n, inside))
    execute(session, pulsar_table("p_src", topic))
    wall, inside = unbounded_job(session, "INSERT INTO sink_hole SELECT * FROM p_src;", n)
    rows.append(Row("Pulsar source", "our pulsar table, json: INSERT INTO blackhole until all read, dead letters (default)", n, wall))
    rows.append(Row("Pulsar source", "  the same, time inside the job's micro-batches only", n, inside))
    execute(session, pulsar_table("p_src_ignore", topic, ", 'errors.mode' = 'ignore'"))
    wall, _ = unbounded_job(session, "INSERT INTO sink_hole SELECT * FROM p_src_ignore;", n)
    rows.append(Row("Pulsar source", "our pulsar table, json: INSERT INTO blackhole until all read, 'errors.mode' = 'ignore'", n, wall))

    sink_topic = base + unique("pulsar-ds-sink")
    rows.append(Row("Pulsar sink", "our Pulsar data source: batch write of spark.range rows as JSON", n,
                    spark_pulsar_write(spark, sink_topic, n)))  # fmt: skip
    check("Pulsar data source sink", pulsar_stored(sink_topic), n)
    sql_topic = base + unique("pulsar-sql-sink")
    execute(session, pulsar_table("p_dst", sql_topic))
    wall, _, _ = bounded_job(session, "INSERT INTO p_dst SELECT * FROM gen;")
    check("pulsar table sink", pulsar_stored(sql_topic), n)
    rows.append(Row("Pulsar sink", "our pulsar table, json: INSERT INTO t SELECT * FROM datagen", n, wall))
    values_topic = base + unique("pulsar-values")
    execute(session, pulsar_table("p_values", values_topic))
    statement = values_statement("p_values", VALUES_ROWS)
    rows.append(Row("Pulsar sink", f"our pulsar table, json: one INSERT VALUES of {VALUES_ROWS:,} rows", VALUES_ROWS,
                    timed(execute, session, statement)))  # fmt: skip
    check("pulsar INSERT VALUES", pulsar_stored(values_topic), VALUES_ROWS)
    return rows


def warm_up(spark, session) -> None:
    """Start Spark's executors, Python workers and the JIT on small inputs before anything is timed."""
    topic = unique("warmup")
    kafka_produce(topic, 1000)
    spark_kafka_read(spark, topic)
    execute(session, kafka_table("warm", topic, ", 'scan.bounded.mode' = 'latest-offset'"))
    execute(session, "CREATE TABLE warm_hole (" + COLUMNS + ") WITH ('connector' = 'blackhole');")
    bounded_job(session, "INSERT INTO warm_hole SELECT * FROM warm;")
    ptopic = "persistent://public/default/" + unique("warmup")
    pulsar_produce(ptopic, 1000)
    spark_pulsar_read(spark, ptopic)
    spark_pulsar_write(spark, "persistent://public/default/" + unique("warmup-write"), 1000)


def measure(n: int, only: str | None = None) -> tuple[list[Row], dict]:
    from shell.connectors.pulsar_source import register
    from shell.engine.spark import SparkRuntime
    from shell.session import Session, SessionOptions

    info = {"load_start": os.getloadavg()[0]}
    home = Path(tempfile.mkdtemp(prefix="bench-connectors-"))
    runtime = SparkRuntime("local[*]", {}, home / "spark.log", app_name="bench-connectors")
    runtime.start()
    spark = runtime.get()
    register(spark)
    session = Session(SessionOptions(home=home / "home"), runtime=runtime)
    rows: list[Row] = []
    try:
        warm_up(spark, session)
        if only in (None, "kafka"):
            rows += measure_kafka(spark, session, n)
        if only in (None, "pulsar"):
            if only == "pulsar":
                execute(session, "CREATE TABLE sink_hole (" + COLUMNS + ") WITH ('connector' = 'blackhole');")
                execute(session, datagen_table("gen", n))
            rows += measure_pulsar(spark, session, n)
    finally:
        session.close()
        runtime.stop()
        scratch.remove(home)
    info["load_end"] = os.getloadavg()[0]
    return rows, info


# ---- the report ------------------------------------------------------------------------------------------------


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def pulsar_section_figures() -> str | None:
    """The data source's own figures from the Pulsar section of docs/benchmarks.md, for comparison."""
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    if "<!-- pulsar:start -->" not in text:
        return None
    section = text.split("<!-- pulsar:start -->", 1)[1].split("<!-- pulsar:end -->", 1)[0]
    date = re.search(r" on (\d{4}-\d{2}-\d{2})", section)
    source = re.search(r"\| \(b\) Spark source, AvailableNow into noop \(wall time[^|]*\|[^|]*\|[^|]*\| ([\d,]+) \|", section)
    sink = re.search(r"\| \(c\) Spark sink[^|]*\|[^|]*\|[^|]*\| ([\d,]+) \|", section)
    if not (date and source and sink):
        return None
    return f"{date.group(1)}: source {source.group(1)} and sink {sink.group(1)} messages/s"


def table(rows: list[Row], n: int, info: dict) -> str:
    return "\n".join(
        [
            f"{n:,} messages of {MESSAGE_BYTES} bytes of JSON (`{COLUMNS}`), one-partition topics; Spark local[*]; "
            f"pyspark {_version('pyspark')}, kafka-python {_version('kafka-python')}, pulsar-client "
            f"{_version('pulsar-client')}, Python {platform.python_version()}; 1-minute load average "
            f"{info['load_start']:.1f} when it started, {info['load_end']:.1f} when it ended.",
            "",
            "| path | measurement | rows | seconds | rows/s |",
            "| --- | --- | ---: | ---: | ---: |",
            *(r.markdown() for r in rows),
        ]
    )


NOTE = """\
Every "our ... table" row is wall time from executing the statement to the job's end (Kafka: a bounded table;
Pulsar tables are unbounded, so until the job's progress counted every row; the job is stopped then), planning,
query start and the job's checkpoint commits included; the "inside micro-batches" rows sum Spark's
`triggerExecution` of the job's own query. The brokers run on the same machine as Spark and compete with it
for the CPUs, and so do other jobs (see the load average); on this shared 2-CPU machine repeated runs differ
by up to a factor of 1.5.

What the table adds over its connector: json decoding in Spark expressions (each field read as text, then
converted with `try_*` functions so a bad field is reported, not guessed), the split of bad records, and with
the default `'errors.mode' = 'dead-letter'` a count of each micro-batch's bad records, taken by the same Spark
action that writes the rows (an observed metric); only a batch that had some is read again to write them aside
(`shell/engine/path_parts.py`, `PerBatch`). No record here is bad, so no batch is read twice: the two modes differ
by that count and by this machine's noise (see "Notes on the append figures"). A one-partition topic is read by
one Spark task, so one core decodes. A SELECT's
rows are collected to the driver and handed to the result stream as Python tuples, which costs more than
writing them anywhere. INSERT VALUES is parsed by our
SQL front end (pure Python sqlglot) and planned by Spark as one literal relation: it is meant for a few rows,
not for loading data.
"""


def write_section(rows: list[Row], n: int, info: dict, argv: list[str]) -> None:
    command = " ".join([".venv/bin/python -m benchmarks.connectors", *argv])
    earlier = pulsar_section_figures()
    reference = (
        f"\nThe Pulsar data source section above measured the data source alone on {earlier} (its raw bytes, no "
        "table); the Pulsar rows here re-measure the raw client and the data source in the same run as the SQL "
        "layer, so that one load average applies.\n"
        if earlier else ""
    )  # fmt: skip
    body = (
        f"## Kafka and Pulsar tables through the SQL layer\n\nMeasured with `{command}` on "
        f"{dt.date.today().isoformat()}, {machine()}.\n\n{table(rows, n, info)}\n\n{NOTE}{reference}"
    )
    write_section_text("connectors", body)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="messages produced, read and written")
    parser.add_argument("--only", choices=("kafka", "pulsar"), help="measure one broker only (not for --write)")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    if args.write and args.only:
        parser.error("--write needs both brokers measured")
    rows, info = measure(args.rows, args.only)
    print(table(rows, args.rows, info))
    if args.write:
        write_section(rows, args.rows, info, [a for a in argv if a != "--write"] + ["--write"])
        print(f"\nwrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
