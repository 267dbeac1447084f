"""Where a changelog job's micro-batches spend their time: Spark's progress report of every batch of the user count.

Why it exists: benchmarks/engine.py gives end-to-end figures (changes/s, p50); this shows what one micro-batch
is made of at a steady low rate, per stateful operator, from Spark's own `recentProgress` (no extra
instrumentation). It preloads `--keys` users into a fresh 2-partition Kafka topic (Spark's batch writer, as
the engine benchmark does), starts the user-count INSERT through the library API, waits until the job has read
the preload, then writes ~`--rate` changes/s with kafka-python for `--seconds`.

    .venv/bin/python -m benchmarks.engine_batches [--keys 1000000] [--seconds 30] [--rate 1000] [--set "K=V" ...]

`--set 'table.exec.changelog.sub-buckets=4096'` runs the job under that setting (also table options through
`ALTER TABLE users SET`: `--alter "'errors.mode' = 'ignore'"`). Needs Kafka (`scripts/services start kafka`).
One line per micro-batch with input: batch id, input rows, trigger and addBatch ms, and per stateful operator
its state rows, update ms (summed over its tasks) and commit ms. `--stages` also writes Spark's event log and
prints, per micro-batch of every query (the job's and its dead-letter query's), each Spark stage's wall time,
tasks and summed task time.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks import engine_data
from benchmarks.engine_latency import background_change


def user_count_sql(users: str, sink: str, settings: list[str], alters: list[str]) -> str:
    kafka = "'properties.bootstrap.servers' = '127.0.0.1:9092', 'key.format' = 'raw', 'value.format' = 'json'"
    lines = [f"SET '{k}' = '{v}';" for k, v in (s.split("=", 1) for s in settings)]
    lines += [
        "CREATE TABLE users (uid STRING, accountId STRING, fullName STRING, PRIMARY KEY (uid) NOT ENFORCED) "
        f"WITH ('connector' = 'upsert-kafka', 'topic' = '{users}', {kafka});",
        "CREATE TABLE counts (accountId STRING, userCount BIGINT, PRIMARY KEY (accountId) NOT ENFORCED) "
        f"WITH ('connector' = 'upsert-kafka', 'topic' = '{sink}', {kafka});",
        *(f"ALTER TABLE users SET ({a});" for a in alters),
        "INSERT INTO counts SELECT accountId, COUNT(1) AS userCount FROM users GROUP BY accountId;",
    ]
    return "\n".join(lines)


def describe(progress: dict) -> str:
    took = progress["durationMs"]
    operators = "; ".join(
        f"{o['operatorName']}: {o['numRowsTotal']} rows, update {o['allUpdatesTimeMs']} ms, commit {o['commitTimeMs']} ms"
        for o in progress.get("stateOperators", [])
    )
    return (f"batch {progress['batchId']}: {progress['numInputRows']} rows, trigger {took.get('triggerExecution', 0)} ms, "
            f"addBatch {took.get('addBatch', 0)} ms | {operators}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--set", dest="settings", action="append", default=[], help="K=V, a SET before the INSERT")
    parser.add_argument("--alter", action="append", default=[], help="an option list for ALTER TABLE users SET")
    parser.add_argument("--stages", action="store_true", help="print Spark's stage times per micro-batch")
    args = parser.parse_args(argv)
    event_log = Path(tempfile.mkdtemp(prefix="bench-batches-events-")) if args.stages else None
    if event_log is not None:
        from shell.engine import spark as spark_settings

        spark_settings.BASE_CONF.update({"spark.eventLog.enabled": "true", "spark.eventLog.compress": "false",
                                         "spark.eventLog.dir": event_log.as_uri()})  # fmt: skip

    from kafka import KafkaProducer

    from shell.results import JobStarted
    from shell.session import Session, SessionOptions
    from shell.sql.parse import parse_script

    tag = uuid.uuid4().hex[:8]
    users, sink = f"bench-batches-{tag}-users", f"bench-batches-{tag}-sink"
    engine_data.create_topics([users, sink])
    subprocess.run([sys.executable, "-m", "benchmarks.engine_data", "produce", "--pipeline", "count", "--phase",
                    "preload", "--topics", users, "--keys", str(args.keys)], check=True, capture_output=True)
    session = Session(SessionOptions(home=Path(tempfile.mkdtemp(prefix="bench-batches-"))))
    try:
        script = parse_script(user_count_sql(users, sink, args.settings, args.alter))
        started = [r for r in map(session.execute, script) if isinstance(r, JobStarted)]
        job = session.jobs.jobs[started[0].job_id]
        seen: set[tuple] = set()

        def report_new() -> None:
            for p in list(job.query.recentProgress):
                ident = (p["runId"], p["batchId"], p["timestamp"])
                if ident not in seen and p["numInputRows"]:
                    seen.add(ident)
                    print(describe(p), flush=True)

        began = time.time()
        while sum(p["numInputRows"] for p in job.query.recentProgress) < args.keys:
            report_new()
            time.sleep(0.5)
        print(f"preload read in {time.time() - began:.1f} s", flush=True)
        producer = KafkaProducer(bootstrap_servers="127.0.0.1:9092", key_serializer=str.encode, linger_ms=5,
                                 value_serializer=lambda v: None if v is None else json.dumps(v).encode())
        rng = random.Random(1)
        end = time.time() + args.seconds
        while time.time() < end:
            for _ in range(args.rate // 10):
                topic, key, value = background_change(rng, "count", [users], args.keys, 10_000)
                producer.send(topic, key=key, value=value)
            producer.flush()
            report_new()
            time.sleep(0.1)
        time.sleep(8)
        report_new()
        job.stop()
    finally:
        session.close()
        engine_data.delete_topics([users, sink])
    if event_log is not None:
        for path in sorted(event_log.rglob("events_*")):
            print_stages(path)
    return 0


def print_stages(path: Path) -> None:
    """Each streaming micro-batch's Spark jobs from an event log: per stage its wall time, tasks and task time."""
    jobs: dict[int, dict] = {}
    stages: dict[int, tuple[int, int]] = {}
    task_ms: dict[int, int] = {}
    with path.open() as events:
        for line in events:
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                props = event.get("Properties") or {}
                query = (props.get("spark.job.description") or "").split("runId = ")[-1][:8]
                jobs[event["Job ID"]] = {"batch": props.get("streaming.sql.batchId"), "query": query,
                                         "start": event["Submission Time"], "stages": event["Stage IDs"]}  # fmt: skip
            elif kind == "SparkListenerJobEnd" and event["Job ID"] in jobs:
                jobs[event["Job ID"]]["end"] = event["Completion Time"]
            elif kind == "SparkListenerStageCompleted":
                info = event["Stage Info"]
                stages[info["Stage ID"]] = (info["Number of Tasks"], info["Completion Time"] - info["Submission Time"])
            elif kind == "SparkListenerTaskEnd":
                info = event["Task Info"]
                task_ms[event["Stage ID"]] = task_ms.get(event["Stage ID"], 0) + info["Finish Time"] - info["Launch Time"]
    for job in jobs.values():
        if job["batch"] is None or "end" not in job:
            continue
        parts = [f"{stages[s][1]} ms ({stages[s][0]} tasks, {task_ms.get(s, 0)} ms)" for s in job["stages"] if s in stages]
        print(f"query {job['query']} batch {job['batch']}: job {job['end'] - job['start']} ms = " + " + ".join(parts))


if __name__ == "__main__":
    raise SystemExit(main())
