"""Kafka topics as the exactly-once tests see them: made with a number of partitions, filled with ids, and read
back as a consumer of a given isolation level reads them, up to the end it can see; and the Kafka broker alone
for those tests (they need no Pulsar)."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from tests.e2e.shared_brokers import services_in_use


@pytest.fixture(scope="module")
def kafka_broker(tmp_path_factory) -> str:
    """The Kafka broker of scripts/services (`STREAMSHELL_KAFKA_PORT`, 9092), started if it is not running and then
    stopped after the module by its last user (tests/e2e/shared_brokers.py); its bootstrap address."""
    with services_in_use(tmp_path_factory, "kafka"):
        yield f"127.0.0.1:{int(os.environ.get('STREAMSHELL_KAFKA_PORT') or 9092)}"


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def visible_ids(bootstrap: str, topic: str, isolation: str = "read_committed", deadline_s: float = 180) -> list[int]:
    """Every id a consumer with `isolation` reads from the topic's start to the end it sees now (for
    read_committed: the last stable offset, so an open transaction's rows and everything after them are not read)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        end = consumer.end_offsets(parts)
        ids: list[int] = []
        give_up = time.monotonic() + deadline_s
        while any(consumer.position(p) < end[p] for p in parts):
            if time.monotonic() > give_up:
                raise AssertionError(f"{topic}: not read to {end} in {deadline_s} s")
            for records in consumer.poll(timeout_ms=1000).values():
                ids += [json.loads(r.value)["id"] for r in records]
        return ids
    finally:
        consumer.close()


def log_end(bootstrap: str, topic: str) -> int:
    """The sum of the topic's partitions' end offsets (every record and transaction marker written, committed or
    not): a cheap measure of a writer's progress, where reading the records back would be slow."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        return sum(consumer.end_offsets(parts).values())
    finally:
        consumer.close()


def batch_records(bootstrap: str, prefix: str, partitions: int) -> dict[str, str]:
    """The exactly-once sink's batch record of each transactional id `<prefix>-<n>` that has one: its offset
    metadata, `streamshell-batch <query id> <batch id>`."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        records = {}
        for n in range(partitions):
            group = f"{prefix}-{n}"
            offsets = admin.list_group_offsets(group)
            for offset in offsets.get(group, offsets).values():
                records[group] = offset.metadata
        return records
    finally:
        admin.close()


class IdProducer(threading.Thread):
    """Writes ids `first` .. `last - 1` as JSON `{"id": n}` at about `rate` a second, as a live source would; keyed by
    the id (spread over the partitions), or with no key (`keyed=False`). With `hold_at`, it stops before that id
    until `release()`, so that what a test does to the job while the input keeps coming comes before the input's
    end however slowly the job runs."""

    def __init__(self, bootstrap: str, topic: str, first: int, last: int, rate: int, keyed: bool = True,
                 hold_at: int | None = None):  # fmt: skip
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.first, self.last, self.rate = bootstrap, topic, first, last, rate
        self.keyed = keyed
        self.hold_at, self.released = hold_at, threading.Event()
        self.error: BaseException | None = None

    def release(self) -> None:
        """Lets a held producer write the rest."""
        self.released.set()

    def run(self) -> None:
        from kafka import KafkaProducer

        try:
            producer = KafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=20)
            began = time.monotonic()
            for i in range(self.first, self.last):
                if i == self.hold_at:
                    producer.flush()
                    if not self.released.wait(600):
                        raise TimeoutError(f"held at id {i} for 600 s and never released")
                    began = time.monotonic() - (i - self.first) / self.rate
                producer.send(self.topic, json.dumps({"id": i}).encode(), key=str(i).encode() if self.keyed else None)
                if i % 500 == 0:
                    ahead = (i - self.first) / self.rate - (time.monotonic() - began)
                    if ahead > 0:
                        time.sleep(ahead)
            producer.flush()
            producer.close()
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            self.error = exc
