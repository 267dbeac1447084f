"""Latency of a stateless pipeline at fixed rates: streamshell in real-time mode, streamshell in micro-batches and
Flink SQL, one after another in one run, every engine's output checked.

Why it exists: real-time mode (`SET 'execution.latency' = 'low'`, shell/engine/real_time.py) is worth having only
if it answers faster than micro-batches and than Flink on what it runs. The pipeline is what it runs: one Kafka
topic filtered and projected into another,

    INSERT INTO snk SELECT id, sent, UPPER(name) AS name FROM src WHERE id % 4 <> 3

(JSON both ways, 2 partitions each). For each engine (its job started as its users start it: streamshell's
detached, Flink's in PyFlink's mini-cluster, parallelism 2, Flink's defaults) and each rate of `--rates`, this
process sends `--seconds` of rows at the rate, each row carrying when it was sent (`sent`, epoch microseconds),
then reads the sink. The sink topic stamps each record when the broker appends it (`message.timestamp.type` =
`LogAppendTime`), so every engine's rows are timed by the same clock, this machine's, and no engine's producer
settings matter: latency = append time - sent. The check: every row that passes the filter arrived, with its
values (`name` upper-cased, `sent` unchanged), and none that does not; duplicates are counted (the Kafka sinks
are at least once); a missing or wrong row fails the run (exit 1, no table written). CPU: the engine's process
tree (a detached job's own) over the phase, in cores.

    .venv/bin/python -m benchmarks.real_time [--quick] [--rates 1000,10000] [--seconds 60]
        [--engines streamshell-low,streamshell,flink] [--set KEY=VALUE ...] [--write]

`--quick`: 300 rows/s for 5 s, the same engines and checks (a test runs it). Needs Kafka (`scripts/services start
kafka`) and Flink (`make setup-flink`). `--write` puts the table between the real-time markers of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from benchmarks import engine_data as data
from benchmarks.engine import start_engine
from benchmarks.engine_procs import REPO
from benchmarks.report import machine, write_section

ENGINES = ("streamshell-low", "streamshell", "flink")
PARTITIONS = 2
FILTERED = 3  # rows whose id % 4 is this are filtered out


def kafka(topic: str, startup: bool = False) -> str:
    """A JSON Kafka table's options; a sink's producer sends each record at once (`linger.ms` 0: Spark's Kafka
    client's default, where Flink's newer client waits 5 ms), so every engine writes with the same setting."""
    more = ", 'scan.startup.mode' = 'earliest-offset'" if startup else ", 'properties.linger.ms' = '0'"
    return (f"'connector' = 'kafka', 'topic' = '{topic}', 'format' = 'json', "
            f"'properties.bootstrap.servers' = '{data.KAFKA}'{more}")  # fmt: skip


def pipeline_sql(engine: str, source: str, sink: str, settings: list[str] = ()) -> str:
    low = "SET 'execution.latency' = 'low';\n" if engine == "streamshell-low" else ""
    if engine != "flink":
        low += "".join(f"SET '{k.strip()}' = '{v.strip()}';\n" for k, v in (s.split("=", 1) for s in settings))
    return (
        f"CREATE TABLE src (id BIGINT, sent BIGINT, name STRING) WITH ({kafka(source, startup=True)});\n"
        f"CREATE TABLE snk (id BIGINT, sent BIGINT, name STRING) WITH ({kafka(sink)});\n"
        f"{low}INSERT INTO snk SELECT id, sent, UPPER(name) AS name FROM src WHERE id % 4 <> {FILTERED};\n"
    )


def create_topics(source: str, sink: str) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=data.KAFKA)
    try:
        admin.create_topics([
            NewTopic(source, PARTITIONS, 1),
            NewTopic(sink, PARTITIONS, 1, topic_configs={"message.timestamp.type": "LogAppendTime"}),
        ])  # fmt: skip
    finally:
        admin.close()


def send(source: str, first_id: int, rate: int, seconds: float) -> dict[int, int]:
    """Send `rate` rows a second for `seconds` (ids from `first_id`); each id's `sent` (epoch µs)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=data.KAFKA, linger_ms=0)
    count = int(rate * seconds)
    start = time.monotonic()
    times: dict[int, int] = {}
    while len(times) < count:
        due = min(count, int((time.monotonic() - start) * rate) + 1)
        while len(times) < due:
            row = {"id": first_id + len(times), "sent": time.time_ns() // 1000, "name": f"n{first_id + len(times)}"}
            producer.send(source, json.dumps(row).encode())
            times[row["id"]] = row["sent"]
        time.sleep(0.001)
    producer.flush()
    producer.close()
    return times


def expected(first_id: int, count: int) -> set[int]:
    return {i for i in range(first_id, first_id + count) if i % 4 != FILTERED}


def read_sink(sink: str, start: dict[tuple[str, int], int], wanted: set[int], timeout: float) -> dict[int, list]:
    """Every record of the sink after `start` (offsets), by id: [(append time s, sent µs, name)], read until each
    wanted id arrived (or `timeout` passed), and then on to the end the topic has then: a row written after the
    wanted ones, which should not be there, is seen too."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=data.KAFKA, enable_auto_commit=False)
    found: dict[int, list] = {}
    try:
        parts = [TopicPartition(t, p) for (t, p) in start]
        consumer.assign(parts)
        for tp in parts:
            consumer.seek(tp, start[(tp.topic, tp.partition)])
        deadline = time.monotonic() + timeout
        end: dict | None = None
        while time.monotonic() < deadline:
            if end is None and wanted <= found.keys():
                end = consumer.end_offsets(parts)
            if end is not None and all(consumer.position(tp) >= end[tp] for tp in parts):
                break
            for records in consumer.poll(timeout_ms=500).values():
                for r in records:
                    row = json.loads(r.value)
                    # the broker stamps whole milliseconds: the middle of the stamp's millisecond
                    found.setdefault(row["id"], []).append(((r.timestamp + 0.5) / 1000, row["sent"], row["name"]))
        return found
    finally:
        consumer.close()


def check(found: dict[int, list], wanted: set[int], ids: range, sent: dict[int, int]) -> dict:
    """Whether the sink holds exactly the wanted rows of the phase's `ids` with their values (`name` upper-cased,
    `sent` as sent); what differs (a row of another phase, late or early, is not this one's)."""
    found = {i: rows for i, rows in found.items() if i in ids}
    missing = sorted(wanted - found.keys())
    extra = sorted(found.keys() - wanted)
    wrong = sorted(i for i in wanted & found.keys()
                   if any(name != f"N{i}" or at != sent[i] for _, at, name in found[i]))  # fmt: skip
    duplicates = sum(len(v) - 1 for v in found.values())
    ok = not missing and not extra and not wrong
    return {"ok": ok, "rows": len(wanted), "missing": missing[:10], "extra": extra[:10], "wrong": wrong[:10],
            "missing_count": len(missing), "duplicates": duplicates}  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def warm_up(engine, source: str, sink: str, first_id: int, timeout: float = 240) -> int:  # noqa: ANN001
    """Send a row a second until the job's first row reaches the sink (the job runs and reads); the next id."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=data.KAFKA)
    deadline = time.monotonic() + timeout
    next_id = first_id
    while time.monotonic() < deadline:
        if engine.failed:
            raise RuntimeError(f"{engine.name}: {engine.failed}")
        row = {"id": next_id, "sent": time.time_ns() // 1000, "name": f"n{next_id}"}
        producer.send(source, json.dumps(row).encode())
        producer.flush()
        next_id += 1
        if data.stored([sink]) > 0:
            producer.close()
            return next_id
        time.sleep(1)
    producer.close()
    raise TimeoutError(f"{engine.name}: no row reached the sink in {timeout:.0f} s")


def measure(name: str, rates: list[int], seconds: float, work: Path, settings: list[str] = ()) -> dict:
    """One engine: its job started, warmed up, then each rate held for `seconds` and its rows read and checked."""
    tag = uuid.uuid4().hex[:8]
    source, sink = f"rt-bench-in-{tag}", f"rt-bench-out-{tag}"
    create_topics(source, sink)
    sql = work / f"{name}.sql"
    sql.write_text(pipeline_sql(name, source, sink, settings))
    engine = start_engine("flink" if name == "flink" else "streamshell", sql, work)
    phases = []
    setting = None
    try:
        engine.event("submitted", timeout=300)
        setting = job_setting(work, sql.stem, "execution.latency")  # read now: a stopped job's folder goes
        next_id = warm_up(engine, source, sink, 1)
        time.sleep(5)  # the first rows' own costs (code generation, connections) settle
        next_id = (next_id // 1_000_000 + 1) * 1_000_000
        for rate in rates:
            start = data.end_offsets([sink])
            cpu = engine.cpu()
            began = time.monotonic()
            sent = send(source, next_id, rate, seconds)
            wall = time.monotonic() - began
            used = engine.cpu() - cpu
            count = len(sent)
            wanted = expected(next_id, count)
            found = read_sink(sink, start, wanted, timeout=120)
            verdict = check(found, wanted, range(next_id, next_id + count), sent)
            latencies = [min(t for t, _, _ in found[i]) - found[i][0][1] / 1e6 for i in wanted if i in found]
            phases.append({
                "rate": rate, "sent": count, "seconds": round(wall, 1), "check": verdict, "sent_per_s": round(count / wall),
                "p50_ms": round(percentile(latencies, 0.5) * 1000, 1) if latencies else None,
                "p99_ms": round(percentile(latencies, 0.99) * 1000, 1) if latencies else None,
                "max_ms": round(max(latencies) * 1000, 1) if latencies else None,
                "mean_ms": round(statistics.fmean(latencies) * 1000, 1) if latencies else None,
                "cores": round(used / wall, 2) if wall else None,
            })  # fmt: skip
            print(json.dumps({"engine": name, **phases[-1], "check": verdict["ok"]}), flush=True)
            next_id += 1_000_000
    finally:
        engine.stop()
        data.delete_topics([source, sink])
    return {"engine": name, "latency_setting": setting, "phases": phases}


def job_setting(work: Path, stem: str, key: str) -> str | None:
    """A setting as streamshell's detached job was given it (its record), to show the run measured the mode it
    names; None for Flink, or the default."""
    for record in (work / f"{stem}-home" / "jobs").glob("*/job.json"):
        return json.loads(record.read_text()).get("settings", {}).get(key)
    return None


def report(results: list[dict], args: argparse.Namespace, commit: str, load: tuple[float, float]) -> str:
    lines = [
        f"Measured with `python -m benchmarks.real_time {' '.join(args.argv)}`".rstrip() + f" on "
        f"{time.strftime('%Y-%m-%d')} at commit {commit}, {machine()}; Kafka on the same machine; load average "
        f"(1 min) {load[0]:.1f} at the start, {load[1]:.1f} at the end.",
        "",
        f"`INSERT INTO snk SELECT id, sent, UPPER(name) AS name FROM src WHERE id % 4 <> {FILTERED}`, JSON from a "
        f"{PARTITIONS}-partition topic into another; each rate held {args.seconds:g} s per engine. Latency: the "
        "sink record's append time (LogAppendTime, whole milliseconds: the middle of its millisecond is taken) minus "
        "when this process sent the row, each engine's producer sending at once (`linger.ms` 0); cores: the engine's "
        "processes' CPU over the phase; checked: every row that passes the filter arrived with its values, none "
        "other (duplicates counted).",
        "",
        "| engine | rows/s | sent rows/s | rows checked | p50 ms | p99 ms | max ms | cores | checked |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for result in results:
        for p in result["phases"]:
            verdict = p["check"]
            said = "yes" if verdict["ok"] else f"NO: {verdict['missing_count']} missing, {len(verdict['wrong'])} wrong"
            if verdict["duplicates"]:
                said += f", {verdict['duplicates']} duplicates"
            lines.append(f"| {result['engine']} | {p['rate']:,} | {p['sent_per_s']:,} | {verdict['rows']:,} | {p['p50_ms']} | "
                         f"{p['p99_ms']} | {p['max_ms']} | {p['cores']} | {said} |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 rows/s for 5 s, the same checks")
    parser.add_argument("--rates", help="rows a second, comma-separated (default 1000,10000)")
    parser.add_argument("--seconds", type=float, help="how long each rate is held (default 60)")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting for streamshell's jobs (repeatable), e.g. execution.checkpointing.interval=30 s")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    args.argv = list(argv if argv is not None else sys.argv[1:])
    rates = [int(r) for r in (args.rates or ("300" if args.quick else "1000,10000")).split(",")]
    args.seconds = args.seconds or (5.0 if args.quick else 60.0)
    engines = [e for e in args.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        parser.error(f"unknown engine(s) {sorted(unknown)}; known: {', '.join(ENGINES)}")
    commit = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=REPO, capture_output=True,
                            text=True, check=False).stdout.strip()  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="real-time-"))
    load_start = os.getloadavg()[0]
    results = [measure(name, rates, args.seconds, work, args.set) for name in engines]
    load_end = os.getloadavg()[0]
    (work / "results.json").write_text(json.dumps(results, indent=2))
    text = report(results, args, commit, (load_start, load_end))
    print(text)
    print(f"results in {work / 'results.json'}")
    failed = [(r["engine"], p["rate"], p["check"]) for r in results for p in r["phases"] if not p["check"]["ok"]]
    if failed:
        for engine, rate, verdict in failed:
            print(f"{engine} at {rate} rows/s: the sink differs: {verdict}", file=sys.stderr)
        return 1
    if args.write:
        write_section("real-time", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
