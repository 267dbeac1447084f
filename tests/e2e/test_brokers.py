"""The brokers that scripts/services runs really work for what streamshell needs from them.

Why this exists: before any SQL runs against a topic, these prove the plumbing on the real
brokers: a Pulsar message keeps its key and properties, partitioned Pulsar topics can be made
through the admin REST API (the way the shell creates them), and a Kafka topic is shared between
processes (the shell, Spark and a producer are separate clients).
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import urllib.request
import uuid

import pytest

pytestmark = pytest.mark.e2e

QUIET = logging.getLogger("tests.e2e.pulsar-client")
QUIET.setLevel(logging.CRITICAL)


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def pulsar_client(brokers):
    import pulsar

    client = pulsar.Client(brokers.pulsar_service_url, operation_timeout_seconds=30, logger=QUIET)
    yield client
    client.close()


def _admin(brokers, method: str, path: str, body: object | None = None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{brokers.pulsar_admin_url}/admin/v2/{path}", data=data,
                                 method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        raw = resp.read()
        return resp.status, (json.loads(raw) if raw else None)


def test_pulsar_message_round_trip_keeps_key_and_properties(pulsar_client):
    import pulsar

    topic = f"persistent://public/default/{_unique('e2e-roundtrip')}"
    consumer = pulsar_client.subscribe(topic, "e2e",
                                       initial_position=pulsar.InitialPosition.Earliest)
    producer = pulsar_client.create_producer(topic)
    producer.send(b'{"id": 1, "name": "ada"}', partition_key="user-1",
                  properties={"source": "e2e", "schema": "v1"})

    msg = consumer.receive(timeout_millis=30000)
    consumer.acknowledge(msg)
    assert msg.data() == b'{"id": 1, "name": "ada"}'
    assert msg.partition_key() == "user-1"
    assert msg.properties() == {"source": "e2e", "schema": "v1"}
    assert msg.topic_name() == topic


def test_pulsar_partitioned_topic_created_through_admin_api(brokers, pulsar_client):
    import pulsar

    name = _unique("e2e-partitioned")
    status, _ = _admin(brokers, "PUT", f"persistent/public/default/{name}/partitions", 3)
    assert status == 204
    _, meta = _admin(brokers, "GET", f"persistent/public/default/{name}/partitions")
    assert meta["partitions"] == 3

    topic = f"persistent://public/default/{name}"
    assert sorted(pulsar_client.get_topic_partitions(topic)) == [
        f"{topic}-partition-{i}" for i in range(3)]

    consumer = pulsar_client.subscribe(topic, "e2e",
                                       initial_position=pulsar.InitialPosition.Earliest)
    producer = pulsar_client.create_producer(
        topic, message_routing_mode=pulsar.PartitionsRoutingMode.RoundRobinDistribution,
        batching_enabled=False)
    sent = {f"m{i}".encode() for i in range(12)}
    for data in sorted(sent):
        producer.send(data)

    received, partitions = set(), set()
    while received != sent:
        msg = consumer.receive(timeout_millis=30000)
        consumer.acknowledge(msg)
        received.add(msg.data())
        partitions.add(msg.topic_name().rsplit("-partition-", 1)[1])
    assert partitions == {"0", "1", "2"}


CONSUMER = textwrap.dedent("""
    import json, sys
    from kafka import KafkaConsumer
    bootstrap, topic, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id="e2e-second-process",
                             auto_offset_reset="earliest", consumer_timeout_ms=30000)
    out = []
    for record in consumer:
        out.append({"key": record.key.decode(), "value": record.value.decode(),
                    "headers": {k: v.decode() for k, v in record.headers}})
        if len(out) == want:
            break
    consumer.commit()
    consumer.close()
    print(json.dumps(out))
""")


def test_kafka_message_consumed_by_a_second_process(brokers):
    from kafka import KafkaProducer

    topic = _unique("e2e-kafka")
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap, acks="all")
    for i in range(3):
        producer.send(topic, key=f"k{i}".encode(), value=f'{{"n": {i}}}'.encode(),
                      headers=[("origin", b"e2e")]).get(timeout=30)
    producer.close()

    proc = subprocess.run([sys.executable, "-c", CONSUMER, brokers.kafka_bootstrap, topic, "3"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout.strip().splitlines()[-1])
    assert records == [{"key": f"k{i}", "value": f'{{"n": {i}}}', "headers": {"origin": "e2e"}}
                       for i in range(3)]
