"""PRINT and DESCRIBE TOPIC against the real brokers: raw messages shown, and a proposed table that reads the topic.

Each broker gets one test of the whole path (messages in, PRINT FROM BEGINNING, DESCRIBE TOPIC, the proposal run as
it is printed and queried) and one of PRINT following new messages; errors for missing topics and brokers last.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
import uuid

import pulsar
import pytest
from kafka import KafkaProducer

from shell.errors import ExecutionError
from shell.results import ChangeStream, Rows, Text
from shell.sql import parse_script
from tests.spark.helpers import run, take

QUIET = logging.getLogger("tests.inspect")
QUIET.setLevel(logging.CRITICAL)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def kafka_with(brokers) -> str:
    return f"WITH ('connector' = 'kafka', 'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}')"


def pulsar_with(brokers) -> str:
    return (f"WITH ('connector' = 'pulsar', 'service-url' = '{brokers.pulsar_service_url}', "
            f"'admin-url' = '{brokers.pulsar_admin_url}')")  # fmt: skip


def order(i: int) -> dict:
    return {"order_id": f"o{i}", "amount": i + 0.5, "qty": i, "at": f"2024-05-06 07:08:0{i}.250", "tags": ["a"] * i}


def columns_of(ddl: str) -> dict[str, str]:
    (statement,) = parse_script(ddl)
    return {c.name: c.data_type for c in statement.table.columns}


def drain(stream: ChangeStream, timeout: float = 120) -> list[tuple]:
    """Every row of a stream that must end by itself within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    rows = []
    try:
        for batch in stream.batches():
            rows.extend(c.row for c in batch or ())
            assert time.monotonic() < deadline, f"the stream did not end after {timeout} s: {rows}"
    finally:
        stream.cancel()
    return rows


def keep_sending(send, stop: threading.Event) -> threading.Thread:
    """Send a new message every half second until `stop`: a stream started "now" sees some of them."""

    def loop() -> None:
        i = 0
        while not stop.is_set():
            send(i)
            i += 1
            stop.wait(0.5)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def test_kafka_print_describe_and_the_proposal_reads_the_topic(session, brokers):
    topic = unique("inspect")
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for i in range(3):
        producer.send(topic, key=f"o{i}".encode(), value=json.dumps(order(i)).encode())
    producer.flush()

    proposal = run(session, f"DESCRIBE TOPIC '{topic}' SAMPLE 5 {kafka_with(brokers)};")
    assert isinstance(proposal, Text)
    text = proposal.text
    assert f"from 3 messages of Kafka topic '{topic}'" in text and "(it held only 3 of the 5 asked for)" in text
    assert "Keys: UTF-8 text, the same as the value's order_id." in text
    assert columns_of(text) == {"order_id": "STRING", "amount": "DOUBLE", "qty": "BIGINT", "at": "TIMESTAMP(3)",
                                "tags": "ARRAY<STRING>"}  # fmt: skip
    assert f"'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}'" in text
    assert "'key.format' = 'raw'" in text and "'key.fields' = 'order_id'" in text

    run(session, text)  # the proposal, exactly as printed
    table = text.split("CREATE TABLE ", 1)[1].split(" (", 1)[0]
    rows = sorted(row for _, row in take(run(session, f"SELECT order_id, amount, qty, `at`, tags FROM {table};"), 3))
    assert [(r[0], r[1], r[2], r[3].strftime("%H:%M:%S.%f")[:-3], list(r[4])) for r in rows] == [
        ("o0", 0.5, 0, "07:08:00.250", []), ("o1", 1.5, 1, "07:08:01.250", ["a"]), ("o2", 2.5, 2, "07:08:02.250", ["a", "a"]),
    ]  # fmt: skip

    producer.send(topic, key=b"\xff\x00", value=b"\x00\x01\x02")
    producer.flush()
    producer.close()
    printed = run(session, f"PRINT '{topic}' FROM BEGINNING LIMIT 10;")  # no WITH: the table on the topic says where
    assert isinstance(printed, Rows)
    assert printed.columns == ["partition", "offset", "timestamp", "key", "value"]
    assert [r[:2] for r in printed.rows] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert [r[3] for r in printed.rows] == ["o0", "o1", "o2", b"\xff\x00"]
    assert json.loads(printed.rows[0][4]) == order(0) and printed.rows[3][4] == b"\x00\x01\x02"
    assert printed.rows[0][2].year >= 2024
    first = run(session, f"PRINT '{topic}' FROM BEGINNING LIMIT 1 {kafka_with(brokers)};")
    assert [r[3] for r in first.rows] == ["o0"]


def test_kafka_print_follows_new_messages_until_its_limit(session, brokers):
    topic = unique("inspect-live")
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    producer.send(topic, key=b"old", value=b"old message")
    producer.flush()
    stream = run(session, f"PRINT '{topic}' LIMIT 2 {kafka_with(brokers)};")
    assert isinstance(stream, ChangeStream) and stream.bounded

    def send(i: int) -> None:
        producer.send(topic, key=f"k{i}".encode(), value=f"new {i}".encode())
        producer.flush()

    stop = threading.Event()
    sender = keep_sending(send, stop)
    try:
        rows = drain(stream)
    finally:
        stop.set()
        sender.join()
        producer.close()
    assert len(rows) == 2
    assert all(r[4].startswith("new ") and r[3] == "k" + r[4].split()[1] for r in rows), rows
    assert rows[0][1] < rows[1][1]


def create_partitioned(brokers, topic: str, partitions: int) -> None:
    path = topic.replace("persistent://", "/admin/v2/persistent/")
    request = urllib.request.Request(
        f"{brokers.pulsar_admin_url}{path}/partitions", data=str(partitions).encode(), method="PUT",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    urllib.request.urlopen(request, timeout=30).close()


def test_pulsar_print_describe_and_the_proposal_reads_the_topic(session, brokers):
    name = unique("inspect")
    topic = f"persistent://public/default/{name}"
    create_partitioned(brokers, topic, 2)
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    producer = client.create_producer(topic, batching_enabled=False)
    for i in range(4):
        producer.send(json.dumps(order(i)).encode(), partition_key=f"o{i}", properties={"src": "test"})
    client.close()

    printed = run(session, f"PRINT '{name}' FROM BEGINNING LIMIT 10 {pulsar_with(brokers)};")
    assert isinstance(printed, Rows)
    assert printed.columns == ["message_id", "publish_time", "properties", "key", "value"]
    assert sorted(r[3] for r in printed.rows) == ["o0", "o1", "o2", "o3"]
    assert {r[0].split(":")[2] for r in printed.rows} <= {"0", "1"} and all(r[2] == {"src": "test"} for r in printed.rows)
    assert sorted(json.loads(r[4])["order_id"] for r in printed.rows) == ["o0", "o1", "o2", "o3"]

    text = run(session, f"DESCRIBE TOPIC '{name}' SAMPLE 4 {pulsar_with(brokers)};").text
    assert f"from 4 messages of Pulsar topic '{name}'" in text
    assert f"'admin-url' = '{brokers.pulsar_admin_url}'" in text and "'key.fields' = 'order_id'" in text
    assert "-- , publish_time TIMESTAMP_LTZ(3) METADATA VIRTUAL" in text
    run(session, text)
    table = text.split("CREATE TABLE ", 1)[1].split(" (", 1)[0]
    rows = sorted(row for _, row in take(run(session, f"SELECT order_id, qty, `at` FROM {table};"), 4))
    assert [(r[0], r[1], r[2].strftime("%S.%f")[:-3]) for r in rows] == [
        ("o0", 0, "00.250"), ("o1", 1, "01.250"), ("o2", 2, "02.250"), ("o3", 3, "03.250"),
    ]  # fmt: skip


def test_pulsar_print_follows_new_messages_until_its_limit(session, brokers):
    topic = f"persistent://public/default/{unique('inspect-live')}"
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    producer = client.create_producer(topic)
    producer.send(b"old message", partition_key="old")
    stream = run(session, f"PRINT '{topic}' LIMIT 3 {pulsar_with(brokers)};")
    assert isinstance(stream, ChangeStream)
    stop = threading.Event()
    sender = keep_sending(lambda i: producer.send(f"new {i}".encode(), partition_key=f"k{i}"), stop)
    try:
        rows = drain(stream, timeout=60)
    finally:
        stop.set()
        sender.join()
        client.close()
    assert len(rows) == 3 and all(r[4].startswith("new ") for r in rows), rows


@pytest.mark.parametrize("system", ["kafka", "pulsar"])
def test_a_missing_topic_is_a_clear_error(session, brokers, system):
    topic = unique("inspect-missing")
    connection = kafka_with(brokers) if system == "kafka" else pulsar_with(brokers)
    with pytest.raises(ExecutionError, match=f"{system}: topic '{topic}' does not exist"):
        run(session, f"DESCRIBE TOPIC '{topic}' SAMPLE 3 {connection};")


def test_an_unreachable_broker_fails_at_once(session):
    started = time.monotonic()
    with pytest.raises(ExecutionError, match="kafka: cannot reach 127.0.0.1:1"):
        run(session, "PRINT 'x' FROM BEGINNING LIMIT 1 WITH ('connector' = 'kafka', 'properties.bootstrap.servers' = '127.0.0.1:1');")
    assert time.monotonic() - started < 10
