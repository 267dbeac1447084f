"""A broker down for a minute and a half under a detached job, with the default restart strategy: the job comes back.

Why it exists: brokers are upgraded and restarted; a job started with no restart settings at all must outlast
that, from its checkpoint, and lose nothing. Each test starts a Kafka or Pulsar -> filesystem copy through the real
CLI (its own job process), stops the broker (its own: tests/e2e/own_brokers.py) for OUTAGE_S with
`scripts/services stop` once part of the input went through, starts it again, produces the rest, and checks the
files hold every id exactly once and the job is RUNNING. They take minutes, so `make test` leaves them out
(STREAMSHELL_LONG_OUTAGES=1 runs them: `make fault-run`); their figures are in docs/reliability.md ("Faults").
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from pathlib import Path

import pytest

from tests.e2e.cli import streamshell
from tests.e2e.own_brokers import OwnBrokers, own_brokers
from tests.e2e.test_broker_outage import QUIET, Outage, kafka_produce
from tests.e2e.test_detached_jobs import ids_written, job_row, shell
from tests.spark.helpers import wait_for

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.environ.get("STREAMSHELL_LONG_OUTAGES") != "1",
                       reason="a broker down for 90 s each: `make fault-run`"),  # fmt: skip
]

OUTAGE_S = 90
FIRST, REST = range(0, 2000), range(2000, 4000)


def pulsar_produce(brokers, topic: str, ids) -> None:
    import pulsar

    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        producer = client.create_producer(topic, block_if_queue_full=True)  # else sends past 1,000 pending fail
        for i in ids:
            producer.send_async(json.dumps({"id": i}).encode(), None)
        producer.flush()
    finally:
        client.close()


def start_copy(tmp_path: Path, source_ddl: str) -> tuple[Path, Path, str]:
    """A detached `INSERT INTO out SELECT id FROM src` with the default restart strategy; (home, out, job id)."""
    home, out = tmp_path / "home", tmp_path / "out"
    script = tmp_path / "start.sql"
    script.write_text(f"""{source_ddl}
        CREATE TABLE out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
        SET 'table.dml-sync' = 'false';
        INSERT INTO out SELECT id FROM src;""")
    run = streamshell("-f", str(script), home=home)
    assert run.code == 0, run.err[-3000:]
    return home, out, re.search(r"started with id (\w+)\.", run.out).group(1)


def outlast(broker: str, own: OwnBrokers, tmp_path: Path, source_ddl: str, produce) -> None:  # noqa: ANN001
    produce(FIRST)
    home, out, job_id = start_copy(tmp_path, source_ddl)
    try:
        wait_for(lambda: len(ids_written(out)) >= len(FIRST), 300, "the first part written")
        statuses = []
        with Outage(own, broker) as outage:
            deadline = time.monotonic() + OUTAGE_S
            while time.monotonic() < deadline:
                statuses.append(job_row(home, job_id)["status"])
                time.sleep(5)
        assert "FAILED" not in statuses, statuses
        produce(REST)
        wait_for(lambda: len(ids_written(out)) >= len(FIRST) + len(REST), 600, "every id written after the outage")
        time.sleep(3)  # a batch written twice would show now
        row = job_row(home, job_id)
        assert row["status"] == "RUNNING", row
        assert sorted(ids_written(out)) == list(range(len(FIRST) + len(REST))), "each id once"
        print(f"{broker} down {outage.seconds:.0f} s; statuses seen {sorted(set(statuses))}; restarts {row['restarts']}; "
              f"last failure {row['last failure']!r}")  # fmt: skip
    finally:
        shell(home, f"STOP JOB '{job_id}';")


def test_a_kafka_job_outlasts_kafka_down_for_90_s(tmp_path):
    with own_brokers(tmp_path / "brokers", "kafka") as own:
        kafka_outlasts(own, tmp_path)


def kafka_outlasts(own: OwnBrokers, tmp_path: Path) -> None:
    brokers = own.brokers
    topic = f"long-outage-{uuid.uuid4().hex[:8]}"
    ddl = f"""CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'format' = 'json',
        'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'scan.startup.mode' = 'earliest-offset');"""
    outlast("kafka", own, tmp_path, ddl, lambda ids: kafka_produce(brokers, topic, ids))


def test_a_pulsar_job_outlasts_pulsar_down_for_90_s(tmp_path):
    with own_brokers(tmp_path / "brokers", "pulsar") as own:
        pulsar_outlasts(own, tmp_path)


def pulsar_outlasts(own: OwnBrokers, tmp_path: Path) -> None:
    brokers = own.brokers
    topic = f"persistent://public/default/long-outage-{uuid.uuid4().hex[:8]}"
    ddl = f"""CREATE TABLE src (id BIGINT) WITH ('connector' = 'pulsar', 'topic' = '{topic}', 'format' = 'json',
        'service-url' = '{brokers.pulsar_service_url}', 'admin-url' = '{brokers.pulsar_admin_url}');"""
    outlast("pulsar", own, tmp_path, ddl, lambda ids: pulsar_produce(brokers, topic, ids))
