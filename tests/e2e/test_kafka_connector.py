"""Kafka tables against the real broker: types and metadata through json, keys, upserts, bad records kept."""

from __future__ import annotations

import json
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer

from shell.errors import ExecutionError
from shell.results import Rows
from tests.spark.helpers import changes, run


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def consume(brokers, topic: str, count: int) -> list:
    consumer = KafkaConsumer(
        topic, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=20000
    )
    messages = []
    for message in consumer:
        messages.append(message)
        if len(messages) == count:
            break
    consumer.close()
    return messages


def test_json_round_trip_of_types_with_metadata(session, brokers):
    topic = unique("types")
    run(
        session,
        f"""CREATE TABLE t (
          id BIGINT, name STRING, price DECIMAL(10, 2), ok BOOLEAN, ts TIMESTAMP(3), tags ARRAY<STRING>,
          attrs MAP<STRING, STRING>, point ROW<x DOUBLE, y DOUBLE>,
          `offset` BIGINT METADATA VIRTUAL, part INT METADATA FROM 'partition' VIRTUAL, tp STRING METADATA FROM 'topic' VIRTUAL
        ) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}',
                'format' = 'json', 'scan.bounded.mode' = 'latest-offset');""",
    )
    run(
        session,
        "INSERT INTO t VALUES (1, 'ada', 12.50, TRUE, TIMESTAMP '2024-05-06 07:08:09.123', ARRAY['a', 'b'], "
        "MAP['k', 'v'], ROW(1.5, 2.5)), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL);",
    )
    first, second = sorted((json.loads(m.value) for m in consume(brokers, topic, 2)), key=lambda v: v["id"])
    assert second == {"id": 2, "name": None, "price": None, "ok": None, "ts": None, "tags": None, "attrs": None, "point": None}
    assert first == {
        "id": 1, "name": "ada", "price": 12.5, "ok": True, "ts": "2024-05-06 07:08:09.123",
        "tags": ["a", "b"], "attrs": {"k": "v"}, "point": {"x": 1.5, "y": 2.5},
    }  # fmt: skip
    rows = sorted(r for _, r in changes(run(session, "SELECT id, name, price, ok, ts, tags, attrs, point, `offset`, part, tp FROM t;")))
    assert [r[0] for r in rows] == [1, 2]
    one = rows[0]
    assert (one[1], float(one[2]), one[3], one[4].strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]) == ("ada", 12.5, True, "2024-05-06 07:08:09.123")
    assert (list(one[5]), dict(one[6]), (one[7].x, one[7].y)) == (["a", "b"], {"k": "v"}, (1.5, 2.5))
    assert {r[8] for r in rows} == {0, 1} and {r[9] for r in rows} == {0} and {r[10] for r in rows} == {topic}
    assert rows[1][1:8] == (None,) * 7


def test_a_message_limit_reads_a_topic_in_several_micro_batches(session, brokers):
    topic = unique("limited")
    run(session, f"""CREATE TABLE t (id INT) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'format' = 'json',
        'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'scan.bounded.mode' = 'latest-offset',
        'source.max-messages-per-trigger' = '2');""")
    run(session, "INSERT INTO t VALUES (1), (2), (3), (4), (5);")
    batches = [[c.row[0] for c in batch] for batch in run(session, "SELECT id FROM t;").batches() if batch]
    assert sorted(i for b in batches for i in b) == [1, 2, 3, 4, 5]
    assert len(batches) >= 3 and max(len(b) for b in batches) <= 2, batches


def test_raw_keys_and_upsert_tombstones_on_the_sink(session, brokers):
    topic = unique("upsert")
    run(
        session,
        f"""CREATE TABLE counts (account STRING, n BIGINT, PRIMARY KEY (account) NOT ENFORCED) WITH (
          'connector' = 'upsert-kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}',
          'key.format' = 'raw', 'value.format' = 'json');""",
    )
    run(session, "INSERT INTO counts VALUES ('a', 1), ('b', 2);")
    messages = consume(brokers, topic, 2)
    assert sorted((m.key, json.loads(m.value)) for m in messages) == [
        (b"a", {"account": "a", "n": 1}),
        (b"b", {"account": "b", "n": 2}),
    ]


def bounded_table_of(session, brokers, prefix: str, bodies: list[bytes]) -> str:
    """A new topic holding `bodies`, read to its end by table `src (id INT, name STRING)` (json); its name."""
    topic = unique(prefix)
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for body in bodies:
        producer.send(topic, value=body)
    producer.flush()
    producer.close()
    run(
        session,
        f"""CREATE TABLE src (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{topic}',
          'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');""",
    )
    return topic


def test_bad_records_are_kept_aside_and_the_query_goes_on(session, brokers):
    bodies = [b'{"id": 1, "name": "ok"}', b"{not json", b'{"id": "abc", "name": "x"}', b"\x00\xff\xfe", b'{"id": 2, "name": "fine"}']
    topic = bounded_table_of(session, brokers, "bad", bodies)
    assert sorted(r for _, r in changes(run(session, "SELECT id, name FROM src;"))) == [(1, "ok"), (2, "fine")]
    errors = run(session, "SHOW ERRORS FOR src;")
    assert isinstance(errors, Rows) and len(errors.rows) == 3
    by_position = {row[1]: row for row in errors.rows}
    assert set(by_position) == {f"{topic}:0:1", f"{topic}:0:2", f"{topic}:0:3"}
    assert by_position[f"{topic}:0:1"][4] == "{not json"
    assert "id" in by_position[f"{topic}:0:2"][2]
    assert by_position[f"{topic}:0:3"][4] == "x'00fffe'"


def test_errors_mode_fail_stops_the_query(session, brokers):
    topic = unique("fail")
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    producer.send(topic, value=b"{broken")
    producer.flush()
    producer.close()
    run(
        session,
        f"""CREATE TABLE src (id INT) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'errors.mode' = 'fail',
          'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');""",
    )
    with pytest.raises(ExecutionError, match=f"table src: a record does not decode at {topic}:0:0"):
        changes(run(session, "SELECT id FROM src;"))


def test_a_column_in_the_key_and_in_the_value(session, brokers):
    """Flink's default layout: key.fields names a column that the value (fields-include ALL) has too."""
    topic = unique("keyed")
    run(
        session,
        f"""CREATE TABLE t (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{topic}',
          'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'key.format' = 'json', 'key.fields' = 'id',
          'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');""",
    )
    run(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b');")
    messages = [(json.loads(m.key), json.loads(m.value)) for m in consume(brokers, topic, 2)]
    assert sorted(messages, key=lambda kv: kv[0]["id"]) == [
        ({"id": 1}, {"id": 1, "name": "a"}),
        ({"id": 2}, {"id": 2, "name": "b"}),
    ]
    assert sorted(r for _, r in changes(run(session, "SELECT id, name FROM t;"))) == [(1, "a"), (2, "b")]


def test_a_stateful_query_keeps_its_bad_records_itself(session, brokers):
    """A GROUP BY counts its table's bad records as it reads and reads again only the micro-batches that had some,
    by offset range: every bad record is kept once, and no second query reads the topic (its files would sit beside
    a `_spark_metadata` folder)."""
    bodies = [b'{"id": 1, "name": "a"}', b"{not json", b'{"id": 2, "name": "a"}', b'{"id": "x", "name": "b"}']
    topic = bounded_table_of(session, brokers, "bad-agg", bodies)
    final = {}
    for op, row in changes(run(session, "SELECT name, COUNT(*) AS n FROM src GROUP BY name;")):
        if op in ("+I", "+U"):
            final[row[0]] = row[1]
        else:
            final.pop(row[0], None)
    assert final == {"a": 2}
    errors = run(session, "SHOW ERRORS FOR src;")
    assert sorted(row[1] for row in errors.rows) == [f"{topic}:0:1", f"{topic}:0:3"]
    folder = session.home / "errors" / "src"
    files = list(folder.rglob("part-*.json"))
    assert files and all(f.parent.name.startswith("batch-") for f in files)
    assert not list(folder.rglob("_spark_metadata"))


def test_in_a_filtered_upsert_table_follows_updates_that_leave_the_filter(session, brokers):
    items, flags = unique("items"), unique("flags")
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for i, k in [(1, "k1"), (2, "k2"), (3, "k3")]:
        producer.send(items, value=json.dumps({"id": i, "k": k}).encode())
    for k, state in [("k1", "yes"), ("k2", "yes"), ("k3", "yes"), ("k1", "no"), ("k3", None)]:
        body = None if state is None else json.dumps({"k": k, "state": state}).encode()
        producer.send(flags, key=k.encode(), value=body)
    producer.flush()
    producer.close()
    bootstrap = brokers.kafka_bootstrap
    run(session, f"""
        CREATE TABLE items (id INT, k STRING) WITH ('connector' = 'kafka', 'topic' = '{items}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'scan.bounded.mode' = 'latest-offset');
        CREATE TABLE flags (k STRING, state STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
          'topic' = '{flags}', 'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'raw',
          'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');""")
    rows = changes(run(session, "SELECT id FROM items WHERE k IN (SELECT k FROM flags WHERE state = 'yes');"))
    shown: list = []
    for op, row in rows:
        shown.remove(row) if op == "-D" else shown.append(row)
    # k1's new row fails the filter, so k1 left the filtered table (it is not kept at its old 'yes'); k3 was deleted
    assert shown == [(2,)]


def test_delete_from_an_upsert_table_writes_a_tombstone_for_its_key(session, brokers):
    topic = unique("deleted")
    run(session, f"""CREATE TABLE users (uid STRING, n BIGINT, PRIMARY KEY (uid) NOT ENFORCED) WITH (
          'connector' = 'upsert-kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}',
          'key.format' = 'raw', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');""")
    run(session, "INSERT INTO users VALUES ('a', 1), ('b', 2);")
    assert run(session, "DELETE FROM users WHERE uid = 'a';").text == "Deleted 1 key from users."
    messages = [(m.key, m.value) for m in consume(brokers, topic, 3)]
    assert (b"a", None) in messages and len([m for m in messages if m[1] is None]) == 1, messages
    current: dict = {}
    for op, row in changes(run(session, "SELECT uid, n FROM users;")):
        current.pop(row[0], None) if op in ("-D", "-U") else current.__setitem__(row[0], row)
    assert list(current.values()) == [("b", 2)]
