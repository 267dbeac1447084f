"""Where a changelog job's micro-batches spend their time: Spark's progress report of every batch of a pipeline.

Why it exists: benchmarks/engine.py gives end-to-end figures (changes/s, p50); this shows what one micro-batch
is made of at a steady low rate, per stateful operator, from Spark's own `recentProgress` (no extra
instrumentation). It preloads `--keys` users (for the join, also their colors and cheeses; for the orders,
`--keys` orders) into fresh 2-partition Kafka topics (Spark's batch writer, as the engine benchmark does), starts
the engine benchmark's INSERT for `--pipeline` (the user count, the three-way join or the orders per account)
through the library API, waits until the job has read the preload, then writes ~`--rate` changes/s with
kafka-python for `--seconds`. `--burst N` first writes N changes at once with Spark's batch writer, as the engine
benchmark's caught-up phase does, and waits until the job has read them.

    .venv/bin/python -m benchmarks.engine_batches [--pipeline count|join|orders] [--keys 1000000] [--seconds 30]
        [--rate 1000] [--burst N] [--set "K=V" ...]

`--set 'table.exec.changelog.sub-buckets=4096'` runs the job under that setting (also table options through
`ALTER TABLE ... SET` on every input table: `--alter "'errors.mode' = 'ignore'"`). Needs Kafka
(`scripts/services start kafka`).
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
import time
import uuid
from pathlib import Path

from benchmarks import engine_data, scratch
from benchmarks.engine import INPUTS, pipeline_sql, producer_command
from benchmarks.engine_latency import background_change


def job_sql(pipeline: str, topics: list[str], sink: str, settings: list[str], alters: list[str]) -> str:
    """The engine benchmark's script for `pipeline`, with `SET`s before it and `ALTER TABLE`s before its INSERT."""
    sets = "".join(f"SET '{k}' = '{v}';\n" for k, v in (s.split("=", 1) for s in settings))
    script = pipeline_sql(pipeline, topics, sink)
    ddl, insert = script[: script.index("INSERT INTO")], script[script.index("INSERT INTO") :]
    return sets + ddl + "".join(f"ALTER TABLE {t} SET ({a});\n" for a in alters for t in INPUTS[pipeline]) + insert


def describe(progress: dict) -> str:
    """One line of a micro-batch: its input, Spark's phases (trigger, addBatch and the rest) and, per stateful
    operator, its state rows, update, removal and commit time (summed over its tasks) and the state store's own
    commit latencies (RocksDB: flush, changelog file sync, checkpoint)."""
    took = progress["durationMs"]
    operators = "; ".join(
        f"{o['operatorName']}: {o['numRowsTotal']} rows, update {o['allUpdatesTimeMs']} ms, "
        f"removal {o.get('allRemovalsTimeMs', 0)} ms, commit {o['commitTimeMs']} ms"
        + "".join(f", {k.removeprefix('rocksdbCommit')} {v}" for k, v in sorted((o.get("customMetrics") or {}).items())
                  if k.startswith("rocksdbCommit") and v)
        for o in progress.get("stateOperators", [])
    )
    others = ", ".join(f"{k} {v}" for k, v in took.items() if k not in ("triggerExecution", "addBatch") and v)
    return (f"batch {progress['batchId']}: {progress['numInputRows']} rows, trigger {took.get('triggerExecution', 0)} ms, "
            f"addBatch {took.get('addBatch', 0)} ms ({others}) | {operators}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", choices=tuple(INPUTS), default="count")
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--burst", type=int, default=0, help="changes written at once before the steady rate")
    parser.add_argument("--set", dest="settings", action="append", default=[], help="K=V, a SET before the INSERT")
    parser.add_argument("--alter", action="append", default=[], help="an option list for ALTER TABLE t SET, every input t")
    parser.add_argument("--stages", action="store_true", help="print Spark's stage times per micro-batch")
    parser.add_argument("--event-log", type=Path, help="with --stages: keep Spark's event log in this (new) directory")
    parser.add_argument("--progress", type=Path,
                        help="also write every micro-batch's progress report (Spark's JSON, one per line) to this file")
    args = parser.parse_args(argv)
    with scratch.scratch_dir("bench-batches-") as work:
        event_log = (args.event_log or work / "events") if args.stages else None
        reports = run(args, work / "home", event_log)
        stage_ms: list[list[int]] = []
        if event_log is not None:
            for path in sorted(event_log.rglob("events_*")):
                stage_ms += print_stages(path)
        print(breakdown(reports, args.rate, stage_ms))
    return 0


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def breakdown(reports: list[dict], rate: int, stage_ms: list[list[int]]) -> str:
    """The steady micro-batches' median parts as a markdown table: the batches with input after the first, of at
    most 3 s of input at `rate` (no preload, no burst). `stage_ms`: each streaming Spark job's stage wall times."""
    steady = [r for r in reports[1:] if 0 < r["numInputRows"] <= 3 * rate]
    rows = [("input rows", [r["numInputRows"] for r in steady])]
    for part in ("triggerExecution", "latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets"):
        rows.append((f"{part} ms", [(r["durationMs"] or {}).get(part, 0) for r in steady]))
    names = [o["operatorName"] for o in (steady[0]["stateOperators"] if steady else [])]
    for n, name in enumerate(names):
        ops = [r["stateOperators"][n] for r in steady if len(r["stateOperators"]) > n]
        rows.append((f"{name}: update ms (summed over tasks)", [o["allUpdatesTimeMs"] for o in ops]))
        rows.append((f"{name}: commit ms (summed over tasks)", [o["commitTimeMs"] for o in ops]))
        rows.append((f"{name}: of which changelog file sync ms",
                     [(o.get("customMetrics") or {}).get("rocksdbCommitFileSyncLatencyMs", 0) for o in ops]))
    for n in range(max((len(s) for s in stage_ms[2:]), default=0)):
        rows.append((f"Spark stage {n + 1} wall ms", [s[n] for s in stage_ms[2:] if len(s) > n]))
    lines = [f"steady batches: {len(steady)} (medians, and the range)", "", "| part | median | range |",
             "| --- | ---: | --- |"]  # fmt: skip
    lines += [f"| {name} | {_median(v):,.0f} | {min(v):,.0f}-{max(v):,.0f} |" for name, v in rows if v]
    return "\n".join(lines)


def run(args: argparse.Namespace, home: Path, event_log: Path | None) -> list[dict]:
    """The job on fresh topics, its catalog home at `home` and Spark's event log (if any) in `event_log`. The job
    runs detached, as a user's does; its micro-batches are read from its batch log (benchmarks/detached_job.py)."""
    settings = list(args.settings)
    if event_log is not None:
        event_log.mkdir()
        settings += ["spark.eventLog.enabled=true", "spark.eventLog.compress=false",
                     f"spark.eventLog.dir={event_log.as_uri()}"]  # fmt: skip

    from kafka import KafkaProducer

    from benchmarks.detached_job import start
    from shell.session import Session, SessionOptions

    tag = uuid.uuid4().hex[:8]
    topics = [f"bench-batches-{tag}-{t}" for t in INPUTS[args.pipeline]]
    sink = f"bench-batches-{tag}-sink"
    engine_data.create_topics([*topics, sink])
    producer_phase = [*producer_command(args.pipeline, topics, args.keys, 10_000), "--phase"]
    subprocess.run([*producer_phase, "preload"], check=True, capture_output=True)
    preload = engine_data.stored(topics)
    session = Session(SessionOptions(home=home))
    progress_file = args.progress.open("w") if args.progress else None
    try:
        job = start(session, job_sql(args.pipeline, topics, sink, settings, args.alter))
        read = [0]  # input rows of the batches reported so far

        def report_new() -> None:
            for p in job.new_reports():
                if progress_file is not None:
                    progress_file.write(json.dumps(p, default=str) + "\n")
                    progress_file.flush()
                if p["numInputRows"]:
                    read[0] += p["numInputRows"]
                    print(describe(p), flush=True)

        def wait_read(rows: int, what: str) -> None:
            began = time.time()
            while read[0] < rows:
                report_new()
                status, failure = job.status()
                if status not in ("RUNNING", "RESTARTING", "STARTING"):
                    raise RuntimeError(f"the job is {status}: {failure}")
                time.sleep(0.5)
            print(f"{what} read in {time.time() - began:.1f} s", flush=True)

        wait_read(preload, "preload")
        if args.burst:
            subprocess.run([*producer_phase, "changes", "--changes", str(args.burst)], check=True, capture_output=True)
            wait_read(preload + args.burst, "burst")
        producer = KafkaProducer(bootstrap_servers="127.0.0.1:9092", key_serializer=str.encode, linger_ms=5,
                                 value_serializer=lambda v: None if v is None else json.dumps(v).encode())
        rng = random.Random(1)
        end = time.time() + args.seconds
        while time.time() < end:
            for _ in range(args.rate // 10):
                topic, key, value = background_change(rng, args.pipeline, topics, args.keys, 10_000)
                producer.send(topic, key=key, value=value)
            producer.flush()
            report_new()
            time.sleep(0.1)
        time.sleep(8)
        report_new()
        job.stop()
        return job.reports
    finally:
        if progress_file is not None:
            progress_file.close()
        session.close()
        engine_data.delete_topics([*topics, sink])


def print_stages(path: Path) -> list[list[int]]:
    """Each streaming micro-batch's Spark jobs from an event log: per stage its wall time, tasks and task time.
    Each job's stage wall times, in order."""
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
    walls: list[list[int]] = []
    for job in jobs.values():
        if job["batch"] is None or "end" not in job:
            continue
        parts = [f"{stages[s][1]} ms ({stages[s][0]} tasks, {task_ms.get(s, 0)} ms)" for s in job["stages"] if s in stages]
        print(f"query {job['query']} batch {job['batch']}: job {job['end'] - job['start']} ms = " + " + ".join(parts))
        walls.append([stages[s][1] for s in sorted(job["stages"]) if s in stages])
    return walls


if __name__ == "__main__":
    raise SystemExit(main())
