"""Jobs against the real Kafka broker and through the real command line: a Kafka -> Kafka job stopped with a
savepoint and resumed by a new shell writes every message exactly once, and a script whose job fails says why
in one line after its restarts.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import uuid
from pathlib import Path

from tests.sessions import embedded_options
from shell.results import JobStarted
from shell.session import Session
from tests.e2e.cli import streamshell
from tests.spark.helpers import run, wait_for


def produce(brokers, topic: str, ids) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for i in ids:
        producer.send(topic, json.dumps({"id": i}).encode())
    producer.flush()
    producer.close()


def ids_in(brokers, topic: str) -> list[int]:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=3000)  # fmt: skip
    ids = sorted(json.loads(m.value)["id"] for m in consumer)
    consumer.close()
    return ids


def test_a_kafka_job_resumed_from_its_savepoint_by_a_new_shell_writes_each_message_once(tmp_path, spark_runtime, brokers):
    source, sink = f"sp-in-{uuid.uuid4().hex[:8]}", f"sp-out-{uuid.uuid4().hex[:8]}"
    servers = brokers.kafka_bootstrap
    ddl = f"""
      CREATE TABLE src (id INT) WITH ('connector' = 'kafka', 'topic' = '{source}', 'format' = 'json',
        'properties.bootstrap.servers' = '{servers}', 'scan.startup.mode' = 'earliest-offset');
      CREATE TABLE out (id INT) WITH ('connector' = 'kafka', 'topic' = '{sink}', 'format' = 'json',
        'properties.bootstrap.servers' = '{servers}');"""
    produce(brokers, source, range(0, 300))
    home = tmp_path / "home"
    first = Session(embedded_options(home=home), runtime=spark_runtime)
    try:
        run(first, ddl)
        job_id = run(first, "INSERT INTO out SELECT id FROM src;").job_id
        wait_for(lambda: len(ids_in(brokers, sink)) >= 300, 180, "the first 300 ids in the output")
        run(first, f"STOP JOB '{job_id}' WITH SAVEPOINT;")
    finally:
        first.close()

    produce(brokers, source, range(300, 600))  # while no job runs
    second = Session(embedded_options(home=home), runtime=spark_runtime)
    try:
        assert run(second, f"RESUME JOB '{job_id}';") == JobStarted(job_id, "insert-into_out")
        wait_for(lambda: len(ids_in(brokers, sink)) >= 600, 180, "all 600 ids in the output")
        produce(brokers, source, range(600, 700))  # and the resumed job keeps going
        wait_for(lambda: len(ids_in(brokers, sink)) >= 700, 180, "all 700 ids in the output")
        time.sleep(3)
        assert ids_in(brokers, sink) == list(range(700))  # none lost, none twice
    finally:
        second.close()


def test_a_stateful_job_that_replays_a_batch_keeps_its_bad_records_once(tmp_path, spark_runtime, brokers):
    """A stateful job writes a micro-batch's bad records before Spark commits the batch, so a crash in between
    replays the batch on resume and its bad records are written again, into the same folder. Here the crash is
    made by hand: the job is stopped with a savepoint, then the batch's commit and its dead letters are removed."""
    from kafka import KafkaProducer

    source = f"sp-bad-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for body in [b'{"id": 1}', b"{oops", b'{"id": 2}', b'{"id": "x"}', b'{"id": 3}']:
        producer.send(source, body)
    producer.flush()
    producer.close()
    home = tmp_path / "home"
    session = Session(embedded_options(home=home), runtime=spark_runtime)
    try:
        run(session, f"""
          CREATE TABLE src (id INT) WITH ('connector' = 'kafka', 'topic' = '{source}', 'format' = 'json',
            'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'scan.startup.mode' = 'earliest-offset');
          CREATE TABLE sink (n BIGINT) WITH ('connector' = 'blackhole');""")  # fmt: skip
        job_id = run(session, "INSERT INTO sink SELECT COUNT(*) FROM src;").job_id
        positions = lambda: sorted(row[1] for row in run(session, "SHOW ERRORS FOR src;").rows)  # noqa: E731
        expected = [f"{source}:0:1", f"{source}:0:3"]
        wait_for(lambda: positions() == expected, 180, "the two bad records kept")
        run(session, f"STOP JOB '{job_id}' WITH SAVEPOINT;")

        commits = Path(session.jobs.stored(job_id).record.checkpoint) / "commits"
        last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
        (commits / str(last)).unlink()  # the crash: the batch was written, not committed
        (commits / f".{last}.crc").unlink(missing_ok=True)
        folders = list((home / "errors" / "src").rglob(f"batch-{last:012d}"))
        assert len(folders) == 1
        shutil.rmtree(folders[0])  # ... nor were its bad records
        assert positions() == []

        run(session, f"RESUME JOB '{job_id}';")
        wait_for(lambda: positions() == expected, 180, "the replayed batch's bad records kept again")
        time.sleep(3)
        assert positions() == expected  # once each
    finally:
        session.close()


def test_a_script_whose_job_keeps_failing_exits_1_with_the_cause_in_one_line(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ids.json").write_text('{"id": 1}\n{"id": oops}\n', encoding="utf-8")
    script = f"""
      SET 'table.dml-sync' = 'true';
      SET 'restart-strategy.type' = 'fixed-delay';
      SET 'restart-strategy.fixed-delay.attempts' = '1';
      SET 'restart-strategy.fixed-delay.delay' = '1 s';
      CREATE TEMPORARY TABLE src (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json',
        'errors.mode' = 'fail');
      CREATE TEMPORARY TABLE sink (id INT) WITH ('connector' = 'blackhole');
      INSERT INTO sink SELECT id FROM src;
    """
    result = streamshell("-e", script, home=tmp_path / "home", timeout=300)
    assert result.code == 1, result.err
    failed = [line for line in result.err.splitlines() if " failed: " in line]
    assert len(failed) == 1, result.err
    assert re.fullmatch(r"streamshell: job \w+ \(insert-into_sink\) failed: table src: .*ids\.json:2.*", failed[0]), failed
    assert "Traceback" not in result.err
