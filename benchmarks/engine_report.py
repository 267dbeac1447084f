"""The engine benchmark's figures as markdown, and its two sections of docs/benchmarks.md (`engine-changelog`,
`engine-append`), written with benchmarks/report.py's `write_section` so that other sections are left alone."""

from __future__ import annotations

import datetime as dt
import platform
from importlib.metadata import version

from benchmarks.report import DOC, machine, write_section

__all__ = ["DOC", "render", "write"]


def _n(value) -> str:  # noqa: ANN001
    return "-" if value is None else f"{value:,.0f}"


def _load(pair: list[float]) -> str:
    low, high = min(pair), max(pair)
    return f"{low:.1f}" if round(low, 1) == round(high, 1) else f"{pair[0]:.1f}–{pair[-1]:.1f}"


def _rate_cell(phase: dict) -> str:
    rate = phase["rows"] / phase["seconds"] if phase["seconds"] > 0 else None
    if not phase["done"]:  # stopped by --timeout: what it read in the time it had
        return f"≥ {_n(phase['read'] / phase['seconds'])} (read {_n(phase['read'])} of {_n(phase['rows'])}, timed out)"
    cell = _n(rate)
    if phase.get("producer_s") is not None and phase["seconds"] - phase["producer_s"] < 1.0:
        cell += " (producer-bound: at least this)"
    return cell


# how the tables name each pipeline
PIPELINES = {"count": "user count", "join": "three-way join", "orders": "orders per account"}


def changelog_table(runs: list[dict]) -> str:
    lines = [
        "| pipeline | engine | phase | input changes | seconds | changes/s | CPU µs per change | load (1 min) |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for run in runs:
        for key, label in (("preload", "preload (inserts, from job start)"), ("changes", "changes (job caught up)")):
            phase = run.get(key)
            if phase is None:
                continue
            per_change = phase["cpu_s"] / max(phase["read"], 1) * 1e6
            lines.append(
                f"| {PIPELINES[run['pipeline']]} | {run['engine']} | {label} | {_n(phase['rows'])} | {phase['seconds']:.1f} | "
                f"{_rate_cell(phase)} | {per_change:,.0f} | {_load(phase['load'])} |"
            )
        if "error" in run:
            lines.append(f"| {PIPELINES[run['pipeline']]} | {run['engine']} | failed | | | {run['error'][:120]} | | |")
    return "\n".join(lines)


def latency_table(runs: list[dict]) -> str:
    lines = [
        "| pipeline | engine | rate held (changes/s) | probes arrived | p50 | p99 | max | engine CPU | idle CPU | result checked | load (1 min) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for run in runs:
        lat = run.get("latency")
        if lat is None:
            continue
        s = lambda v: "> 120 s (not arrived)" if v is None else f"{v:.2f} s"  # noqa: E731
        check = run.get("verify")
        checked = "not run" if check is None else (
            f"equal ({_n(check['expected_rows'])} rows)" if check.get("ok")
            else f"**differs**: {check.get('mismatches', '?')} keys of {_n(check.get('expected_rows'))}"
        )  # fmt: skip
        cores = f"{lat['cpu_s'] / lat['wall_s']:.2f} cores" if lat.get("wall_s") else f"{lat['cpu_s']:.0f} CPU s"
        idle = run.get("idle")
        idle_cores = f"{idle['cpu_s'] / idle['wall_s']:.3f} cores" if idle and idle.get("wall_s") else "-"
        lines.append(
            f"| {PIPELINES[run['pipeline']]} | {run['engine']} | {lat['rate']:,.0f} | {lat['arrived']} of {lat['probes']} | "
            f"{s(lat['p50'])} | {s(lat['p99'])} | {s(lat['max'])} | {cores} | {idle_cores} | {checked} | {_load(lat['load'])} |"
        )
    return "\n".join(lines)


def append_table(runs: list[dict]) -> str:
    lines = [
        "| query | how | rows | seconds | rows/s | ratio to hand-written | CPU s | load (1 min) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    hand = {r["query"]: r for r in runs if r.get("variant") == "pyspark" and "error" not in r}
    names = {"pyspark": "hand-written PySpark", "streamshell": "streamshell, default 'errors.mode'",
             "streamshell-ignore": "streamshell, 'errors.mode' = 'ignore'"}  # fmt: skip
    for r in runs:
        if "error" in r:
            lines.append(f"| {r['query']} | {names[r['variant']]} | | | failed: {r['error'][:100]} | | | |")
            continue
        rate = r["rows"] / r["wall_s"]
        base = hand.get(r["query"])
        ratio = f"{rate / (base['rows'] / base['wall_s']):.2f}x" if base else "-"
        lines.append(
            f"| {r['query']} | {names[r['variant']]} | {_n(r['rows'])} | {r['wall_s']:.1f} | {_n(rate)} | {ratio} | "
            f"{r['cpu_s']:.0f} | {r['load_start']:.1f}–{r['load']:.1f} |"
        )
    return "\n".join(lines)


def _versions() -> str:
    return (f"pyspark {version('pyspark')}, apache-flink 2.3.0 (.venv-flink) with flink-sql-connector-kafka 5.0.0-2.2, "
            f"Kafka 4.4.0 on the same machine, Python {platform.python_version()}")  # fmt: skip


def _command(argv: list[str]) -> str:
    return " ".join([".venv/bin/python -m benchmarks.engine", *[a for a in argv if a != "--write"], "--write"])


def _other_engines(results: dict) -> str:
    """What the rows of the engines beside streamshell and Flink are, when the run has any."""
    engines = {r["engine"] for r in results["changelog"]}
    text = ""
    if "pyspark" in engines:
        text += (" pyspark: the pipeline written by hand in PySpark (benchmarks/engine_pyspark.py), on the same Spark"
                 " as streamshell: each key's row kept by `transformWithStateInPandas` (a Python call per key a"
                 " micro-batch touches), Spark's own aggregation and Kafka sink, batches back to back.")
    if "spark-floor" in engines:
        text += (" spark-floor, beside the user count: Spark's own aggregation of every message per account, not the"
                 " user count (no retractions, no Python), the least a stateful micro-batch query costs here;"
                 " checked against that count.")
    return text


def changelog_body(results: dict, args, argv: list[str]) -> str:  # noqa: ANN001
    return f"""## Changelog path beside Flink SQL

Measured with `{_command(argv)}` on {dt.date.today().isoformat()}, {machine()}; {_versions()}.
The whole run took {results['minutes']:.0f} minutes; 1-minute load average {results['load_start']:.1f} when it started
and {results['load_end']:.1f} when it ended (other jobs share the machine's 2 cores; each row has its own load).

{args.keys:,} users in {args.accounts:,} accounts (join: plus a colour and a cheese per user; orders: plus
{args.keys:,} orders, each of a user), then {args.changes:,} changes (1 in 10 a tombstone; join: spread over the
three topics; orders: half of them on the orders, an order given another user and amount); 2-partition topics;
`upsert-kafka` tables with `'key.format' = 'raw'`, `'value.format' = 'json'`. Orders per account is `SELECT
u.accountId, COUNT(*) FROM orders o JOIN users u ON o.uid = u.uid GROUP BY u.accountId` (streamshell: a keyed
stage per `oid`, a join stage per `uid`, Spark's aggregation per account). streamshell: defaults (`local[*]`, the job detached in a process of its own, as `streamshell -f` runs it, {args.buckets or 16} key
buckets{'' if not args.buckets else ' (set)'} of {getattr(args, 'sub_buckets', None) or 64} sub-buckets{'' if not getattr(args, 'sub_buckets', None) else ' (set)'}, RocksDB state, 2 shuffle partitions). Flink: parallelism 2, defaults (heap state, no checkpoints, no
mini-batch).{_other_engines(results)}

{changelog_table(results['changelog'])}

Latency at {args.rate:,} changes/s for {args.seconds:.0f} s, a probe every 200 ms, measured from the probe's send
to a consumer seeing its effect on the sink topic (state already holding the keys); percentiles over every probe
sent, a probe that had not arrived 120 s after the end counting as later than all; "engine CPU" is the engine's
CPU time over the phase (the {args.seconds:.0f} s of load and the wait for the last probes) divided by its length; "idle
CPU" the same over {getattr(args, 'idle_seconds', 0) or 0:.0f} s with the job caught up and no input arriving:

{latency_table(results['changelog'])}

How: each engine runs in a process of its own on topics of its own with identical content. *Preload*: the
inserts are in Kafka before the job starts; seconds from the job's submission (the INSERT returned) to its last
sink write, so the job's start is included. *Changes*: with the job caught up, Spark's Kafka batch writer (a
separate process) writes the changes at ~100K/s; seconds from the first change's Kafka timestamp to the job's
last sink write. A job has read everything when its own counters say so (streamshell: `numInputRows` of its
micro-batches; Flink: the records its source vertices emitted, from the REST API) and have not moved for 3 s;
the last sink write is the Kafka timestamp of the sink's last record. "Producer-bound" marks an engine that
finished within a second of the producer, whose rate is then a lower bound. CPU is the user + system time of the
engine's whole process tree (JVM, Python workers) over the phase, per input change read: the figure that
depends least on the other jobs' load (2 cores fully ours would give at most 2,000,000 / µs-per-change changes/s). "Result checked" compares the sink's final content (latest message per
key) with the result recomputed from the input topics with Spark.
"""


def append_body(results: dict, args, argv: list[str]) -> str:  # noqa: ANN001
    return f"""## Append path beside hand-written PySpark

Measured with `{_command(argv)}` on {dt.date.today().isoformat()}, {machine()}; {_versions()}.

{args.orders:,} JSON orders (`id BIGINT, price DOUBLE, qty INT, ts TIMESTAMP(3)`, about 70 bytes) in a
2-partition Kafka topic, read from the earliest to the end offsets with the available-now trigger (one
micro-batch), into a `blackhole` table (streamshell) or the `noop` sink (PySpark). `filter`:
`SELECT id, price * qty AS total FROM orders WHERE qty > 2`; `window`: `SELECT window_start, window_end,
COUNT(*), SUM(price) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY
window_start, window_end` (watermark 1 s). Every row is a fresh process. Hand-written PySpark first runs the same
query over 20,000 orders of a warm-up topic in the same JVM, and its seconds are wall time from starting the query
to its end; streamshell's job runs detached in a process and a JVM of its own, as users run it, and its seconds are
the job's processing time (its micro-batches, the process's Spark start left out). CPU is the process trees' user +
system seconds over the same span.

{append_table(results['append'])}
"""


def render(results: dict, args, argv: list[str]) -> str:  # noqa: ANN001
    parts = []
    if results["changelog"]:
        parts.append(changelog_body(results, args, argv))
    if results["append"]:
        parts.append(append_body(results, args, argv))
    return "\n".join(parts)


def write(results: dict, args, argv: list[str]) -> None:  # noqa: ANN001
    if results["changelog"]:
        write_section("engine-changelog", changelog_body(results, args, argv))
    if results["append"]:
        write_section("engine-append", append_body(results, args, argv))
