"""Every type, every metadata column, partitions and start-up modes of Kafka and Pulsar tables, on the real brokers.

Why it exists: a topic table is only useful if what goes in comes back the same. For both connectors this writes
every supported type with INSERT VALUES and reads it back with SELECT (json: all types; csv: the scalar ones;
raw: STRING and BYTES), NULLs included; reads every metadata column each connector offers, in both spellings
where Pulsar has two, and writes the writable ones; checks that a 3-partition topic keeps each key's order
through our source and our sink; and that each start-up mode starts where it says.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
import threading
import time
import urllib.request
import uuid
from decimal import Decimal

import pytest

from tests.spark.helpers import changes, run, take

QUIET = logging.getLogger("tests.pulsar")
QUIET.setLevel(logging.CRITICAL)
PULSAR_BASE = "persistent://public/default/"

# (column, type, literal written, value read back); the scalar ones are those the csv format can hold.
SCALARS = [
    ("c_tinyint", "TINYINT", "CAST(-7 AS TINYINT)", -7),
    ("c_smallint", "SMALLINT", "CAST(-300 AS SMALLINT)", -300),
    ("c_int", "INT", "2147483647", 2147483647),
    ("c_bigint", "BIGINT", "CAST(-9223372036854775807 AS BIGINT)", -9223372036854775807),
    ("c_float", "FLOAT", "CAST(1.5 AS FLOAT)", 1.5),
    ("c_double", "DOUBLE", "CAST(-2.25E10 AS DOUBLE)", -2.25e10),
    ("c_dec", "DECIMAL(10, 2)", "12345678.91", Decimal("12345678.91")),
    ("c_dec38", "DECIMAL(38, 18)", "CAST('12345678901234567890.123456789012345678' AS DECIMAL(38, 18))",
     Decimal("12345678901234567890.123456789012345678")),
    ("c_bool", "BOOLEAN", "TRUE", True),
    ("c_string", "STRING", "'h\u00e9llo, \"world\"; it''s'", 'h\u00e9llo, "world"; it\'s'),
    ("c_bytes", "BYTES", "FROM_BASE64('AP8Q')", b"\x00\xff\x10"),  # X'00FF10' is tested at the end
    ("c_date", "DATE", "DATE '2024-02-29'", dt.date(2024, 2, 29)),
    ("c_ts", "TIMESTAMP(3)", "TIMESTAMP '2024-05-06 07:08:09.123'", dt.datetime(2024, 5, 6, 7, 8, 9, 123000)),
    ("c_ltz", "TIMESTAMP_LTZ(3)", "TO_TIMESTAMP_LTZ(1714979289123, 3)", dt.datetime(2024, 5, 6, 7, 8, 9, 123000)),
]  # fmt: skip
NESTED = [
    ("c_array", "ARRAY<INT>", "ARRAY[1, NULL, 3]", [1, None, 3]),
    ("c_map", "MAP<STRING, INT>", "MAP['a', 1, 'b', NULL]", {"a": 1, "b": None}),
    ("c_row", "ROW<a INT, b STRING>", "ROW(1, 'x')", (1, "x")),
]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def plain(value):
    """A collected Spark value in comparable Python form (bytearray -> bytes, Row -> tuple)."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, tuple):  # pyspark Row
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class Kafka:
    name = "kafka"

    def __init__(self, brokers):
        self.brokers = brokers

    def topic(self, prefix: str) -> str:
        return unique(prefix)

    def options(self, topic: str, bounded: bool = True) -> str:
        bound = ", 'scan.bounded.mode' = 'latest-offset'" if bounded else ""
        return f"'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{self.brokers.kafka_bootstrap}'{bound}"

    def read(self, session, sql: str, count: int) -> list[tuple]:
        rows = [row for _, row in changes(run(session, sql))]
        assert len(rows) == count, rows
        return rows


class Pulsar:
    name = "pulsar"

    def __init__(self, brokers):
        self.brokers = brokers

    def topic(self, prefix: str) -> str:
        return PULSAR_BASE + unique(prefix)

    def options(self, topic: str, bounded: bool = True) -> str:
        return (f"'connector' = 'pulsar', 'topic' = '{topic}', 'service-url' = '{self.brokers.pulsar_service_url}', "
                f"'admin-url' = '{self.brokers.pulsar_admin_url}'")  # fmt: skip

    def read(self, session, sql: str, count: int) -> list[tuple]:
        rows = [row for _, row in take(run(session, sql), count)]
        assert len(rows) == count, rows
        return rows


@pytest.fixture(params=["kafka", "pulsar"])
def connector(request, brokers):
    return {"kafka": Kafka, "pulsar": Pulsar}[request.param](brokers)


# ---- types ---------------------------------------------------------------------------------------------------


def round_trip(session, connector, columns, format_options: str) -> None:
    """INSERT a row of every column's literal and a row of NULLs, read both back, compare."""
    topic = connector.topic("types")
    ddl = ", ".join(f"{name} {kind}" for name, kind, _, _ in columns)
    run(session, f"CREATE TABLE t (id INT, {ddl}) WITH ({connector.options(topic)}, {format_options});")
    values = ", ".join(literal for _, _, literal, _ in columns)
    nulls = ", ".join("NULL" for _ in columns)
    run(session, f"INSERT INTO t VALUES (1, {values}), (2, {nulls});")
    names = ", ".join(name for name, _, _, _ in columns)
    rows = sorted(connector.read(session, f"SELECT id, {names} FROM t;", 2))
    got = dict(zip((name for name, _, _, _ in columns), (plain(v) for v in rows[0][1:])))
    expected = {name: value for name, _, _, value in columns}
    assert got == expected
    assert rows[1] == (2, *[None] * len(columns))
    assert run(session, "SHOW ERRORS FOR t;").rows == []


def test_every_type_round_trips_through_json(session, connector):
    round_trip(session, connector, SCALARS + NESTED, "'format' = 'json'")


def test_scalar_types_round_trip_through_csv(session, connector):
    round_trip(session, connector, SCALARS, "'format' = 'csv'")


def test_raw_strings_and_bytes_round_trip(session, connector):
    texts = ["plain", "\u00fcn\u00efc\u00f8d\u00e9 \u2603", "with\nnew line, comma"]
    blobs = [b"\x00\x01\xff", b"{not json", bytes(range(256))]
    if connector.name == "kafka":
        texts.append("")  # Pulsar reads an empty payload as a null one (a tombstone): see test_pulsar_datasource
    run(session, f"CREATE TABLE s (line STRING) WITH ({connector.options(connector.topic('raw-s'))}, 'format' = 'raw');")
    run(session, f"CREATE TABLE b (data BYTES) WITH ({connector.options(connector.topic('raw-b'))}, 'format' = 'raw');")
    escaped = ", ".join("('" + t.replace("'", "''") + "')" for t in texts)
    run(session, f"INSERT INTO s VALUES {escaped};")
    run(session, "INSERT INTO b VALUES " + ", ".join(f"(FROM_BASE64('{base64.b64encode(b).decode()}'))" for b in blobs) + ";")
    assert sorted(r[0] for r in connector.read(session, "SELECT line FROM s;", len(texts))) == sorted(texts)
    assert sorted(bytes(r[0]) for r in connector.read(session, "SELECT data FROM b;", len(blobs))) == sorted(blobs)


def test_a_null_raw_value_is_a_tombstone_and_kept_aside(session, brokers):
    """A NULL written through 'raw' is a message with a null value; read back by an append table it is no row
    (Flink skips it) but a dead letter, so it does not vanish without a trace. (Pulsar: the corpus test.)"""
    kafka = Kafka(brokers)
    topic = kafka.topic("raw-null")
    run(session, f"CREATE TABLE s (line STRING) WITH ({kafka.options(topic)}, 'format' = 'raw');")
    run(session, "INSERT INTO s VALUES ('before'), (NULL), ('after');")
    assert sorted(r[0] for r in kafka.read(session, "SELECT line FROM s;", 2)) == ["after", "before"]
    letters = run(session, "SHOW ERRORS FOR s;").rows
    assert [(r[1].rsplit(":", 1)[0], r[2], r[4]) for r in letters] == [
        (f"{topic}:0", "null value (a tombstone) in an append-only table", None)]  # fmt: skip


# ---- metadata ------------------------------------------------------------------------------------------------


def test_every_kafka_metadata_column(session, brokers):
    from kafka import KafkaProducer

    kafka = Kafka(brokers)
    topic = kafka.topic("meta")
    run(session, f"""CREATE TABLE t (
          id INT, hdrs MAP<STRING, BYTES> METADATA FROM 'headers',
          `topic` STRING METADATA VIRTUAL, `partition` INT METADATA VIRTUAL, `offset` BIGINT METADATA VIRTUAL,
          ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL, ts_type STRING METADATA FROM 'timestamp-type' VIRTUAL
        ) WITH ({kafka.options(topic)}, 'format' = 'json');""")  # fmt: skip
    before = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) - dt.timedelta(seconds=5)
    run(session, "INSERT INTO t VALUES (1, MAP['trace', FROM_BASE64('AQI='), 'empty', FROM_BASE64('')]);")  # writable
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    producer.send(topic, json.dumps({"id": 2}).encode(), headers=[("h", b"v")], timestamp_ms=1714979289123)
    producer.flush()
    producer.close()
    after = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) + dt.timedelta(seconds=5)
    first, second = sorted(kafka.read(session, "SELECT id, hdrs, `topic`, `partition`, `offset`, ts, ts_type FROM t;", 2))
    assert (first[0], plain(first[1]), first[2], first[3], first[4], first[6]) == (
        1, {"trace": b"\x01\x02", "empty": b""}, topic, 0, 0, "CreateTime")  # fmt: skip
    assert before <= first[5] <= after
    assert (second[0], plain(second[1]), second[2:]) == (
        2, {"h": b"v"}, (topic, 0, 1, dt.datetime(2024, 5, 6, 7, 8, 9, 123000), "CreateTime"))  # fmt: skip


def test_every_pulsar_metadata_column_in_both_spellings(session, brokers):
    import pulsar

    p = Pulsar(brokers)
    topic = p.topic("meta")
    run(session, f"""CREATE TABLE t (
          id INT, eventTime TIMESTAMP_LTZ(3) METADATA, properties MAP<STRING, STRING> METADATA,
          event_time TIMESTAMP_LTZ(3) METADATA FROM 'event_time' VIRTUAL,
          publishTime TIMESTAMP_LTZ(3) METADATA VIRTUAL, publish_time TIMESTAMP_LTZ(3) METADATA FROM 'publish_time' VIRTUAL,
          `topic` STRING METADATA VIRTUAL, messageId BYTES METADATA VIRTUAL, message_id BYTES METADATA FROM 'message_id' VIRTUAL,
          sequenceId BIGINT METADATA VIRTUAL, sequence_id BIGINT METADATA FROM 'sequence_id' VIRTUAL,
          `key` STRING METADATA VIRTUAL, producerName STRING METADATA VIRTUAL, producer_name STRING METADATA FROM 'producer_name' VIRTUAL
        ) WITH ({p.options(topic)}, 'format' = 'json');""")  # fmt: skip
    run(session, "INSERT INTO t VALUES (1, TO_TIMESTAMP_LTZ(1714979289123, 3), MAP['origin', 'sql']);")  # writable ones
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        producer = client.create_producer(topic, producer_name=unique("meta-producer"))
        producer.send(json.dumps({"id": 2}).encode(), partition_key="k2", properties={"origin": "client"})
        producer.close()
        reader = client.create_reader(topic, pulsar.MessageId.earliest)
        stored = {json.loads(m.data())["id"]: m for m in (reader.read_next(30000) for _ in range(2))}
    finally:
        client.close()
    rows = {r[0]: r for r in p.read(session, """SELECT id, eventTime, properties, event_time, publishTime, publish_time,
        `topic`, messageId, message_id, sequenceId, sequence_id, `key`, producerName, producer_name FROM t;""", 2)}
    for i, row in rows.items():
        m = stored[i]
        (_, event, props, event2, publish, publish2, tp, mid, mid2, seq, seq2, key, producer_name, producer_name2) = row
        assert event == event2 and publish == publish2 and mid == mid2 and seq == seq2 and producer_name == producer_name2
        assert publish == dt.datetime.fromtimestamp(m.publish_timestamp() / 1000, dt.timezone.utc).replace(tzinfo=None)
        assert (dict(props), tp, bytes(mid)) == (m.properties(), topic, m.message_id().serialize())
        assert producer_name and seq >= 0
        if i == 1:
            assert event == dt.datetime(2024, 5, 6, 7, 8, 9, 123000) and key is None
            assert dict(props) == {"origin": "sql"}
        else:
            assert event is None and key == "k2" and dict(props) == {"origin": "client"}
            assert producer_name.startswith("meta-producer") and seq == 0


def test_physical_columns_named_like_the_connectors_own_columns(session, connector):
    """JSON fields called `timestamp`, `topic`, `offset`, `key`, ... are ordinary columns beside real metadata."""
    topic = connector.topic("names")
    run(session, f"""CREATE TABLE t (
          `timestamp` TIMESTAMP(3), `topic` STRING, `partition` INT, `offset` BIGINT, `key` STRING, `value` STRING,
          publishTime STRING, properties STRING, headers STRING,
          real_topic STRING METADATA FROM 'topic' VIRTUAL
        ) WITH ({connector.options(topic)}, 'format' = 'json');""")  # fmt: skip
    run(session, "INSERT INTO t VALUES (TIMESTAMP '2024-01-02 03:04:05.006', 'mine', 7, 9, 'k', 'v', 'p', 'q', 'h');")
    (row,) = connector.read(session, "SELECT * FROM t;", 1)
    assert row == (dt.datetime(2024, 1, 2, 3, 4, 5, 6000), "mine", 7, 9, "k", "v", "p", "q", "h", topic)


# ---- partitions ----------------------------------------------------------------------------------------------

KEYS, VERSIONS = ("alpha", "bravo", "charlie"), 50


def check_per_key_order(rows: list[tuple], what: str) -> None:
    """rows of (key, seq, partition) in the order read: each key's seqs 0..49 in order, from one partition."""
    for key in KEYS:
        mine = [r for r in rows if r[0] == key]
        assert [r[1] for r in mine] == list(range(VERSIONS)), f"{what}: {key} read as {[r[1] for r in mine]}"
        assert len({r[2] for r in mine}) == 1, f"{what}: {key} spread over partitions {sorted({r[2] for r in mine})}"


def test_a_three_partition_kafka_topic_keeps_each_keys_order(session, brokers):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    kafka = Kafka(brokers)
    source, sink = kafka.topic("parts"), kafka.topic("parts-out")
    admin = KafkaAdminClient(bootstrap_servers=brokers.kafka_bootstrap)
    admin.create_topics([NewTopic(source, 3, 1), NewTopic(sink, 3, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for seq in range(VERSIONS):
        for key in KEYS:
            producer.send(source, key=key.encode(), value=json.dumps({"seq": seq, "k": key}).encode())
    producer.flush()
    producer.close()
    fmt = "'key.format' = 'raw', 'key.fields' = 'k', 'value.format' = 'json'"
    run(session, f"CREATE TABLE src (k STRING, seq INT, p INT METADATA FROM 'partition' VIRTUAL) WITH ({kafka.options(source)}, {fmt});")
    rows = kafka.read(session, "SELECT k, seq, p FROM src;", len(KEYS) * VERSIONS)
    check_per_key_order(rows, "our kafka source")
    assert {r[2] for r in rows} <= {0, 1, 2}

    run(session, f"CREATE TABLE dst (k STRING, seq INT) WITH ({kafka.options(sink)}, {fmt});")
    job = session.jobs.get(run(session, "INSERT INTO dst SELECT k, seq FROM src;").job_id)
    deadline = time.monotonic() + 180
    while job.status == "RUNNING" and time.monotonic() < deadline:
        time.sleep(1)
    assert (job.status, job.failure) == ("FINISHED", None)
    consumer = KafkaConsumer(sink, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000)  # fmt: skip
    written = [(m.key.decode(), json.loads(m.value)["seq"], m.partition) for m in consumer]
    consumer.close()
    written.sort(key=lambda r: r[2])  # partitions are read in any interleaving; within one the order is the log's
    check_per_key_order(written, "our kafka sink")


def test_insert_values_keeps_each_keys_order_on_a_three_partition_kafka_topic(session, brokers):
    from kafka import KafkaConsumer
    from kafka.admin import KafkaAdminClient, NewTopic

    kafka = Kafka(brokers)
    topic = kafka.topic("values-order")
    admin = KafkaAdminClient(bootstrap_servers=brokers.kafka_bootstrap)
    admin.create_topics([NewTopic(topic, 3, 1)])
    admin.close()
    versions = 300  # enough that the tasks' writes overlap even on a busy machine
    run(session, f"CREATE TABLE t (k STRING, seq INT) WITH ({kafka.options(topic)}, 'key.format' = 'raw', "
                 "'key.fields' = 'k', 'value.format' = 'json');")  # fmt: skip
    run(session, "INSERT INTO t VALUES " + ", ".join(f"('{k}', {i})" for i in range(versions) for k in KEYS) + ";")
    consumer = KafkaConsumer(topic, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000)  # fmt: skip
    written = sorted((m.partition, m.offset, m.key.decode(), json.loads(m.value)["seq"]) for m in consumer)
    consumer.close()
    for key in KEYS:
        assert [w[3] for w in written if w[2] == key] == list(range(versions)), f"{key} out of order"


def pulsar_partitioned_topic(brokers, prefix: str, partitions: int = 3) -> str:
    topic = PULSAR_BASE + unique(prefix)
    request = urllib.request.Request(
        f"{brokers.pulsar_admin_url}/admin/v2/{topic.replace('://', '/')}/partitions",
        data=str(partitions).encode(), method="PUT", headers={"Content-Type": "application/json"},
    )  # fmt: skip
    urllib.request.urlopen(request, timeout=30).close()
    return topic


def test_a_three_partition_pulsar_topic_keeps_each_keys_order(session, brokers):
    import pulsar

    p = Pulsar(brokers)
    source, sink = pulsar_partitioned_topic(brokers, "parts"), pulsar_partitioned_topic(brokers, "parts-out")
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        producer = client.create_producer(source, batching_enabled=False)
        for seq in range(VERSIONS):
            for key in KEYS:
                producer.send(json.dumps({"seq": seq, "k": key}).encode(), partition_key=key)
        producer.close()
        fmt = "'key.format' = 'raw', 'key.fields' = 'k', 'value.format' = 'json'"
        run(session, f"CREATE TABLE src (k STRING, seq INT, mid BYTES METADATA FROM 'messageId' VIRTUAL) "
                     f"WITH ({p.options(source)}, {fmt});")  # fmt: skip
        read = p.read(session, "SELECT k, seq, mid FROM src;", len(KEYS) * VERSIONS)
        partition_of = lambda mid: pulsar.MessageId.deserialize(bytes(mid)).partition()  # noqa: E731
        rows = [(k, seq, partition_of(mid)) for k, seq, mid in read]
        check_per_key_order(rows, "our pulsar source")
        assert {r[2] for r in rows} <= {0, 1, 2}

        run(session, f"CREATE TABLE dst (k STRING, seq INT) WITH ({p.options(sink)}, {fmt});")
        job = session.jobs.get(run(session, "INSERT INTO dst SELECT k, seq FROM src;").job_id)
        consumer = client.subscribe(sink, unique("check"), initial_position=pulsar.InitialPosition.Earliest)
        written = []
        deadline = time.monotonic() + 180
        while len(written) < len(KEYS) * VERSIONS and time.monotonic() < deadline:
            try:
                m = consumer.receive(timeout_millis=3000)  # per partition in the log's order
            except pulsar.Timeout:
                continue
            written.append((m.partition_key(), json.loads(m.data())["seq"], m.message_id().partition()))
        assert job.status == "RUNNING", job.failure
        check_per_key_order(written, "our pulsar sink")
    finally:
        client.close()


# ---- start-up modes ------------------------------------------------------------------------------------------


class Trickle:
    """Produces a new message (ids from 1000 up) every half second until stopped: for `latest` start-up."""

    def __init__(self, send):
        self.send, self.stopped = send, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 1000
        while not self.stopped.wait(0.5) and i < 1400:
            self.send(i)
            i += 1

    def __enter__(self) -> "Trickle":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join(10)


def test_kafka_startup_modes(session, brokers):
    from kafka import KafkaProducer

    kafka = Kafka(brokers)
    topic = kafka.topic("startup")
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    base = 1_700_000_000_000
    for i in range(10):
        producer.send(topic, json.dumps({"id": i}).encode(), timestamp_ms=base + i * 1000)
    producer.flush()

    def ids(name: str, options: str, bounded: bool = True) -> list[int]:
        run(session, f"CREATE TABLE {name} (id INT) WITH ({kafka.options(topic, bounded)}, 'format' = 'json', {options});")
        return sorted(r[0] for _, r in changes(run(session, f"SELECT id FROM {name};")))

    assert ids("e", "'scan.startup.mode' = 'earliest-offset'") == list(range(10))
    assert ids("ts", f"'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '{base + 5000}'") == [5, 6, 7, 8, 9]
    assert ids("so", "'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:3'") == list(range(3, 10))

    run(session, f"CREATE TABLE l (id INT) WITH ({kafka.options(topic, bounded=False)}, 'format' = 'json', 'scan.startup.mode' = 'latest-offset');")
    stream = run(session, "SELECT id FROM l;")
    with Trickle(lambda i: (producer.send(topic, json.dumps({"id": i}).encode()), producer.flush())):
        got = [r[0] for _, r in take(stream, 3)]
    producer.close()
    assert all(i >= 1000 for i in got), got


def test_pulsar_startup_modes(session, brokers):
    import pulsar

    p = Pulsar(brokers)
    topic = p.topic("startup")
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        producer = client.create_producer(topic, batching_enabled=False)
        for i in range(10):
            producer.send(json.dumps({"id": i}).encode())
        run(session, f"CREATE TABLE e (id INT) WITH ({p.options(topic)}, 'format' = 'json', 'scan.startup.mode' = 'earliest');")
        assert sorted(r[0] for r in p.read(session, "SELECT id FROM e;", 10)) == list(range(10))
        run(session, f"CREATE TABLE l (id INT) WITH ({p.options(topic)}, 'format' = 'json', 'scan.startup.mode' = 'latest');")
        stream = run(session, "SELECT id FROM l;")
        with Trickle(lambda i: producer.send(json.dumps({"id": i}).encode())):
            got = [r[0] for _, r in take(stream, 3)]
        assert all(i >= 1000 for i in got), got
    finally:
        client.close()


def test_binary_string_literal(session, brokers):
    kafka = Kafka(brokers)
    run(session, f"CREATE TABLE b (data BYTES) WITH ({kafka.options(kafka.topic('hex'))}, 'format' = 'raw');")
    run(session, "INSERT INTO b VALUES (X'00FF10');")
    assert [bytes(r[0]) for r in kafka.read(session, "SELECT data FROM b;", 1)] == [b"\x00\xff\x10"]
