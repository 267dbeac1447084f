"""The `streamshell-pulsar` Spark data source against the real Pulsar broker (never mocked).

Why this exists: the reader and writer are the only way Pulsar tables reach Spark, and what matters about them
(every column, startup modes, partitions, admission control, restart from a checkpoint, tombstones, ledger
roll-over) only shows against a broker. Messages are produced and checked with pulsar-client directly.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import urllib.request
import uuid

import pytest

from shell.connectors.pulsar_common import (
    Position,
    PulsarOptionError,
    admin_auth_headers,
    advance,
    count_entries,
    decode_position,
    encode_position,
    ledger_entries,
    parse_options,
    pattern_namespace,
    client_logger,
)

pytestmark = pytest.mark.e2e

FORMAT = "streamshell-pulsar"
EARLIEST = {"scan.startup.mode": "earliest"}
UTC = dt.timezone.utc


def unique_topic(prefix: str) -> str:
    return f"persistent://public/default/{prefix}-{uuid.uuid4().hex[:10]}"


def admin_call(brokers, method: str, path: str, body: bytes | None = None):
    request = urllib.request.Request(
        f"{brokers.pulsar_admin_url}/admin/v2/{path}", data=body, method=method,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        raw = response.read()
        return json.loads(raw) if raw else None


def create_partitioned(brokers, topic: str, partitions: int) -> None:
    admin_call(brokers, "PUT", topic.replace("persistent://", "persistent/") + "/partitions", str(partitions).encode())


def unload(brokers, topic: str) -> None:
    """Unload the topic: the broker closes its ledger and opens a new, empty one when it is used again."""
    admin_call(brokers, "PUT", topic.replace("persistent://", "persistent/") + "/unload")


@pytest.fixture
def spark(spark_runtime):
    from shell.connectors.pulsar_source import register

    session = spark_runtime.get()
    register(session)  # also sets this thread's active session, which Spark's write path needs
    return session


@pytest.fixture
def client(brokers):
    import pulsar

    c = pulsar.Client(brokers.pulsar_service_url, logger=client_logger())
    yield c
    c.close()


def reader(spark, brokers, topic: str | None, options: dict[str, str] | None = None):
    stream = (
        spark.readStream.format(FORMAT)
        .option("service-url", brokers.pulsar_service_url)
        .option("admin-url", brokers.pulsar_admin_url)
    )
    if topic is not None:
        stream = stream.option("topic", topic)
    return stream.options(**(options or {})).load()


def read_available(spark, brokers, topic, checkpoint, options: dict[str, str] | None = None):
    """Run the source with Trigger.AvailableNow into a memory table; return (rows, input rows per batch)."""
    name = f"pulsar_{uuid.uuid4().hex[:10]}"
    frame = reader(spark, brokers, topic, options)
    query = (
        frame.writeStream.format("memory").queryName(name)
        .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
    )
    try:
        assert query.awaitTermination(180), "the query did not finish"
        assert query.exception() is None, query.exception()
        batches = [p["numInputRows"] for p in query.recentProgress]
        return spark.sql(f"SELECT * FROM {name}").collect(), batches
    finally:
        query.stop()
        spark.catalog.dropTempView(name)


def wait_for(predicate, timeout: float = 90.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


# ---- reading -------------------------------------------------------------------------------------------------


def test_reads_every_column_from_earliest(spark, brokers, client, tmp_path):
    import pulsar

    topic = unique_topic("ds-columns")
    producer = client.create_producer(topic, producer_name=f"p-{uuid.uuid4().hex[:6]}")
    before = dt.datetime.now(UTC) - dt.timedelta(seconds=5)
    sent = []
    for i in range(20):
        props = {"i": str(i), "kind": "even" if i % 2 == 0 else "odd"}
        mid = producer.send(f"v{i}".encode(), partition_key=f"k{i % 3}", properties=props,
                            event_timestamp=1_700_000_000_000 + i)
        sent.append((f"k{i % 3}", f"v{i}", props, mid))
    null_id = producer.send(None, partition_key="gone")  # a null-value message (what the sink sends for NULL)
    empty_id = producer.send(b"", partition_key="gone-too")  # a zero-byte payload
    unkeyed_id = producer.send(b"no key")  # no key, no properties, no event time
    after = dt.datetime.now(UTC) + dt.timedelta(seconds=5)

    rows, _ = read_available(spark, brokers, topic, tmp_path / "cp", EARLIEST)

    assert len(rows) == 23
    by_id = {bytes(r.messageId): r for r in rows}
    for i, (key, value, props, mid) in enumerate(sent):
        row = by_id[mid.serialize()]  # the messageId column is MessageId.serialize()
        assert pulsar.MessageId.deserialize(bytes(row.messageId)) == mid
        assert (bytes(row.key), bytes(row.value), row.properties) == (key.encode(), value.encode(), props)
        assert row.topic == topic and row.partition == -1
        assert row.sequenceId == i
        assert row.producerName == producer.producer_name()
        assert row.eventTime.replace(tzinfo=UTC) == dt.datetime.fromtimestamp(1_700_000_000 + i / 1000, UTC)
        assert before <= row.publishTime.replace(tzinfo=UTC) <= after
    for tombstone_id, key in ((null_id, b"gone"), (empty_id, b"gone-too")):
        row = by_id[tombstone_id.serialize()]
        assert row.value is None and bytes(row.key) == key  # both kinds of empty payload read as NULL
    plain = by_id[unkeyed_id.serialize()]
    assert (plain.key, bytes(plain.value), plain.properties, plain.eventTime) == (None, b"no key", {}, None)


def test_latest_startup_skips_what_was_there(spark, brokers, client, tmp_path):
    topic = unique_topic("ds-latest")
    producer = client.create_producer(topic)
    for i in range(5):
        producer.send(f"old{i}".encode())
    name = f"pulsar_latest_{uuid.uuid4().hex[:8]}"
    query = (
        reader(spark, brokers, topic).writeStream.format("memory").queryName(name)  # default mode: latest
        .option("checkpointLocation", str(tmp_path / "cp")).start()
    )
    try:
        wait_for(lambda: query.lastProgress is not None, what="the first trigger")
        for i in range(5):
            producer.send(f"new{i}".encode())
        wait_for(lambda: spark.sql(f"SELECT count(*) AS n FROM {name}").first().n >= 5, what="5 rows")
        time.sleep(1)
        values = sorted(bytes(r.value).decode() for r in spark.sql(f"SELECT value FROM {name}").collect())
    finally:
        query.stop()
        spark.catalog.dropTempView(name)
    assert values == [f"new{i}" for i in range(5)]


def test_partitioned_topic_reads_every_partition_in_key_order(spark, brokers, client, tmp_path):
    topic = unique_topic("ds-partitioned")
    create_partitioned(brokers, topic, 3)
    producer = client.create_producer(topic, batching_enabled=True, batching_max_publish_delay_ms=5)
    keys = [f"key-{k}" for k in range(8)]
    for n in range(25):
        for key in keys:
            producer.send_async(f"{key}:{n}".encode(), None, partition_key=key)
    producer.flush()

    rows, _ = read_available(spark, brokers, topic, tmp_path / "cp", EARLIEST)

    assert len(rows) == 200
    assert {r.partition for r in rows} == {0, 1, 2}
    assert {r.topic for r in rows} == {topic}
    for key in keys:
        mine = [r for r in rows if bytes(r.key).decode() == key]
        assert len({r.partition for r in mine}) == 1, "a key must stay in one partition"
        counters = [int(bytes(r.value).decode().split(":")[1]) for r in mine]
        assert counters == list(range(25)), f"{key} out of order"


def test_admission_control_caps_each_batch(spark, brokers, client, tmp_path):
    topic = unique_topic("ds-admission")
    producer = client.create_producer(topic)  # no batching: one message per entry
    for i in range(35):
        producer.send(f"m{i}".encode())

    rows, batches = read_available(
        spark, brokers, topic, tmp_path / "cp", {**EARLIEST, "source.max-messages-per-trigger": "10"}
    )

    data_batches = [n for n in batches if n]
    assert len(data_batches) >= 4 and max(data_batches) <= 10, batches
    assert sum(batches) == 35 and len(rows) == 35
    assert sorted(bytes(r.value) for r in rows) == sorted(f"m{i}".encode() for i in range(35))


def test_admission_control_with_batched_producer_and_rolled_ledgers(spark, brokers, client, tmp_path):
    """Entries hold many messages here, and the topic spans ledgers (one of them still empty)."""
    topic = unique_topic("ds-ledgers")
    for part in range(3):
        producer = client.create_producer(topic, batching_enabled=True, batching_max_messages=20,
                                          batching_max_publish_delay_ms=50)
        for i in range(100):
            producer.send_async(f"{part}-{i}".encode(), None)
        producer.flush()
        producer.close()
        unload(brokers, topic)  # next use opens a new ledger; the last one stays empty

    stats = admin_call(brokers, "GET", topic.replace("persistent://", "persistent/") + "/internalStats")
    assert len([n for _, n in ledger_entries(stats) if n > 0]) >= 2, stats

    rows, batches = read_available(
        spark, brokers, topic, tmp_path / "cp", {**EARLIEST, "source.max-messages-per-trigger": "120"}
    )
    assert sum(batches) == 300 and len(rows) == 300
    assert len({bytes(r.messageId) for r in rows}) == 300
    assert len([n for n in batches if n]) >= 2 and max(batches) <= 120 + 20, batches  # within one entry


def test_restart_from_checkpoint_neither_loses_nor_repeats(spark, brokers, client, tmp_path):
    topic = unique_topic("ds-restart")
    producer = client.create_producer(topic)
    for i in range(30):
        producer.send(f"a{i}".encode())
    out, checkpoint = tmp_path / "out", tmp_path / "cp"

    def start(trigger):
        frame = reader(spark, brokers, topic, {**EARLIEST, "source.max-messages-per-trigger": "10"})
        writer = frame.writeStream.format("parquet").option("path", str(out))
        return writer.option("checkpointLocation", str(checkpoint)).trigger(**trigger).start()

    first = start({"processingTime": "2 seconds"})
    try:
        wait_for(lambda: any(p["numInputRows"] for p in first.recentProgress), what="a first batch")
    finally:
        first.stop()
    done_first = sum(p["numInputRows"] for p in first.recentProgress)
    assert 10 <= done_first <= 30

    for i in range(20):
        producer.send(f"b{i}".encode())
    second = start({"availableNow": True})
    assert second.awaitTermination(180) and second.exception() is None

    values = [bytes(r.value).decode() for r in spark.read.parquet(str(out)).collect()]
    assert sorted(values) == sorted([f"a{i}" for i in range(30)] + [f"b{i}" for i in range(20)])


def test_topic_pattern_reads_matching_topics(spark, brokers, client, tmp_path):
    tag = uuid.uuid4().hex[:8]
    wanted = [f"persistent://public/default/pat-{tag}-one", f"persistent://public/default/pat-{tag}-two"]
    other = f"persistent://public/default/nopat-{tag}"
    create_partitioned(brokers, wanted[1], 2)
    for topic in [*wanted, other]:
        producer = client.create_producer(topic)
        for i in range(4):
            producer.send(f"{topic}:{i}".encode(), partition_key=str(i))
        producer.close()

    pattern = f"persistent://public/default/pat-{tag}-.*"
    rows, _ = read_available(spark, brokers, None, tmp_path / "cp", {**EARLIEST, "topic-pattern": pattern})

    assert sorted(r.topic for r in rows) == sorted(wanted * 4)
    assert {bytes(r.value).decode().rsplit(":", 1)[0] for r in rows} == set(wanted)


def test_auth_and_tls_options_reach_the_client_and_admin_calls(spark, brokers, client, tmp_path):
    """The standalone broker does not check credentials, so this proves the wiring, not the authentication."""
    topic = unique_topic("ds-auth")
    client.create_producer(topic).send(b"secret")
    options = {**EARLIEST, "authentication.token": "not-checked", "tls-allow-insecure-connection": "true",
               "properties.operationTimeoutSeconds": "30"}
    rows, _ = read_available(spark, brokers, topic, tmp_path / "cp", options)
    assert [bytes(r.value) for r in rows] == [b"secret"]
    assert admin_auth_headers(parse_options({"service-url": "pulsar://h:1", "topic": "t",
                                             "authentication.token": "abc"})) == {"Authorization": "Bearer abc"}
    basic = parse_options({"service-url": "pulsar://h:1", "topic": "t", "auth-plugin": "basic",
                           "auth-params": '{"username": "u", "password": "p"}'})
    assert admin_auth_headers(basic) == {"Authorization": "Basic dTpw"}
    assert "not-checked" not in repr(parse_options({"service-url": "pulsar://h:1", "topic": "t",
                                                    "authentication.token": "not-checked"}))


def test_list_of_topics(spark, brokers, client, tmp_path):
    topics = [unique_topic("ds-list-a"), unique_topic("ds-list-b")]
    for topic in topics:
        client.create_producer(topic).send(topic.encode())
    rows, _ = read_available(spark, brokers, ",".join(topics), tmp_path / "cp", EARLIEST)
    assert sorted(r.topic for r in rows) == sorted(topics)


# ---- writing -------------------------------------------------------------------------------------------------


def test_streaming_write_sends_keys_properties_event_time_and_tombstones(spark, brokers, client, tmp_path):
    topic = unique_topic("ds-write")
    create_partitioned(brokers, topic, 2)
    source = tmp_path / "rows"
    event = dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    data = [(f"k{i % 4}", f"v{i}".encode(), {"n": str(i)}, event + dt.timedelta(seconds=i)) for i in range(40)]
    data.append(("k-dead", None, None, None))
    schema = "key STRING, value BINARY, properties MAP<STRING, STRING>, eventTime TIMESTAMP"
    spark.createDataFrame(data, schema).coalesce(1).write.parquet(str(source))  # one task: rows in this order

    query = (
        spark.readStream.schema(schema).parquet(str(source))
        .writeStream.format(FORMAT)
        .option("service-url", brokers.pulsar_service_url).option("topic", topic)
        .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start()
    )
    assert query.awaitTermination(180) and query.exception() is None, query.exception()

    messages = {}
    for partition in range(2):
        for m in _drain(client, f"{topic}-partition-{partition}"):
            messages.setdefault(m.partition_key(), []).append((partition, m))
    assert sum(len(v) for v in messages.values()) == 41
    for key, found in messages.items():
        assert len({p for p, _ in found}) == 1, f"{key} spread over partitions"
    for key, value, props, when in data[:-1]:
        match = [m for _, m in messages[key] if m.data() == value]
        assert len(match) == 1
        assert match[0].properties() == props
        assert match[0].event_timestamp() == int(when.timestamp() * 1000)
    for key in {k for k, *_ in data[:-1]}:  # per key, messages keep the order of the rows
        assert [m.data() for _, m in messages[key]] == [v for k, v, *_ in data[:-1] if k == key]
    (dead,) = [m for _, m in messages["k-dead"]]
    assert dead.has_null_value() and dead.data() == b""


def _drain(client, topic: str) -> list:
    import pulsar

    with_reader = client.create_reader(topic, pulsar.MessageId.earliest)
    try:
        found = []
        while with_reader.has_message_available():
            found.append(with_reader.read_next(30_000))
        return found
    finally:
        with_reader.close()


def test_batch_write_and_read_back(spark, brokers, client, tmp_path):
    topic = unique_topic("ds-batch-write")
    rows = [(f"k{i}".encode(), f"value {i}") for i in range(10)] + [(b"k-null", None)]
    frame = spark.createDataFrame(rows, "key BINARY, value STRING")
    (frame.write.format(FORMAT).option("service-url", brokers.pulsar_service_url)
     .option("topic", topic).mode("append").save())

    messages = _drain(client, topic)
    assert sorted((m.partition_key(), m.data()) for m in messages) == sorted(
        [(f"k{i}", f"value {i}".encode()) for i in range(10)] + [("k-null", b"")]
    )

    read, _ = read_available(spark, brokers, topic, tmp_path / "cp", EARLIEST)
    by_key = {bytes(r.key): r.value for r in read}
    assert by_key[b"k-null"] is None and bytes(by_key[b"k3"]) == b"value 3"


def test_pulsar_to_pulsar_copy(spark, brokers, client, tmp_path):
    """A DataFrame read from Pulsar can be written back as it is (extra columns are ignored)."""
    source, sink = unique_topic("ds-copy-in"), unique_topic("ds-copy-out")
    producer = client.create_producer(source)
    for i in range(12):
        producer.send(f"c{i}".encode(), partition_key=f"k{i}", properties={"p": str(i)}, event_timestamp=1000 + i)
    query = (
        reader(spark, brokers, source, EARLIEST)
        .writeStream.format(FORMAT).option("service-url", brokers.pulsar_service_url).option("topic", sink)
        .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start()
    )
    assert query.awaitTermination(180) and query.exception() is None
    copied = _drain(client, sink)
    assert [(m.partition_key(), m.data(), m.properties(), m.event_timestamp()) for m in copied] == [
        (f"k{i}", f"c{i}".encode(), {"p": str(i)}, 1000 + i) for i in range(12)
    ]


# ---- options -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"topic": "t"}, "option 'service-url' is required"),
        ({"service-url": "pulsar://x:6650", "topic": "t", "scan.startup.mode": "sometime"}, "scan.startup.mode"),
        ({"service-url": "pulsar://x:6650"}, "option 'topic'"),
        ({"service-url": "pulsar://x:6650", "topic": "t", "source.max-messages-per-trigger": "0"}, "positive"),
        ({"service-url": "pulsar://x:6650", "topic": "non-persistent://a/b/c"}, "only persistent topics"),
    ],
)
def test_bad_options_fail_at_load_with_one_line(spark, options, message):
    with pytest.raises(PulsarOptionError, match=message):
        parse_options(options)
    frame = spark.readStream.format(FORMAT)
    for key, value in options.items():
        frame = frame.option(key, value)
    with pytest.raises(Exception) as failure:
        frame.load()
    assert message in str(failure.value)


def test_reading_without_admin_url_fails_clearly(spark, brokers, tmp_path):
    frame = spark.readStream.format(FORMAT).options(**{"service-url": brokers.pulsar_service_url, "topic": "t"}).load()
    query = frame.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "cp")).start()
    with pytest.raises(Exception) as failure:
        query.awaitTermination(120)
    query.stop()
    assert "option 'admin-url' is required" in str(failure.value)


def test_writer_rejects_a_frame_without_value(spark, brokers):
    frame = spark.createDataFrame([("k",)], "key STRING")
    with pytest.raises(Exception) as failure:
        frame.write.format(FORMAT).option("service-url", brokers.pulsar_service_url).option("topic", "t").mode(
            "append").save()
    assert "needs a 'value' column" in str(failure.value)


# ---- positions and entry arithmetic (pure functions, checked here next to their use) ---------------------------


def test_positions_round_trip_through_the_offset_encoding():
    assert decode_position(encode_position(None)) is None
    for position in (Position(5, 7, -1), Position(5, 7, 3)):
        assert decode_position(encode_position(position, 2)) == position


def test_entry_arithmetic_over_several_ledgers():
    stats = {
        "lastConfirmedEntry": "30:4",
        "ledgers": [{"ledgerId": 10, "entries": 3}, {"ledgerId": 20, "entries": 0},
                    {"ledgerId": 30, "entries": 0}],
    }
    ledgers = ledger_entries(stats)
    assert ledgers == [(10, 3), (20, 0), (30, 5)]
    latest = Position(30, 4, -1)
    assert count_entries(ledgers, None, latest) == 8
    assert count_entries(ledgers, Position(10, 1), latest) == 6
    assert advance(ledgers, None, latest, 3) == Position(10, 2)
    assert advance(ledgers, Position(10, 1), latest, 2) == Position(30, 0)
    assert advance(ledgers, Position(10, 1), latest, 7) is None


def test_pattern_namespace_forms():
    assert pattern_namespace("persistent://t1/ns1/a-.*")[0] == "t1/ns1"
    assert pattern_namespace("t1/ns1/a-.*")[1].fullmatch("persistent://t1/ns1/a-b")
    namespace, regex = pattern_namespace("a-.*")
    assert namespace == "public/default" and regex.fullmatch("persistent://public/default/a-1")
    assert not regex.fullmatch("persistent://public/default/b-1")
