"""Real-time mode (`SET 'execution.latency' = 'low'`) on the real broker: a detached Kafka -> Kafka job and a live
SELECT, each showing rows that arrived after it started, long before a micro-batch would have run again.

How a test tells real-time mode from micro-batches without timing anything: the checkpoint interval is set to ten
minutes. In micro-batches that is the least time between two batches, so a row produced after the first batch
waits ten minutes; in real-time mode it is the length of a long-running batch in which every row is written as it
comes. A row produced after the query started and seen within the test's few minutes was written in real time.
"""

from __future__ import annotations

import json
import re
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from kafka import KafkaProducer

from shell.errors import UnsupportedFeatureError
from tests.e2e.cli import streamshell
from tests.e2e.kafka_topics import create_topic, kafka_broker
from tests.spark.helpers import changes, next_changes, run, wait_for

pytestmark = pytest.mark.e2e
__all__ = ["kafka_broker"]  # the fixture, imported for the tests of this module

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "functions" / "text_functions.py"
LONG_BATCH = "10 min"  # a micro-batch job would not look at its input again within a test's run


def tables(bootstrap: str, source: str, sink: str | None = None) -> str:
    ddl = f"""
        CREATE TABLE src (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{source}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset');
    """
    if sink is not None:
        ddl += f"""
        CREATE TABLE snk (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{sink}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}');
        """
    return ddl + f"""
        SET 'execution.latency' = 'low';
        SET 'execution.checkpointing.interval' = '{LONG_BATCH}';
    """


def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for value in values:
        producer.send(topic, value)
    producer.flush()
    producer.close()


def records(bootstrap: str, topic: str) -> list[dict]:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=3000)
    try:
        return [json.loads(m.value) for m in consumer]
    finally:
        consumer.close()


def test_a_detached_job_writes_rows_that_arrive_after_it_started(kafka_broker, tmp_path: Path):
    tag = uuid.uuid4().hex[:8]
    source, sink = f"rt-in-{tag}", f"rt-out-{tag}"
    create_topic(kafka_broker, source, 2)
    create_topic(kafka_broker, sink, 2)
    produce(kafka_broker, source, [json.dumps({"id": 1, "name": "before"}).encode()])
    home = tmp_path / "home"
    script = tmp_path / "start.sql"
    script.write_text(tables(kafka_broker, source, sink) + """
        SET 'pipeline.name' = 'rt';
        INSERT INTO snk SELECT id * 10 AS id, UPPER(name) AS name FROM src WHERE id % 2 = 1;
    """)
    started = streamshell("-f", str(script), home=home)
    assert started.code == 0, started.err[-3000:]
    job_id = re.search(r"Job 'rt' started with id (\w+)\.", started.out).group(1)
    try:
        wait_for(lambda: records(kafka_broker, sink) == [{"id": 10, "name": "BEFORE"}], 180, "the row written before")
        # after the job's first rows: filtered, projected, and a record that is not JSON kept aside, not lost
        produce(kafka_broker, source, [json.dumps({"id": 2, "name": "even"}).encode(),
                                       json.dumps({"id": 3, "name": "after"}).encode(), b"{not json"])  # fmt: skip
        wait_for(lambda: len(records(kafka_broker, sink)) >= 2, 180, "the row written after")
        assert sorted(r["id"] for r in records(kafka_broker, sink)) == [10, 30]
        assert {r["name"] for r in records(kafka_broker, sink)} == {"BEFORE", "AFTER"}

        def kept() -> bool:
            shown = streamshell("--result-mode", "tableau", "-e", "SHOW ERRORS FOR src", home=home)
            return "{not json" in shown.out
        wait_for(kept, 120, "the bad record in the dead letters")
    finally:
        stopped = streamshell("-e", f"STOP JOB '{job_id}'", home=home)
        assert stopped.code == 0, stopped.err[-2000:]


def test_a_select_shows_rows_as_they_arrive(kafka_broker, session):
    tag = uuid.uuid4().hex[:8]
    source = f"rt-sel-{tag}"
    create_topic(kafka_broker, source, 2)
    produce(kafka_broker, source, [json.dumps({"id": 2, "name": "before"}).encode()])
    run(session, tables(kafka_broker, source))
    stream = run(session, "SELECT id, UPPER(name) AS name, CAST(id AS DECIMAL(10, 2)) AS amount FROM src WHERE id > 1")
    try:
        seen = next_changes(stream, 1)
        produce(kafka_broker, source, [json.dumps({"id": i, "name": f"n{i}"}).encode() for i in (1, 3, 4, 5)])
        seen += next_changes(stream, 3)
    finally:
        stream.cancel()
    assert sorted(row for _, row in seen) == [(2, "BEFORE", Decimal("2.00"))] + [(i, f"N{i}", Decimal(f"{i}.00")) for i in range(3, 6)]
    assert {op for op, _ in seen} == {"+I"}


def test_cancelling_a_select_stops_its_queries(kafka_broker, session):
    source = f"rt-cancel-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_broker, source, 1)
    produce(kafka_broker, source, [b"{not json", json.dumps({"id": 7, "name": "x"}).encode()])
    run(session, tables(kafka_broker, source))
    stream = run(session, "SELECT id, name FROM src")
    try:
        assert next_changes(stream, 1) == [("+I", (7, "x"))]
        # the bad record is kept by the dead-letter query beside it, which has the spare slot
        wait_for(lambda: "{not json" in str(run(session, "SHOW ERRORS FOR src").rows), 120, "the bad record kept")
    finally:
        stream.cancel()
    spark = session.runtime.get()
    wait_for(lambda: spark.streams.active == [], 60, "every query of the SELECT stopped")


def test_a_union_of_topics_through_a_view_into_an_upsert_topic(kafka_broker, session):
    tag = uuid.uuid4().hex[:8]
    first, second, sink = f"rt-a-{tag}", f"rt-b-{tag}", f"rt-up-{tag}"
    for topic in (first, second, sink):
        create_topic(kafka_broker, topic, 1)
    run(session, tables(kafka_broker, first) + f"""
        CREATE TABLE more (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{second}',
          'format' = 'json', 'properties.bootstrap.servers' = '{kafka_broker}', 'scan.startup.mode' = 'earliest-offset');
        CREATE TABLE latest (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
          'topic' = '{sink}', 'properties.bootstrap.servers' = '{kafka_broker}', 'key.format' = 'json',
          'value.format' = 'json');
        CREATE VIEW everyone AS SELECT id, name FROM src UNION ALL SELECT id, UPPER(name) AS name FROM more;
    """)
    run(session, "INSERT INTO latest SELECT id, name FROM everyone WHERE id > 0")
    try:
        produce(kafka_broker, first, [json.dumps({"id": 1, "name": "a"}).encode()])
        produce(kafka_broker, second, [json.dumps({"id": 2, "name": "b"}).encode(),
                                       json.dumps({"id": -1, "name": "gone"}).encode()])  # fmt: skip
        wait_for(lambda: len(records(kafka_broker, sink)) >= 2, 180, "both topics' rows")
        assert sorted((r["id"], r["name"]) for r in records(kafka_broker, sink)) == [(1, "a"), (2, "B")]
    finally:
        for query in session.runtime.get().streams.active:
            query.stop()


@pytest.mark.parametrize(("sql", "reason"), [
    ("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
     "GROUP BY window_start, window_end", "it aggregates"),
    ("SELECT DISTINCT name FROM src", "it aggregates"),
    ("SELECT s.id FROM src s JOIN src t ON s.id = t.id AND t.ts BETWEEN s.ts AND s.ts + INTERVAL '1' SECOND",
     "it joins"),
    ("SELECT shout(name) AS loud FROM src", "it calls a Python function"),
])  # fmt: skip
def test_a_query_spark_cannot_run_in_real_time_is_refused_before_it_starts(kafka_broker, session, sql, reason):
    source = f"rt-no-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_broker, source, 1)
    run(session, f"""
        SET 'python.files' = '{EXAMPLE}';
        CREATE TEMPORARY FUNCTION shout AS 'text_functions.shout' LANGUAGE PYTHON;
        CREATE TABLE src (id BIGINT, name STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'kafka',
          'topic' = '{source}', 'format' = 'json', 'properties.bootstrap.servers' = '{kafka_broker}');
        SET 'execution.latency' = 'low';
    """)
    with pytest.raises(UnsupportedFeatureError) as refused:
        run(session, sql)
    assert str(refused.value).startswith(f"real-time mode ('execution.latency' = 'low'): {reason}"), refused.value
    assert session.runtime.get().streams.active == []


def test_a_query_that_keeps_state_is_refused_before_it_starts(kafka_broker, session):
    source = f"rt-agg-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_broker, source, 1)
    run(session, tables(kafka_broker, source))
    with pytest.raises(UnsupportedFeatureError, match="real-time mode .*: it keeps state \\(an aggregation"):
        run(session, "SELECT name, COUNT(*) FROM src GROUP BY name")
    assert session.runtime.get().streams.active == []


def test_more_partitions_than_task_slots_are_refused(kafka_broker, session):
    source = f"rt-wide-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_broker, source, 3)  # empty: the broker says how many partitions, not the records
    run(session, tables(kafka_broker, source))
    with pytest.raises(UnsupportedFeatureError, match="it reads 3 partitions, and Spark \\(local\\[2\\]\\) has 2 slots"):
        run(session, "SELECT id FROM src")
    assert session.runtime.get().streams.active == []


def test_a_query_of_no_table_is_answered_at_once(session):
    run(session, "SET 'execution.latency' = 'low'")
    assert [row for _, row in changes(run(session, "SELECT 1 AS one"))] == [(1,)]
