"""`'sink.delivery-guarantee' = 'exactly-once'` into Kafka, through the real command line and the real broker.

Each micro-batch is written in Kafka transactions (transactional ids `<prefix>-<partition>`) with its batch id
recorded in the same transactions, so a consumer reading with `isolation.level=read_committed` sees each row once:
after a batch Spark runs again, after a producer left open by a dead task, after `kill -9` of the job process at
random points and RESUME JOB. `'properties.isolation.level' = 'read_committed'` on a Kafka table reads only what
transactions committed.

`STREAMSHELL_EO_MESSAGES` (20,000) and `STREAMSHELL_EO_KILLS` (1 in `make test`, 2 in `make test-exactly-once`)
size the kill test (`STREAMSHELL_EO_SEED` repeats a run's kill points); `make fault-run-kafka` runs it 10 times in a
row at 100,000 messages, `make fault-run` once at 1,000,000.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import time
import uuid
from pathlib import Path

import pytest

from tests.e2e.cli import streamshell
from tests.e2e.kafka_topics import IdProducer, batch_records, create_topic, kafka_broker, log_end, visible_ids
from tests.spark.helpers import wait_for

pytestmark = pytest.mark.e2e
# `make test` runs the tests that prove the sink: an exactly-once copy read by a read_committed consumer, a kill -9 at
# a random point and RESUME, and a read_committed source; `make test-exactly-once` (STREAMSHELL_EXACTLY_ONCE=all)
# runs every one, the kill test with a second kill of the resumed job (about 6 more minutes on 2 cores)
EVERY_TEST = os.environ.get("STREAMSHELL_EXACTLY_ONCE") == "all"
EXTENDED = pytest.mark.skipif(not EVERY_TEST, reason="the rest of the exactly-once suite runs in make test-exactly-once")
__all__ = ["kafka_broker"]  # the fixture, imported for the tests of this module

MESSAGES = int(os.environ.get("STREAMSHELL_EO_MESSAGES", "20000"))
KILLS = int(os.environ.get("STREAMSHELL_EO_KILLS") or (2 if EVERY_TEST else 1))
RATE = int(os.environ.get("STREAMSHELL_EO_RATE", "5000"))  # ids a second while the job is killed
# at most this many ids a micro-batch in the kill test, so the copy is many batches and a kill falls inside one
BATCH = max(1000, MESSAGES // 50)
SOURCE_PARTITIONS = 4  # read by four tasks; written by as many as the job has shuffle partitions
SINK_PARTITIONS = 3


def names() -> tuple[str, str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"eo-src-{tag}", f"eo-sink-{tag}", f"eo-{tag}"


def start_copy(tmp_path: Path, bootstrap: str, source: str, sink: str, prefix: str, name: str,
               guarantee: str = "exactly-once", batch: int | None = None, select: str = "id") -> tuple[Path, str]:
    """A detached Kafka -> Kafka copy of ids (at most `batch` a micro-batch); (home, job id)."""
    home = tmp_path / "home"
    script = tmp_path / "start.sql"
    limit = f", 'source.max-messages-per-trigger' = '{batch}'" if batch else ""
    script.write_text(f"""
        CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{source}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset'{limit});
        CREATE TABLE snk (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{sink}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'sink.delivery-guarantee' = '{guarantee}',
          'sink.transactional-id-prefix' = '{prefix}');
        SET 'table.dml-sync' = 'false';
        SET 'pipeline.name' = '{name}';
        INSERT INTO snk SELECT {select} AS id FROM src;
    """)
    run = streamshell("-f", str(script), home=home)
    assert run.code == 0, run.err[-3000:]
    job_id = re.search(rf"Job '{name}' started with id (\w+)\.", run.out).group(1)
    return home, job_id


def shell(home: Path, sql: str):
    run = streamshell("--result-mode", "tableau", "-e", sql, home=home)
    assert run.code == 0, run.err[-3000:]
    return run


def job_state(home: Path, job_id: str) -> dict:
    return json.loads((home / "jobs" / job_id / "state.json").read_text())


def job_row(home: Path, job_id: str) -> dict:
    run = streamshell("--result-mode", "json", "-e", "SHOW JOBS;", home=home)
    assert run.code == 0, run.err[-3000:]
    rows = [json.loads(line)["row"] for line in run.out.splitlines() if line.startswith("{")]
    return next(r for r in rows if r["job id"] == job_id)


def job_status(home: Path, job_id: str) -> str:
    return job_row(home, job_id)["status"]


def batches_run(home: Path, job_id: str) -> list[int]:
    """The id of every micro-batch the job ran, in order, a batch run again listed again (batches.jsonl)."""
    path = home / "jobs" / job_id / "batches.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line)["report"]["batchId"] for line in lines if line.strip()]


def produce(bootstrap: str, topic: str, first: int, last: int) -> None:
    producer = IdProducer(bootstrap, topic, first, last, rate=10**9)
    producer.run()
    assert producer.error is None


def assert_each_once(ids: list[int], expected: int) -> None:
    assert len(ids) == len(set(ids)) and sorted(ids) == list(range(expected)), (
        f"{len(ids)} rows, {len(set(ids))} distinct of {expected}: "
        f"{len(ids) - len(set(ids))} seen twice, {expected - len(set(ids) & set(range(expected)))} missing"
    )


def test_an_exactly_once_copy_is_seen_once_by_a_read_committed_consumer_and_records_each_batch(tmp_path, kafka_broker):
    bootstrap = kafka_broker
    source, sink, prefix = names()
    create_topic(bootstrap, source, SOURCE_PARTITIONS)
    create_topic(bootstrap, sink, SINK_PARTITIONS)
    produce(bootstrap, source, 0, 3000)
    home, job_id = start_copy(tmp_path, bootstrap, source, sink, prefix, "eo-copy")
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 3000, 300, "the first 3,000 ids committed")
    produce(bootstrap, source, 3000, 6000)
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 6000, 300, "6,000 ids committed")
    shell(home, f"STOP JOB '{job_id}';")
    assert_each_once(visible_ids(bootstrap, sink), 6000)
    # the rows were written in transactions: each task's transactional id (<prefix>-<n>, n < the job's shuffle
    # partitions) recorded its last batch with them: query id, batch id, rows and their digest
    records = batch_records(bootstrap, prefix, 16)
    assert records and sorted(records) == [f"{prefix}-{n}" for n in range(len(records))], records
    assert all(re.fullmatch(r"streamshell-batch [0-9a-f-]{36} \d+ \d+ [0-9a-f]+", text) for text in records.values()), records


@EXTENDED
def test_a_batch_spark_runs_again_is_not_written_again(tmp_path, kafka_broker):
    """The job is stopped, the commit of its last batch removed from the checkpoint (what a crash between the
    batch's write and Spark's commit leaves), and RESUME JOB runs that batch again: its rows are not written twice."""
    bootstrap = kafka_broker
    source, sink, prefix = names()
    create_topic(bootstrap, source, SOURCE_PARTITIONS)
    create_topic(bootstrap, sink, SINK_PARTITIONS)
    produce(bootstrap, source, 0, 4000)
    home, job_id = start_copy(tmp_path, bootstrap, source, sink, prefix, "eo-replay")
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 4000, 300, "4,000 ids committed")
    shell(home, f"STOP JOB '{job_id}' WITH SAVEPOINT;")
    commits = home / "jobs" / job_id / "checkpoint" / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    ran_before = batches_run(home, job_id)
    assert last in ran_before

    shell(home, f"SET 'table.dml-sync' = 'false'; RESUME JOB '{job_id}';")
    wait_for(lambda: batches_run(home, job_id).count(last) >= 2, 300, f"batch {last} run again")
    produce(bootstrap, source, 4000, 5000)  # and the job goes on after it
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 5000, 300, "5,000 ids committed")
    shell(home, f"STOP JOB '{job_id}';")
    assert_each_once(visible_ids(bootstrap, sink), 5000)


@EXTENDED
def test_a_batch_that_gives_other_rows_when_it_runs_again_fails_the_job_instead_of_losing_rows(tmp_path,
                                                                                            kafka_broker):
    """A query whose rows depend on when it runs (RAND()): the batch run again gives a task other rows than the
    ones it committed; skipping them would lose rows, writing them would double, so the job fails and says why."""
    bootstrap = kafka_broker
    source, sink, prefix = names()
    create_topic(bootstrap, source, 2)
    create_topic(bootstrap, sink, 1)
    produce(bootstrap, source, 0, 2000)
    home, job_id = start_copy(tmp_path, bootstrap, source, sink, prefix, "eo-random",
                              select="id * 1000000 + CAST(RAND() * 1000000 AS BIGINT)")
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 2000, 300, "2,000 rows committed")
    shell(home, f"STOP JOB '{job_id}' WITH SAVEPOINT;")
    commits = home / "jobs" / job_id / "checkpoint" / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    shell(home, f"SET 'table.dml-sync' = 'false'; RESUME JOB '{job_id}';")
    failure = wait_for(lambda: job_row(home, job_id)["last failure"], 300, "the job failed")
    shell(home, f"STOP JOB '{job_id}';")
    assert f"batch {last} run again gives transactional id '{prefix}-" in failure, failure
    assert "other rows than it committed before" in failure, failure
    assert len(visible_ids(bootstrap, sink)) == 2000, "nothing written twice"


@EXTENDED
def test_a_transaction_left_open_under_a_sinks_transactional_id_is_aborted_and_never_seen(tmp_path, kafka_broker):
    """A task that died with its transaction open (here: a producer of the same transactional id that never
    commits): the job's producer fences it, its rows are aborted, and it can no longer commit."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    bootstrap = kafka_broker
    source, sink, prefix = names()
    create_topic(bootstrap, source, 1)
    create_topic(bootstrap, sink, 1)
    zombie = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{prefix}-0")
    zombie.init_transactions()
    zombie.begin_transaction()
    for i in range(100_000, 100_050):
        zombie.send(sink, json.dumps({"id": i}).encode())
    zombie.flush()
    produce(bootstrap, source, 0, 1000)
    home, job_id = start_copy(tmp_path, bootstrap, source, sink, prefix, "eo-fence")
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 1000, 300, "1,000 ids committed past the open transaction")
    with pytest.raises(KafkaError):
        zombie.commit_transaction()
    zombie.close(timeout=5)
    shell(home, f"STOP JOB '{job_id}';")
    assert_each_once(visible_ids(bootstrap, sink), 1000)  # none of the zombie's 100,000 ...
    assert len(visible_ids(bootstrap, sink, isolation="read_uncommitted")) == 1050, "its rows are in the log, aborted"


def test_a_job_killed_with_sigkill_at_random_points_and_resumed_leaves_each_id_once(tmp_path, kafka_broker):
    """`kill -9` of the job process while it copies, KILLS times at random points, RESUME JOB after each: a
    read_committed consumer of the sink sees each id exactly once."""
    bootstrap = kafka_broker
    seed = int(os.environ.get("STREAMSHELL_EO_SEED", str(random.randrange(10**6))))
    rng = random.Random(seed)
    print(f"seed {seed}, {MESSAGES} messages, {KILLS} kills, at most {BATCH} a batch")
    source, sink, prefix = names()
    create_topic(bootstrap, source, SOURCE_PARTITIONS)
    create_topic(bootstrap, sink, SINK_PARTITIONS)
    produce(bootstrap, source, 0, 1000)
    home, job_id = start_copy(tmp_path, bootstrap, source, sink, prefix, "eo-killed", batch=BATCH)
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 1000, 300, "the first 1,000 ids committed")
    producer = IdProducer(bootstrap, source, 1000, MESSAGES, rate=RATE)
    producer.start()
    killed_while_copying = 0
    for kill in range(KILLS):
        # kill k falls at a random point of the k-th of KILLS equal parts of the copy, inside a micro-batch (reading,
        # sending, committing the transactions, committing the batch): once this process has committed a batch and
        # the sink's log has passed a random mark of that part, a random time up to about two batches later
        written = log_end(bootstrap, sink)
        mark = MESSAGES * (kill + rng.uniform(0.1, 0.9)) / KILLS
        wait_for(lambda: (end := log_end(bootstrap, sink)) > written and end >= mark, 1800,
                 f"a batch committed by the job's process, and {mark:,.0f} records in the sink's log", 0.2)
        time.sleep(rng.uniform(0, 2.0))
        pid = job_state(home, job_id)["pid"]
        os.kill(pid, signal.SIGKILL)
        committed = len(visible_ids(bootstrap, sink))
        killed_while_copying += committed < MESSAGES
        print(f"kill {kill + 1}: pid {pid} with {committed:,} ids committed")
        wait_for(lambda: job_status(home, job_id) == "FAILED", 60, "the job FAILED")
        shell(home, f"SET 'table.dml-sync' = 'false'; RESUME JOB '{job_id}';")
    producer.join()
    assert producer.error is None
    assert killed_while_copying, "a kill fell while ids were still being copied"
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= MESSAGES, 1800, "every id committed", 5)
    time.sleep(3)  # a batch written twice would show now
    shell(home, f"STOP JOB '{job_id}';")
    assert_each_once(visible_ids(bootstrap, sink), MESSAGES)


@EXTENDED
def test_a_keyed_exactly_once_sink_keeps_the_order_of_each_keys_rows(tmp_path, kafka_broker):
    """Rows with a key go to the key's Kafka partition in the order the query gives them, as with Spark's sink:
    the batch is spread over its transactions by key, so one key's rows are written by one task."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    bootstrap = kafka_broker
    source, sink, prefix = names()
    create_topic(bootstrap, source, 1)
    create_topic(bootstrap, sink, 3)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for seq in range(300):
        for k in range(10):
            producer.send(source, json.dumps({"k": k, "seq": seq}).encode())
    producer.flush()
    producer.close()
    home = tmp_path / "home"
    script = tmp_path / "keyed.sql"
    script.write_text(f"""
        CREATE TABLE src (k INT, seq INT) WITH ('connector' = 'kafka', 'topic' = '{source}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'scan.bounded.mode' = 'latest-offset');
        CREATE TABLE snk (k INT, seq INT) WITH ('connector' = 'kafka', 'topic' = '{sink}',
          'key.format' = 'json', 'key.fields' = 'k', 'value.format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'sink.delivery-guarantee' = 'exactly-once',
          'sink.transactional-id-prefix' = '{prefix}');
        SET 'table.dml-sync' = 'true';
        INSERT INTO snk SELECT k, seq FROM src;
    """)
    run = streamshell("-f", str(script), home=home)
    assert run.code == 0, run.err[-3000:]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False)
    parts = [TopicPartition(sink, p) for p in range(3)]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    end = consumer.end_offsets(parts)
    order: dict[int, list[int]] = {}
    while any(consumer.position(p) < end[p] for p in parts):
        for records in consumer.poll(timeout_ms=1000).values():
            for r in records:
                row = json.loads(r.value)
                order.setdefault(row["k"], []).append(row["seq"])
    consumer.close()
    assert sorted(order) == list(range(10))
    for k, seqs in order.items():
        assert seqs == list(range(300)), f"key {k}: {len(seqs)} rows, in order: {seqs == sorted(seqs)}"


@EXTENDED
def test_an_upsert_kafka_sink_with_exactly_once_writes_each_change_once(tmp_path, kafka_broker):
    """A count per key into upsert-kafka with exactly-once: every change message is committed once, and the latest
    value per key is the count."""
    from kafka import KafkaConsumer, TopicPartition

    bootstrap = kafka_broker
    source, sink, prefix = names()
    create_topic(bootstrap, source, 2)
    create_topic(bootstrap, sink, 1)
    produce(bootstrap, source, 0, 3000)
    home = tmp_path / "home"
    script = tmp_path / "count.sql"
    script.write_text(f"""
        CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{source}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset',
          'scan.bounded.mode' = 'latest-offset');
        CREATE TABLE counts (k BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
          'topic' = '{sink}', 'key.format' = 'json', 'value.format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'sink.delivery-guarantee' = 'exactly-once',
          'sink.transactional-id-prefix' = '{prefix}');
        SET 'table.dml-sync' = 'true';
        INSERT INTO counts SELECT id % 7 AS k, COUNT(*) AS n FROM src GROUP BY id % 7;
    """)
    run = streamshell("-f", str(script), home=home)
    assert run.code == 0, run.err[-3000:]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False)
    part = TopicPartition(sink, 0)
    consumer.assign([part])
    consumer.seek_to_beginning(part)
    end = consumer.end_offsets([part])[part]
    latest, messages = {}, 0
    while consumer.position(part) < end:
        for records in consumer.poll(timeout_ms=1000).values():
            for r in records:
                messages += 1
                latest[json.loads(r.key)["k"]] = json.loads(r.value)["n"]
    consumer.close()
    assert latest == {k: len([i for i in range(3000) if i % 7 == k]) for k in range(7)}
    assert messages == 7, f"{messages} change messages for 7 keys counted in one batch"
    assert batch_records(bootstrap, prefix, 4), "written in transactions, with the batch recorded"


def test_a_read_committed_kafka_table_reads_no_aborted_rows_and_read_uncommitted_does(tmp_path, kafka_broker):
    from kafka import KafkaProducer

    bootstrap = kafka_broker
    topic = f"eo-read-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 1)
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"eo-read-{uuid.uuid4().hex[:8]}")
    producer.init_transactions()
    for first, commit in ((0, True), (100, False), (10, True)):
        producer.begin_transaction()
        for i in range(first, first + 10):
            producer.send(topic, json.dumps({"id": i}).encode())
        producer.flush()  # in the log before the abort marker (an abort drops what was never sent)
        producer.commit_transaction() if commit else producer.abort_transaction()
    producer.close()

    def read(level: str) -> list[int]:
        sql = f"""CREATE TEMPORARY TABLE t (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{topic}',
              'format' = 'json', 'properties.bootstrap.servers' = '{bootstrap}', 'scan.bounded.mode' = 'latest-offset',
              'properties.isolation.level' = '{level}');
            SELECT id FROM t;"""
        run = streamshell("--result-mode", "json", "-e", sql, home=tmp_path / "home")
        assert run.code == 0, run.err[-3000:]
        return sorted(json.loads(line)["row"]["id"] for line in run.out.splitlines() if line.startswith("{"))

    assert read("read_committed") == list(range(20))
    assert read("read_uncommitted") == list(range(20)) + list(range(100, 110))


@EXTENDED
def test_a_read_committed_job_waits_for_an_open_transaction_and_copies_it_once_committed(tmp_path, kafka_broker):
    """A job reading with read_committed stops at the first open transaction of its input (Spark asks for the last
    stable offset), so rows committed later are copied, not skipped: a chain of exactly-once jobs loses nothing."""
    from kafka import KafkaProducer

    bootstrap = kafka_broker
    source, sink, prefix = names()
    create_topic(bootstrap, source, 1)
    create_topic(bootstrap, sink, 1)
    writer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{prefix}-upstream")
    writer.init_transactions()
    writer.begin_transaction()
    for i in range(0, 10):
        writer.send(source, json.dumps({"id": i}).encode())
    writer.commit_transaction()
    writer.begin_transaction()
    for i in range(10, 20):
        writer.send(source, json.dumps({"id": i}).encode())
    writer.flush()  # in the log, its transaction open
    produce(bootstrap, source, 20, 30)  # after it, outside any transaction
    home = tmp_path / "home"
    script = tmp_path / "chain.sql"
    script.write_text(f"""
        CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{source}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'properties.isolation.level' = 'read_committed');
        CREATE TABLE snk (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{sink}', 'format' = 'json',
          'properties.bootstrap.servers' = '{bootstrap}', 'sink.delivery-guarantee' = 'exactly-once',
          'sink.transactional-id-prefix' = '{prefix}');
        SET 'table.dml-sync' = 'false';
        SET 'pipeline.name' = 'eo-chain';
        INSERT INTO snk SELECT id FROM src;
    """)
    run = streamshell("-f", str(script), home=home)
    assert run.code == 0, run.err[-3000:]
    job_id = re.search(r"Job 'eo-chain' started with id (\w+)\.", run.out).group(1)
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 10, 300, "the committed transaction copied")
    time.sleep(5)  # time for the job to read on, were it to skip the open transaction
    assert sorted(visible_ids(bootstrap, sink)) == list(range(10)), "nothing past the open transaction yet"
    writer.commit_transaction()
    writer.close()
    wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 30, 300, "the rest copied once it committed")
    shell(home, f"STOP JOB '{job_id}';")
    assert_each_once(visible_ids(bootstrap, sink), 30)


@EXTENDED
def test_a_broker_restart_during_an_exactly_once_copy_loses_nothing_and_doubles_nothing(tmp_path):
    """Kafka (the test's own: tests/e2e/own_brokers.py) stopped with `scripts/services stop kafka` in the middle of
    the copy and started again: the transactions open then are aborted, the job's restart strategy runs the batch
    again, and each id is committed once."""
    from tests.e2e.own_brokers import own_brokers
    from tests.e2e.test_broker_outage import Outage

    with own_brokers(tmp_path / "brokers", "kafka") as own:
        bootstrap = own.brokers.kafka_bootstrap
        source, sink, prefix = names()
        create_topic(bootstrap, source, SOURCE_PARTITIONS)
        create_topic(bootstrap, sink, SINK_PARTITIONS)
        produce(bootstrap, source, 0, 20_000)
        home, job_id = start_copy(tmp_path, bootstrap, source, sink, prefix, "eo-outage", batch=1000)
        wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 5000, 300, "5,000 ids committed")
        with Outage(own, "kafka"):
            time.sleep(10)
        wait_for(lambda: len(visible_ids(bootstrap, sink)) >= 20_000, 900, "every id committed after the restart", 5)
        time.sleep(3)  # a batch written twice would show now
        row = job_row(home, job_id)
        shell(home, f"STOP JOB '{job_id}';")
        assert_each_once(visible_ids(bootstrap, sink), 20_000)
        print(f"job after the broker restart: {row['status']}, {row['restarts']} restarts, last failure: "
              f"{row['last failure']}")
