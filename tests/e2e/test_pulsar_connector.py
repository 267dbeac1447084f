"""Pulsar tables against the real broker: the scenario DDL, json values with metadata, raw keys, tombstones."""

from __future__ import annotations

import json
import logging
import time
import uuid

import pulsar

from tests.spark.helpers import run, take

QUIET = logging.getLogger("tests.pulsar")
QUIET.setLevel(logging.CRITICAL)


def topic_name(prefix: str) -> str:
    return f"persistent://public/default/{prefix}-{uuid.uuid4().hex[:8]}"


def ddl(brokers, name: str, topic: str, columns: str, connector: str = "pulsar", extra: str = "") -> str:
    return f"""CREATE TABLE {name} ({columns}) WITH (
      'connector' = '{connector}', 'topic' = '{topic}', 'value.format' = 'json',
      'service-url' = '{brokers.pulsar_service_url}', 'admin-url' = '{brokers.pulsar_admin_url}' {extra});"""


def test_json_values_and_metadata_in_both_spellings(session, brokers):
    topic = topic_name("meta")
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    producer = client.create_producer(topic)
    producer.send(json.dumps({"id": 7, "name": "ada"}).encode(), partition_key="k7", properties={"src": "test"}, event_timestamp=1_700_000_000_123)
    client.close()
    run(
        session,
        ddl(brokers, "t", topic, "id INT, name STRING, eventTime TIMESTAMP(3) METADATA, et TIMESTAMP(3) METADATA FROM 'event_time' VIRTUAL, "
            "properties MAP<STRING, STRING> METADATA, topic STRING METADATA VIRTUAL, sequenceId BIGINT METADATA VIRTUAL, "
            "k STRING METADATA FROM 'key' VIRTUAL"),
    )
    ((op, row),) = take(run(session, "SELECT id, name, eventTime, et, properties, topic, sequenceId, k FROM t;"), 1)
    assert op == "+I"
    assert row[:2] == (7, "ada")
    assert row[2] == row[3] and row[2].strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] == "2023-11-14 22:13:20.123"
    assert dict(row[4]) == {"src": "test"} and row[5] == topic and row[6] == 0 and row[7] == "k7"


def test_upsert_sink_writes_raw_keys_json_values_and_properties(session, brokers):
    topic = topic_name("upsert")
    run(
        session,
        ddl(brokers, "counts", topic, "accountId STRING, userCount BIGINT, PRIMARY KEY (accountId) NOT ENFORCED",
            connector="upsert-pulsar", extra=", 'key.format' = 'raw'"),
    )
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    run(session, "INSERT INTO counts VALUES ('100', 2);")
    message = reader.read_next(timeout_millis=30000)
    assert message.partition_key() == "100"
    assert json.loads(message.data()) == {"accountId": "100", "userCount": 2}
    client.close()


def test_the_scenario_tables_are_accepted_as_written(tmp_path, spark_runtime):
    from pathlib import Path

    from shell.catalog.model import TableDef
    from shell.session import Session
    from tests.sessions import embedded_options
    from shell.sql.parse import parse_script

    pipelines = sorted(Path(__file__).resolve().parents[1].joinpath("scenarios").glob("*/pipeline.sql"))
    assert len(pipelines) == 3  # the seed's two, and the store enrichment
    for pipeline in pipelines:
        session = Session(embedded_options(home=tmp_path / pipeline.parent.name), runtime=spark_runtime)
        created = [session.execute(s) for s in parse_script(pipeline.read_text()) if type(s).__name__ == "CreateTable"]
        assert created and all(m.text == "Table has been created." for m in created)
        assert "users" in session.catalog.names(TableDef)


def test_delete_from_an_upsert_table_writes_a_tombstone_for_its_key(session, brokers):
    topic = topic_name("deleted")
    run(session, ddl(brokers, "users", topic, "uid STRING, n BIGINT, PRIMARY KEY (uid) NOT ENFORCED",
                     connector="upsert-pulsar", extra=", 'key.format' = 'raw'"))
    run(session, "INSERT INTO users VALUES ('a', 1), ('b', 2);")
    assert run(session, "DELETE FROM users WHERE uid IN ('a');").text == "Deleted 1 key from users."
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        reader = client.create_reader(topic, pulsar.MessageId.earliest)
        messages = [reader.read_next(timeout_millis=30000) for _ in range(3)]
    finally:
        client.close()
    assert [(m.partition_key(), m.has_null_value()) for m in messages] == [("a", False), ("b", False), ("a", True)]
    stream = run(session, "SELECT uid, n FROM users;")  # unbounded: read until the delete is in, or 120 s
    current: dict = {}
    deadline = time.monotonic() + 120
    try:
        for batch in stream.batches():
            for change in batch or ():
                current.pop(change.row[0], None) if change.op in ("-D", "-U") else current.__setitem__(change.row[0], change.row)
            if list(current.values()) == [("b", 2)] or time.monotonic() > deadline:
                break
    finally:
        stream.cancel()
    assert list(current.values()) == [("b", 2)]
