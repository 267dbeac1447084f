"""The two scenarios of the original experiment, end to end on the real brokers: each `pipeline.sql` as written,
its input messages produced one at a time (each after the previous one's effect), and exactly the listed
messages at the sink, deletes included. Both run on Pulsar as written in `make test`, and with upsert-kafka tables on
Kafka in `make test-walkthroughs` (STREAMSHELL_SCENARIOS=all; `make test` has Kafka's upsert tables end to end in the
redpanda-bank walkthrough and the Kafka connector's tests).

Topic names get a suffix per run so that earlier runs' messages never mix in. For Kafka the Pulsar metadata
columns become Kafka's (`timestamp`, `headers`, `offset`), since Kafka has no event time or sequence id.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import uuid
from pathlib import Path

import pytest

from tests.sessions import embedded_options
from shell.results import JobStarted
from shell.session import Session
from shell.sql.parse import parse_script
from tests.spark.helpers import wait_for

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"  # a copy of the project's shared scenarios
QUIET = logging.getLogger("tests.scenarios")
QUIET.setLevel(logging.CRITICAL)
PULSAR_TOPIC = re.compile(r"persistent://public/default/([A-Za-z_]+)")
ON_KAFKA_TOO = os.environ.get("STREAMSHELL_SCENARIOS") == "all"
SYSTEMS = ["pulsar", pytest.param("kafka", marks=pytest.mark.skipif(
    not ON_KAFKA_TOO, reason="the scenarios on Kafka: make test-walkthroughs (STREAMSHELL_SCENARIOS=all)"))]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def pulsar_pipeline(sql: str, suffix: str, brokers) -> tuple[str, dict[str, str]]:  # noqa: ANN001
    topics = {f"persistent://public/default/{n}": f"persistent://public/default/{n}-{suffix}" for n in PULSAR_TOPIC.findall(sql)}
    sql = PULSAR_TOPIC.sub(lambda m: topics[m.group(0)], sql)
    sql = sql.replace("pulsar://localhost:6650", brokers.pulsar_service_url).replace("http://localhost:8080", brokers.pulsar_admin_url)
    return sql, topics


def kafka_pipeline(sql: str, suffix: str, brokers) -> tuple[str, dict[str, str]]:  # noqa: ANN001
    topics = {f"persistent://public/default/{n}": f"{n}-{suffix}" for n in PULSAR_TOPIC.findall(sql)}
    sql = PULSAR_TOPIC.sub(lambda m: topics[m.group(0)], sql)
    sql = sql.replace("'upsert-pulsar'", "'upsert-kafka'")
    sql = re.sub(r"'service-url' = '[^']*'", f"'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}'", sql)
    sql = re.sub(r",\s*'admin-url' = '[^']*'", "", sql)
    sql = sql.replace("eventTime TIMESTAMP(3) METADATA,", "eventTime TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL,")
    sql = sql.replace("properties MAP<STRING, STRING> METADATA ,", "properties MAP<STRING, BYTES> METADATA FROM 'headers',")
    sql = sql.replace("sequenceId BIGINT METADATA VIRTUAL", "sequenceId BIGINT METADATA FROM 'offset' VIRTUAL")
    return sql, topics


class PulsarTopics:
    def __init__(self, brokers, sink: str):  # noqa: ANN001
        import pulsar

        self.client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
        self.producers: dict[str, object] = {}
        self.reader = self.client.create_reader(sink, pulsar.MessageId.earliest)

    def send(self, topic: str, key: str, value: dict | None) -> None:
        if topic not in self.producers:
            self.producers[topic] = self.client.create_producer(topic)
        self.producers[topic].send(json.dumps(value).encode() if value is not None else None, partition_key=key)

    def received(self) -> list[dict]:
        out = []
        while self.reader.has_message_available():
            message = self.reader.read_next(timeout_millis=10_000)
            out.append({"key": message.partition_key(), "value": json.loads(message.data()) if message.data() else None})
        return out

    def close(self) -> None:
        self.client.close()


class KafkaTopics:
    def __init__(self, brokers, sink: str):  # noqa: ANN001
        from kafka import KafkaConsumer, KafkaProducer

        self.producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
        self.consumer = KafkaConsumer(sink, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest",
                                      enable_auto_commit=False, consumer_timeout_ms=1000)

    def send(self, topic: str, key: str, value: dict | None) -> None:
        self.producer.send(topic, key=key.encode(), value=json.dumps(value).encode() if value is not None else None)
        self.producer.flush()

    def received(self) -> list[dict]:
        out = []
        for batch in self.consumer.poll(timeout_ms=2000).values():
            for m in batch:
                out.append({"key": m.key.decode(), "value": json.loads(m.value) if m.value is not None else None})
        return out

    def close(self) -> None:
        self.producer.close()
        self.consumer.close()


def processed_rows(job) -> int:  # noqa: ANN001
    return sum(p["numInputRows"] for p in job.query.recentProgress)


SINKS = ("user_count_by_account", "color_and_cheese", "order_details")


def run_scenario(scenario: str, system: str, brokers, tmp_path, spark_runtime) -> tuple[list[dict], list[dict]]:  # noqa: ANN001
    """The messages the scenario's sink received, and those it must receive."""
    folder = SCENARIOS / scenario
    suffix = uuid.uuid4().hex[:8]
    rewrite = pulsar_pipeline if system == "pulsar" else kafka_pipeline
    sql, topics = rewrite((folder / "pipeline.sql").read_text(), suffix, brokers)
    inputs, expected = read_jsonl(folder / "input.jsonl"), read_jsonl(folder / "expected.jsonl")
    sink = topics[next(t for t in topics if t.endswith(SINKS))]
    if system == "kafka":
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=brokers.kafka_bootstrap)
        admin.create_topics([NewTopic(t, num_partitions=1, replication_factor=1) for t in topics.values()])
        admin.close()
    io = (PulsarTopics if system == "pulsar" else KafkaTopics)(brokers, sink)
    session = Session(embedded_options(home=tmp_path / "home"), runtime=spark_runtime)
    try:
        results = [session.execute(s) for s in parse_script(sql)]
        started = [r for r in results if isinstance(r, JobStarted)]
        assert len(started) == 1
        job = session.jobs.jobs[started[0].job_id]
        got: list[dict] = []
        for n, message in enumerate(inputs, start=1):
            io.send(topics[message["topic"]], message["key"], message["value"])
            wait_for(lambda n=n: processed_rows(job) >= n or job.failure, 120, f"the job reading input {n}")
            assert job.failure is None, job.failure
            got += io.received()
        deadline = time.monotonic() + 30
        while len(got) < len(expected) and time.monotonic() < deadline:
            got += io.received()
        return got, expected
    finally:
        session.close()
        io.close()


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("scenario", ["user-count-by-account", "favorite-color-and-cheese"])
def test_scenario_produces_exactly_the_expected_sink_messages(scenario, system, brokers, tmp_path, spark_runtime):
    got, expected = run_scenario(scenario, system, brokers, tmp_path, spark_runtime)
    assert got == expected


def per_key(messages: list[dict]) -> dict[str, list]:
    keyed: dict[str, list] = {}
    for m in messages:
        keyed.setdefault(m["key"], []).append(m["value"])
    return keyed


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_store_enrichment_joins_on_two_keys_with_exactly_the_expected_messages_per_order(
        system, brokers, tmp_path, spark_runtime):
    """Orders joined to users on the user id and to items on the item id, all upsert topics (two chained keyed
    stages, after one that turns the orders' upserts into a changelog): each order's messages exactly, in order."""
    got, expected = run_scenario("store-enrichment", system, brokers, tmp_path, spark_runtime)
    assert per_key(got) == per_key(expected)
    assert len(got) == len(expected)
