"""Jobs in processes of their own, through the real command line and the real Kafka broker.

A job outlives the shell that started it; any shell on the same home lists it, stops it with a savepoint and
resumes it; a job process killed with SIGKILL is FAILED with the signal, and RESUME JOB continues it from its last
checkpoint under the same query id, so the filesystem sink holds every input row exactly once.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import uuid
from pathlib import Path

import pytest

from tests.e2e.cli import streamshell
from tests.e2e.kafka_topics import IdProducer
from tests.spark.helpers import wait_for

pytestmark = pytest.mark.e2e

# `make test` runs the faults at 100,000 messages; `make fault-run` at 1,000,000
MESSAGES = int(os.environ.get("STREAMSHELL_FAULT_MESSAGES", "100000"))
RATE = 5_000  # messages a second while a job is stopped with a savepoint
KILL_RATE = 10_000  # messages a second while a job process is killed


def Producer(brokers, topic: str, first: int, last: int, rate: int = RATE,  # noqa: N802 - a thread's maker
             hold_at: int | None = None) -> IdProducer:  # fmt: skip
    """Ids `first` .. `last - 1` written to a topic (no key) at about `rate` a second, as a live source would."""
    return IdProducer(brokers.kafka_bootstrap, topic, first, last, rate, keyed=False, hold_at=hold_at)


def warmed_up(brokers, topic: str, out: Path, rate: int = RATE) -> IdProducer:
    """The first thousand ids, read by the job (its Spark has started), then the rest arriving at `rate` a second,
    held half way until the test releases them (after it has stopped or killed the job)."""
    first = Producer(brokers, topic, 0, 1000, rate=10**9)
    first.run()
    wait_for(lambda: len(ids_written(out)) >= 1000, 300, "the first thousand rows written")
    rest = Producer(brokers, topic, 1000, MESSAGES, rate=rate, hold_at=MESSAGES // 2)
    rest.start()
    return rest


def ids_written(out: Path) -> list[int]:
    """Every id in the sink's visible files. Staging folders and hidden files are not the table's and are not
    entered (the job deletes them as it goes, which would fail a walk through them); a file replaced while it was
    read (a replayed batch) makes the listing start again."""
    for _ in range(20):
        ids = []
        try:
            for folder, subfolders, files in os.walk(out):
                subfolders[:] = [d for d in subfolders if not d.startswith((".", "_"))]
                for name in files:
                    if name.startswith("part-"):
                        text = (Path(folder) / name).read_text()
                        ids += [json.loads(line)["id"] for line in text.splitlines() if line]
            return ids
        except FileNotFoundError:
            time.sleep(0.2)
    raise AssertionError(f"the files under {out} kept changing while they were read")


def copy_job(tmp_path: Path, brokers, name: str, kafka_sink: str | None = None) -> tuple[Path, Path, str, str]:
    """Start a Kafka -> filesystem job from a script that returns once it runs; (home, out, topic, job id). With
    `kafka_sink`, the job is a statement set that also copies each id to that Kafka topic."""
    home, out, topic = tmp_path / "home", tmp_path / "out", f"detached-{uuid.uuid4().hex[:8]}"
    insert = "INSERT INTO out SELECT id FROM src;"
    if kafka_sink:
        insert = f"""CREATE TABLE kout (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{kafka_sink}',
          'format' = 'json', 'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}');
        EXECUTE STATEMENT SET BEGIN
          INSERT INTO out SELECT id FROM src;
          INSERT INTO kout SELECT id FROM src;
        END;"""
    script = tmp_path / "start.sql"
    script.write_text(f"""
        CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'format' = 'json',
          'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'scan.startup.mode' = 'earliest-offset');
        CREATE TABLE out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
        SET 'table.dml-sync' = 'false';
        SET 'pipeline.name' = '{name}';
        {insert}
    """)
    run = streamshell("-f", str(script), home=home)
    assert run.code == 0, run.err[-3000:]
    job_id = re.search(rf"Job '{name}' started with id (\w+)\.", run.out).group(1)
    return home, out, topic, job_id


def shell(home: Path, sql: str):
    run = streamshell("--result-mode", "tableau", "-e", sql, home=home)
    assert run.code == 0, run.err[-3000:]
    return run


def job_row(home: Path, job_id: str) -> dict:
    run = streamshell("--result-mode", "json", "-e", "SHOW JOBS;", home=home)
    assert run.code == 0, run.err[-3000:]
    rows = [json.loads(line)["row"] for line in run.out.splitlines() if line.startswith("{")]
    return next(r for r in rows if r["job id"] == job_id)


def state(home: Path, job_id: str) -> dict:
    return json.loads((home / "jobs" / job_id / "state.json").read_text())


def test_a_job_outlives_its_shell_and_another_shell_stops_it_with_a_savepoint_and_resumes_it(tmp_path, brokers):
    home, out, topic, job_id = copy_job(tmp_path, brokers, "copy-ids")
    producer = warmed_up(brokers, topic, out)
    wait_for(lambda: len(ids_written(out)) > 5000, 300, "rows written as they arrive")
    row = job_row(home, job_id)  # a new shell: the first one has quit
    assert (row["name"], row["status"]) == ("copy-ids", "RUNNING")
    assert f"shell.job_process {home / 'jobs' / job_id}" in Path(f"/proc/{state(home, job_id)['pid']}/cmdline") \
        .read_bytes().replace(b"\0", b" ").decode(), "ps names the job's folder"  # fmt: skip

    assert producer.is_alive(), "the stop below comes while the input keeps coming"
    stopped = shell(home, f"STOP JOB '{job_id}' WITH SAVEPOINT;")
    assert f"Job '{job_id}' (copy-ids) has been stopped with a savepoint" in stopped.out
    assert job_row(home, job_id)["status"] == "STOPPED"
    before = ids_written(out)
    assert len(before) == len(set(before)), "nothing written twice so far"

    producer.release()
    producer.join()
    assert producer.error is None
    resumed = shell(home, f"SET 'table.dml-sync' = 'false'; RESUME JOB '{job_id}';")
    assert f"started with id {job_id}" in resumed.out
    wait_for(lambda: len(ids_written(out)) >= MESSAGES, 300, "every row written")
    shell(home, f"STOP JOB '{job_id}';")
    ids = ids_written(out)
    assert sorted(ids) == list(range(MESSAGES)), f"{len(ids)} rows, {len(set(ids))} distinct: none lost, none twice"


def kafka_ids(brokers, topic: str, at_least: int) -> list[int]:
    """The ids in a Kafka topic, read from its start until `at_least` distinct ones have come (or 60 s without
    one); an at-least-once sink may hold some twice."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=60_000)  # fmt: skip
    ids, distinct = [], set()
    try:
        for message in consumer:
            ids.append(json.loads(message.value)["id"])
            distinct.add(ids[-1])
            if len(distinct) >= at_least:
                break
    finally:
        consumer.close()
    return ids


def test_a_job_process_killed_with_sigkill_is_failed_with_the_signal_and_resumes_exactly_once(tmp_path, brokers):
    """A statement set copying Kafka to files and to another Kafka topic: after the kill and RESUME JOB, the files
    hold each id once, and the Kafka sink (at least once) lost none."""
    sink = f"detached-sink-{uuid.uuid4().hex[:8]}"
    home, out, topic, job_id = copy_job(tmp_path, brokers, "copy-killed", kafka_sink=sink)
    producer = warmed_up(brokers, topic, out, rate=KILL_RATE)
    wait_for(lambda: len(ids_written(out)) > 5000, 300, "rows written as they arrive")
    assert producer.is_alive(), "the kill below comes while the input keeps coming"
    pid = state(home, job_id)["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: job_row(home, job_id)["status"] == "FAILED", 60, "the job FAILED")
    row = job_row(home, job_id)
    assert row["last failure"] == f"the job process (pid {pid}) killed by signal 9 (SIGKILL)"
    assert row["detail"] is None or "RESUME JOB" in row["detail"]

    producer.release()
    producer.join()
    assert producer.error is None
    shell(home, f"SET 'table.dml-sync' = 'false'; RESUME JOB '{job_id}';")
    wait_for(lambda: len(ids_written(out)) >= MESSAGES, 300, "every row written")
    time.sleep(3)  # a batch written twice would show now
    shell(home, f"STOP JOB '{job_id}';")
    ids = ids_written(out)
    assert sorted(ids) == list(range(MESSAGES)), f"{len(ids)} rows, {len(set(ids))} distinct: none lost, none twice"
    in_kafka = kafka_ids(brokers, sink, MESSAGES)
    assert set(in_kafka) == set(range(MESSAGES)), f"{MESSAGES - len(set(in_kafka))} ids lost by the Kafka sink"


def test_a_shell_killed_while_its_script_waits_leaves_the_job_running(tmp_path, brokers):
    import subprocess
    import sys

    from tests.e2e.cli import ROOT

    home, out, topic = tmp_path / "home", tmp_path / "out", f"detached-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "wait.sql"
    script.write_text(f"""
        SET 'table.dml-sync' = 'true';
        CREATE TABLE src (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{topic}', 'format' = 'json',
          'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'scan.startup.mode' = 'earliest-offset');
        CREATE TABLE out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
        INSERT INTO out SELECT id FROM src;
    """)
    shell_process = subprocess.Popen([sys.executable, "-m", "shell", "-f", str(script)], cwd=ROOT,
                                     env={**os.environ, "STREAMSHELL_HOME": str(home)},
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    producer = Producer(brokers, topic, 0, 20_000)
    producer.start()
    wait_for(lambda: len(ids_written(out)) > 1000, 300, "rows written while the script waits")
    shell_process.kill()
    shell_process.wait()
    (job_id,) = [p.name for p in (home / "jobs").iterdir()]
    producer.join()
    wait_for(lambda: len(ids_written(out)) >= 20_000, 300, "every row written after the shell died")
    assert job_row(home, job_id)["status"] == "RUNNING"
    shell(home, f"STOP JOB '{job_id}';")
    assert sorted(ids_written(out)) == list(range(20_000))
    assert not (home / "jobs" / job_id).exists(), "a plain stop drops the job's state"


def test_a_statement_set_runs_as_one_job_with_a_sink_per_insert_and_describe_job_tells_it_all(tmp_path):
    home, debits, credits = tmp_path / "home", tmp_path / "debits", tmp_path / "credits"
    script = tmp_path / "split.sql"
    script.write_text(f"""
        CREATE TEMPORARY TABLE tx (id BIGINT, amount INT) WITH ('connector' = 'datagen',
          'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '1999',
          'fields.amount.min' = '-100', 'fields.amount.max' = '100');
        CREATE TEMPORARY TABLE debits (id BIGINT, amount INT) WITH ('connector' = 'filesystem', 'path' = '{debits}', 'format' = 'json');
        CREATE TEMPORARY TABLE credits (id BIGINT, amount INT) WITH ('connector' = 'filesystem', 'path' = '{credits}', 'format' = 'json');
        SET 'table.dml-sync' = 'true';
        SET 'pipeline.name' = 'split';
        EXECUTE STATEMENT SET BEGIN
          INSERT INTO debits SELECT id, amount FROM tx WHERE amount < 0;
          INSERT INTO credits SELECT id, amount FROM tx WHERE amount >= 0;
        END;
    """)
    run = streamshell("-f", str(script), home=home)
    assert run.code == 0, run.err[-3000:]
    (job_id,) = re.findall(r"Job 'split' started with id (\w+)\.", run.out)
    rows = lambda out: [json.loads(line) for p in out.glob("part-*") for line in p.read_text().splitlines()]  # noqa: E731
    assert all(r["amount"] < 0 for r in rows(debits)) and all(r["amount"] >= 0 for r in rows(credits))
    assert sorted(r["id"] for r in rows(debits) + rows(credits)) == list(range(2000)), "each row in one sink, once"
    assert rows(debits) and rows(credits)
    assert sorted(p.name for p in (home / "jobs" / job_id).glob("checkpoint*")) == ["checkpoint", "checkpoint-1"]

    described = streamshell("--result-mode", "json", "-e", f"DESCRIBE JOB '{job_id}';", home=home)
    assert described.code == 0, described.err
    about = {json.loads(line)["row"]["property"]: json.loads(line)["row"]["value"] for line in described.out.splitlines()}
    assert (about["name"], about["status"], about["target"]) == ("split", "FINISHED", "debits, credits")
    assert about["statement"].startswith("EXECUTE STATEMENT SET BEGIN")
    assert about["setting pipeline.name"] == "split"


USERS, ACCOUNTS = MESSAGES // 5, 50


def user_events() -> list[tuple[str, dict | None]]:
    """MESSAGES changes to MESSAGES / 5 users: each joins an account, moves four times; every tenth then leaves."""
    events: list[tuple[str, dict | None]] = []
    for round_ in range(5):
        for user in range(USERS):
            events.append((f"u{user}", {"uid": f"u{user}", "accountId": f"a{(user + round_ * 7) % ACCOUNTS}"}))
    for user in range(0, USERS, 10):
        events.append((f"u{user}", None))  # a tombstone: the user is gone
    return events


def expected_counts(events) -> dict[str, int]:
    latest: dict[str, str | None] = {}
    for key, value in events:
        latest[key] = value["accountId"] if value else None
    counts: dict[str, int] = {}
    for account in latest.values():
        if account is not None:
            counts[account] = counts.get(account, 0) + 1
    return counts


def test_an_upsert_pulsar_count_killed_with_sigkill_and_resumed_ends_in_the_exact_state(tmp_path, brokers):
    """The shell that waits for the job is killed a third of the way in, the job's own process two thirds of the
    way in, while the changes keep coming; a new shell resumes the job, and the sink converges exactly."""
    import subprocess
    import sys

    import pulsar

    from tests.e2e.cli import ROOT
    from tests.e2e.test_scenarios import QUIET

    suffix = uuid.uuid4().hex[:8]
    users, counts = f"persistent://public/default/users-{suffix}", f"persistent://public/default/counts-{suffix}"
    home = tmp_path / "home"
    script = tmp_path / "count.sql"
    script.write_text(f"""
        CREATE TABLE users (uid STRING, accountId STRING, PRIMARY KEY (uid) NOT ENFORCED) WITH (
          'connector' = 'upsert-pulsar', 'topic' = '{users}', 'key.format' = 'raw', 'value.format' = 'json',
          'service-url' = '{brokers.pulsar_service_url}', 'admin-url' = '{brokers.pulsar_admin_url}');
        CREATE TABLE counts (accountId STRING, userCount BIGINT, PRIMARY KEY (accountId) NOT ENFORCED) WITH (
          'connector' = 'upsert-pulsar', 'topic' = '{counts}', 'key.format' = 'raw', 'value.format' = 'json',
          'service-url' = '{brokers.pulsar_service_url}', 'admin-url' = '{brokers.pulsar_admin_url}');
        SET 'table.dml-sync' = 'true';
        SET 'pipeline.name' = 'count-users';
        INSERT INTO counts SELECT accountId, COUNT(*) AS userCount FROM users GROUP BY accountId;
    """)
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        producer = client.create_producer(users, batching_enabled=True, block_if_queue_full=True)
        events = user_events()
        producer.send(json.dumps(events[0][1]).encode(), partition_key=events[0][0])  # the topic exists first
        waiting = subprocess.Popen([sys.executable, "-m", "shell", "-f", str(script)], cwd=ROOT,
                                   env={**os.environ, "STREAMSHELL_HOME": str(home)},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        wait_for(lambda: (home / "jobs").is_dir() and any((home / "jobs").iterdir()), 300, "the job's folder")
        (job_id,) = [p.name for p in (home / "jobs").iterdir()]
        wait_for(lambda: job_row(home, job_id)["status"] == "RUNNING", 300, "the job running")
        began = time.monotonic()
        for i, (key, value) in enumerate(events[1:], start=1):  # at about KILL_RATE a second, as the job runs
            producer.send_async(json.dumps(value).encode() if value else None, None, partition_key=key)
            if i == len(events) // 3:  # the shell that waits for the job dies; the job does not
                assert waiting.poll() is None, "the script still waits for its job"
                waiting.kill()
                waiting.wait()
            if i == 2 * len(events) // 3:  # then the job's own process, mid-stream
                producer.flush()
                wait_for(lambda: job_row(home, job_id)["processed rows/s"] is not None, 120, "the job reading")
                assert job_row(home, job_id)["status"] == "RUNNING", "the job outlived its shell"
                pid = state(home, job_id)["pid"]
                os.kill(pid, signal.SIGKILL)
            if i % 1000 == 0 and (ahead := i / KILL_RATE - (time.monotonic() - began)) > 0:
                time.sleep(ahead)
        producer.flush()
        wait_for(lambda: job_row(home, job_id)["status"] == "FAILED", 60, "the killed job FAILED")
        assert "killed by signal 9 (SIGKILL)" in job_row(home, job_id)["last failure"]
        shell(home, f"SET 'table.dml-sync' = 'false'; RESUME JOB '{job_id}';")

        reader = client.create_reader(counts, pulsar.MessageId.earliest)
        state_now: dict[str, int] = {}

        def converged() -> bool:
            while reader.has_message_available():
                message = reader.read_next(timeout_millis=10_000)
                value = message.data()
                if value:
                    state_now[message.partition_key()] = json.loads(value)["userCount"]
                else:
                    state_now.pop(message.partition_key(), None)
            return state_now == expected_counts(events)

        wait_for(converged, 300, "the counts of every account as the input says")
        shell(home, f"STOP JOB '{job_id}';")
    finally:
        client.close()


def test_sigterm_to_a_job_process_stops_it_with_a_savepoint(tmp_path, brokers):
    home, out, topic, job_id = copy_job(tmp_path, brokers, "copy-term")
    warmup = Producer(brokers, topic, 0, 1000, rate=10**9)
    warmup.run()
    wait_for(lambda: len(ids_written(out)) >= 1000, 300, "the first thousand rows written")
    os.kill(state(home, job_id)["pid"], signal.SIGTERM)  # what `kill` or a service manager sends
    wait_for(lambda: job_row(home, job_id)["status"] == "STOPPED", 120, "the job STOPPED")
    Producer(brokers, topic, 1000, 3000, rate=10**9).run()
    shell(home, f"SET 'table.dml-sync' = 'false'; RESUME JOB '{job_id}';")
    wait_for(lambda: len(ids_written(out)) >= 3000, 300, "every row written")
    shell(home, f"STOP JOB '{job_id}';")
    assert sorted(ids_written(out)) == list(range(3000))
