"""What an INSERT job does when its broker goes away for a while, against the real brokers (stopped for real).

Why it exists: brokers restart (upgrades, crashes), and a streaming shell must say what happens to a running job
then: does it wait, fail, report it, lose data? These tests stop the broker with `scripts/services stop` while a
job runs (after part of the input went through), watch the job, start the broker again, produce the rest and
check the output topic. What they found, and assert:

* Kafka -> Kafka: Spark's Kafka source blocks while it asks the broker for offsets; the job stays RUNNING with no
  failure and no new batch (Spark's own status says "Getting offsets from KafkaV2[...]"), and SHOW JOBS says so in
  its detail column once no batch has completed for ten trigger intervals ("no batch completed for 12 s; Spark:
  Getting offsets from KafkaV2[...]"). Once the broker is back it goes on by itself: every id reaches the output.
  The Kafka sink is at-least-once, so duplicates would be allowed (none were seen here, since no batch was in
  flight when the broker stopped). An outage longer than the Kafka client's timeouts (60 s
  `default.api.timeout.ms` per offset request) is not tried here; it would fail the job, and the restart strategy
  would start it again.
* Pulsar -> Pulsar: our Pulsar source asks the admin REST API for the latest positions at every trigger; with
  the broker gone (or answering 5xx while it shuts down), the request fails and so does the job's query, at once.
  The job's restart strategy (Flink's `restart-strategy.*`; here exponential-delay, 1 s to 5 s, so that it outlasts
  the outage) starts it again from its checkpoint: SHOW JOBS says RESTARTING, with the restarts so far and the
  cause of the last failure in one line ("cannot reach the Pulsar admin API at ...", "Pulsar admin GET ... failed:
  HTTP 503 ...", then "pulsar: cannot reach 127.0.0.1:6650 ..." from the restarts that find the broker still
  down). Once the broker is back, a restart succeeds and the job goes on from its checkpoint: every id reaches
  the output.

The brokers stopped are this module's own (tests/e2e/own_brokers.py: free ports, a services folder of their own),
so the tests beside it keep theirs; the broker is always started again in a `finally`, and a restart that fails
makes the test fail loudly.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid

import pytest

from shell.jobs.registry import FAILED, RESTARTING, RUNNING
from shell.results import JobStarted, Rows
from tests.e2e.own_brokers import OwnBrokers, own_brokers
from tests.spark.helpers import run, wait_for

OBSERVE_S = 15  # how long the broker stays down before we start it again (plus the stop and start themselves)
QUIET = logging.getLogger("tests.pulsar")
QUIET.setLevel(logging.CRITICAL)


@pytest.fixture(scope="module")
def own(tmp_path_factory) -> OwnBrokers:
    """A Kafka and a Pulsar of this module's own, stopped and started by its outages."""
    with own_brokers(tmp_path_factory.mktemp("own-brokers"), "kafka", "pulsar") as started:
        yield started


class Outage:
    """Stops `broker` of `own` brokers on enter and always starts it again on exit; records how long it was down."""

    def __init__(self, own: OwnBrokers, broker: str):
        self.own, self.broker = own, broker
        self.seconds = 0.0

    def __enter__(self) -> "Outage":
        self.began = time.monotonic()
        stopped = self.own.services("stop", self.broker)
        if "stopped" not in stopped:
            pytest.fail(f"{self.broker} was not running under scripts/services: {stopped}", pytrace=False)
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.own.services("start", self.broker, attempts=3)
        finally:
            self.seconds = time.monotonic() - self.began
        return None


def last_batch_run(job) -> int | None:  # noqa: ANN001 - an embedded Job
    """The id of the last micro-batch that ran. Not `lastProgress`'s: while no input comes Spark reports an idle
    trigger every 10 s under the id of the batch still to come; only a batch that ran times `addBatch`."""
    reports = [p if isinstance(p, dict) else json.loads(p.json) for p in job.query.recentProgress or []]
    ran = [r["batchId"] for r in reports if "addBatch" in (r.get("durationMs") or {})]
    return ran[-1] if ran else None


def settled_batch(job) -> tuple[int] | None:  # noqa: ANN001 - an embedded Job
    """(the job's last batch id) once it has not changed for 3 s, else None."""
    before = last_batch_run(job)
    time.sleep(3)
    return (before,) if before is not None and last_batch_run(job) == before else None


def show_job(session, job_id: str) -> dict:
    result = run(session, "SHOW JOBS;")
    assert isinstance(result, Rows)
    return next(dict(zip(result.columns, row)) for row in result.rows if row[0] == job_id)


# ---- Kafka ---------------------------------------------------------------------------------------------------


def kafka_produce(brokers, topic: str, ids) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for i in ids:
        producer.send(topic, json.dumps({"id": i, "payload": f"p{i}"}).encode())
    producer.flush()
    producer.close()


def kafka_ids(brokers, topic: str) -> list[int]:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=3000)  # fmt: skip
    ids = [json.loads(m.value)["id"] for m in consumer]
    consumer.close()
    return ids


def test_kafka_job_waits_out_a_broker_outage_and_loses_nothing(session, own):
    brokers = own.brokers
    source, sink = f"outage-{uuid.uuid4().hex[:8]}", f"outage-out-{uuid.uuid4().hex[:8]}"
    first, rest = range(0, 300), range(300, 600)
    kafka_produce(brokers, source, first)
    servers = brokers.kafka_bootstrap
    run(session, f"""CREATE TABLE src (id INT, payload STRING) WITH ('connector' = 'kafka', 'topic' = '{source}',
          'properties.bootstrap.servers' = '{servers}', 'format' = 'json');""")
    run(session, f"""CREATE TABLE out (id INT, payload STRING) WITH ('connector' = 'kafka', 'topic' = '{sink}',
          'properties.bootstrap.servers' = '{servers}', 'format' = 'json');""")
    started = run(session, "INSERT INTO out SELECT id, payload FROM src;")
    assert isinstance(started, JobStarted)
    job = session.jobs.get(started.job_id)
    wait_for(lambda: set(kafka_ids(brokers, sink)) >= set(first), 180, "the first part in the output")
    # the batch that wrote it is committed (its id shown) a moment after its rows reach the sink; with no input
    # after it, no batch runs until the outage begins
    [batch_before] = wait_for(lambda: settled_batch(job), 60, "the batch that wrote the first part, committed")

    seen = []
    with Outage(own, "kafka") as outage:
        deadline = time.monotonic() + OBSERVE_S
        while time.monotonic() < deadline:
            seen.append((job.status, job.failure, last_batch_run(job), job.query.status["message"]))
            time.sleep(1)
        shown = show_job(session, job.job_id)
    assert all(status == RUNNING and failure is None for status, failure, _, _ in seen), seen
    assert all(batch == batch_before for _, _, batch, _ in seen), f"a batch ran without a broker: {seen}"
    assert seen[-1][3].startswith("Getting offsets from KafkaV2"), seen[-1]  # blocked on the broker
    assert shown["status"] == RUNNING
    assert re.fullmatch(r"no batch completed for \d+ s; Spark: Getting offsets from KafkaV2\[.*\]", shown["detail"]), shown

    kafka_produce(brokers, source, rest)
    ids = wait_for(lambda: (lambda got: got if set(got) >= set(first) | set(rest) else None)(kafka_ids(brokers, sink)),
                   180, "every id in the output after the restart")  # fmt: skip
    assert set(ids) == set(first) | set(rest)  # nothing lost; duplicates would be allowed (at-least-once sink)
    assert (job.status, job.failure) == (RUNNING, None)
    print(f"kafka down {outage.seconds:.1f} s; {len(ids) - len(set(ids))} duplicates")


# ---- Pulsar --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pulsar_outage(own, spark_runtime, tmp_path_factory):
    """One Pulsar outage under a running Pulsar -> Pulsar job, shared by the two tests below (it costs a restart).

    Returns what was seen: the job, the session, SHOW JOBS during the outage, the ids produced and the topics.
    """
    import pulsar

    from shell.session import Session
    from tests.sessions import embedded_options

    brokers = own.brokers
    session = Session(embedded_options(home=tmp_path_factory.mktemp("outage") / "home"), runtime=spark_runtime)
    base = "persistent://public/default/"
    source, sink = f"{base}outage-{uuid.uuid4().hex[:8]}", f"{base}outage-out-{uuid.uuid4().hex[:8]}"
    first, rest = range(0, 300), range(300, 600)

    def produce(ids) -> None:
        client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
        producer = client.create_producer(source)
        for i in ids:
            producer.send_async(json.dumps({"id": i, "payload": f"p{i}"}).encode(), None)
        producer.flush()
        client.close()

    def output_ids() -> list[int]:
        client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
        reader = client.create_reader(sink, pulsar.MessageId.earliest)
        ids = []
        try:
            while True:
                ids.append(json.loads(reader.read_next(timeout_millis=2000).data())["id"])
        except pulsar.Timeout:
            pass
        client.close()
        return ids

    urls = f"'service-url' = '{brokers.pulsar_service_url}', 'admin-url' = '{brokers.pulsar_admin_url}'"
    try:
        produce(first)
        run(session, f"CREATE TABLE src (id INT, payload STRING) WITH ('connector' = 'pulsar', 'topic' = '{source}', "
                     f"{urls}, 'format' = 'json');")  # fmt: skip
        run(session, f"CREATE TABLE out (id INT, payload STRING) WITH ('connector' = 'pulsar', 'topic' = '{sink}', "
                     f"{urls}, 'format' = 'json');")  # fmt: skip
        run(session, "SET 'restart-strategy.type' = 'exponential-delay';"
                     "SET 'restart-strategy.exponential-delay.initial-backoff' = '1 s';"
                     "SET 'restart-strategy.exponential-delay.max-backoff' = '5 s';"
                     "SET 'restart-strategy.exponential-delay.attempts-before-reset-backoff' = '100';")  # fmt: skip
        job = session.jobs.get(run(session, "INSERT INTO out SELECT id, payload FROM src;").job_id)
        wait_for(lambda: set(output_ids()) >= set(first), 180, "the first part in the output")
        during = []  # SHOW JOBS once a second while the broker is down
        with Outage(own, "pulsar") as outage:
            deadline = time.monotonic() + OBSERVE_S
            while time.monotonic() < deadline:
                during.append(show_job(session, job.job_id))
                time.sleep(1)
        produce(rest)
        yield {"session": session, "job": job, "during": during, "first": first, "rest": rest,
               "output_ids": output_ids, "outage_s": outage.seconds}  # fmt: skip
    finally:
        session.close()


def test_pulsar_outage_restarts_the_job_and_says_why(pulsar_outage, own):
    brokers = own.brokers
    during, job = pulsar_outage["during"], pulsar_outage["job"]
    statuses = [row["status"] for row in during]
    assert RESTARTING in statuses and FAILED not in statuses, statuses
    restarting = [row for row in during if row["status"] == RESTARTING]
    assert all(row["last failure"] and "\n" not in row["last failure"] for row in restarting), restarting
    assert all("Traceback" not in row["last failure"] for row in restarting), restarting
    assert any(row["detail"].startswith("restart ") for row in restarting), restarting
    admin = re.escape(brokers.pulsar_admin_url)
    reason = re.fullmatch(rf"(cannot reach the Pulsar admin API at {admin}: .*|"
                          rf"Pulsar admin GET {admin}/\S+ failed: HTTP \d+.*)", job.failures[0])  # down, or shutting down
    assert reason, job.failures
    assert set(pulsar_outage["output_ids"]()) >= set(pulsar_outage["first"])  # what went through before stays
    print(f"pulsar down {pulsar_outage['outage_s']:.1f} s; failures: {job.failures}")


def test_pulsar_outage_failure_is_one_clear_line(pulsar_outage, own):
    brokers = own.brokers
    failure = pulsar_outage["job"].failures[0]
    assert "Pulsar admin" in failure and brokers.pulsar_admin_url in failure, failure


def test_pulsar_job_recovers_after_the_outage(pulsar_outage):
    job, wanted = pulsar_outage["job"], set(pulsar_outage["first"]) | set(pulsar_outage["rest"])
    deadline = time.monotonic() + 90
    while not set(pulsar_outage["output_ids"]()) >= wanted:
        assert job.status in (RUNNING, RESTARTING), f"the job is {job.status}: {job.failure}"
        assert time.monotonic() < deadline, f"not every id reached the output within 90 s of the restart ({job.status})"
        time.sleep(2)
    assert job.status == RUNNING and job.restarts >= 1
    print(f"recovered after {job.restarts} restarts")
