"""Nexmark's queries read from Kafka: streamshell beside Flink SQL and hand-written PySpark, every result checked.

Why it exists: DESIGN.md's target for the append path is at least Flink SQL's throughput on Nexmark's queries read
from Kafka, and a throughput of a wrong result is no figure. One invocation:

1. writes `--events` Nexmark events (persons, auctions and bids, by the generator the differential's Nexmark cases
   use: benchmarks/nexmark_data.py) to a 2-partition topic, once (and `--warm-up-events` to a second topic);
2. runs every query of the differential's Nexmark cases (q0-q22 but q6, which Flink cannot run, and q13, a lookup
   join; benchmarks/nexmark_queries.py: Nexmark's own SQL, its `datagen` table over the topic, bounded at its end
   offsets, and `INSERT INTO` a Kafka sink: `kafka` for an append-only result, `upsert-kafka` keyed by the case's
   key otherwise) `--runs` times in each engine, each run into a sink topic of its own:
   * streamshell as users run it: each run a detached INSERT job (a process, a JVM and a Spark of its own) from a
     fresh catalog home, default settings (`local[*]`, RocksDB state); benchmarks/nexmark_engines.py;
   * Flink SQL: PyFlink 2.3 in .venv-flink, its Kafka connectors from jvm/flink, parallelism 2, Flink's defaults
     (heap state, no checkpoints, no mini-batch); one JVM for all runs, each query first run once over the
     warm-up topic into a blackhole; benchmarks/nexmark_flink.py;
   * hand-written PySpark for q0, q1, q2, q5 and q7 (benchmarks/nexmark_queries.py PYSPARK), one SparkSession
     with streamshell's Spark settings, warmed up as Flink is; it reads an end marker after the topic (an event
     far ahead in time) so that its last windows fire, as a bounded source's end makes them fire in the others;
3. checks every run's sink (benchmarks/nexmark_check.py): its final rows (an upsert result: the latest row per
   key) against the reference run's, Flink's first run where Flink ran the query; q12 (processing-time windows)
   against the input. A difference, a run that failed or a query only one engine ran fails the benchmark: exit 1,
   no table written (`--no-verify` skips the check, for exploration only);
4. writes results.json in its work directory (`--from-results` reports it again) and prints the report: per query
   and engine, the runs' median seconds, their spread, events/s, events/s per core (events per CPU second of all
   the engine's processes), the ratio of its events/s to each other engine's, CPU seconds and peak memory;
   `--baseline` an earlier run's results.json adds each row's events/s against that run's (a regression shows).

Seconds: Flink and PySpark, from submitting the INSERT (starting the query) to the job's end, in a warm JVM (the
one that ran the query's warm-up); pyspark-job, the same hand-written PySpark with each run in a process and JVM
of its own, as spark-submit runs a job (no warm-up; its Spark start left out); streamshell, the detached job's
processing time (its micro-batches' `triggerExecution`, summed), in the JVM of its own that each job has, its
process's Spark start left out. A JVM of its own compiles the job's code while it runs (the JIT's threads took
15-20 CPU seconds of a 1M-event q0 run in either PySpark or streamshell, 2026-12-06), which a warm JVM has done
before: pyspark-job is the like-for-like peer of a streamshell job, pyspark the best case of hand-written PySpark.
CPU: Flink and PySpark, the user + system seconds of the engine's process tree (its session: JVM, Python workers)
over the same span, from /proc; streamshell, the job's process tree from its first micro-batch. Peak memory: the most resident memory of those processes together, sampled every 0.1-0.25 s.

    .venv/bin/python -m benchmarks.nexmark [--quick] [--events N] [--runs 3] [--queries q0,q1,...]
        [--engines flink,streamshell,pyspark,pyspark-job] [--warm-up-events N] [--gap MS] [--spark-conf KEY=VALUE ...]
        [--no-verify] [--keep-topics] [--write] [--from-results results.json] [--baseline results.json]

`--quick`: 20,000 events, 1 run, no warm-up, the same checks. `--spark-conf` gives streamshell and PySpark
a Spark setting (Flink's side is unchanged). Needs Kafka (`scripts/services start kafka`), `scripts/flink-venv`
and `scripts/jvm-deps flink`. `--write` puts the table between the nexmark markers of docs/benchmarks.md.
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
from benchmarks import nexmark_queries as nq
from benchmarks.engine_procs import REPO, run_json, session_cpu, session_memory
from benchmarks.report import machine, write_section

FLINK_PYTHON = REPO / ".venv-flink" / "bin" / "python"
ENGINES = ("flink", "streamshell", "pyspark", "pyspark-job")
HAND_WRITTEN = ("pyspark", "pyspark-job")  # the same PySpark: in one warm JVM, or each run a process of its own


# ---- the engines' phases -----------------------------------------------------------------------------------------


def phases(engine: str, queries: list[str], runs: int, topics: dict[str, str], sinks: dict) -> list[dict]:
    """The engine's phases in order: per query, a warm-up over the warm-up topic (Flink, PySpark), then its runs."""
    out = []
    for query in queries:
        if engine in HAND_WRITTEN and query not in nq.PYSPARK:
            continue
        if topics.get("warm-up") and engine in ("flink", "pyspark"):  # a streamshell job, a pyspark-job: a JVM each
            out.append(phase(engine, query, "warm-up", topics["warm-up"], None, topics))
        for run in range(1, runs + 1):
            out.append(phase(engine, query, f"run-{run}", topics["events"], sinks[engine, query, run], topics))
    return out


def phase(engine: str, query: str, name: str, events: str, sink: str | None, topics: dict[str, str]) -> dict:
    if engine in HAND_WRITTEN:
        return {"name": f"{query} {name}", "query": query, "sink": sink, "topics": [events, topics["end"]]}
    return {"name": f"{query} {name}", "query": query, "sink": sink,
            "statements": nq.statements(query, events, sink, data.KAFKA)}  # fmt: skip


def engine_command(engine: str, phase_file: Path, spark_conf: list[str]) -> list[str]:
    if engine in ("streamshell", *HAND_WRITTEN):
        runner = "pyspark" if engine in HAND_WRITTEN else engine
        return [sys.executable, "-m", "benchmarks.nexmark_engines", runner, "--phases", str(phase_file),
                *(a for kv in spark_conf for a in ("--spark-conf", kv))]  # fmt: skip
    from shell.paths import jvm_bundle_jars

    jars = jvm_bundle_jars("flink")
    if not FLINK_PYTHON.exists() or not jars:
        raise RuntimeError("Flink is not set up: run scripts/flink-venv and scripts/jvm-deps flink")
    return [str(FLINK_PYTHON), str(REPO / "benchmarks" / "nexmark_flink.py"), "--phases", str(phase_file),
            "--parallelism", "2", *(a for j in jars for a in ("--jar", str(j)))]  # fmt: skip


class PeakMemory:
    """The most resident memory a session's processes held together, sampled on a thread until `stop`."""

    def __init__(self, sid: int, every: float = 0.25):
        self.sid, self.peak = sid, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while True:
            self.peak = max(self.peak, sum(rss for _, rss in session_memory(self.sid).values()))
            if self._stop.wait(every):
                return

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def run_engine(engine: str, phase_list: list[dict], work: Path, spark_conf: list[str], timeout_s: float) -> list[dict]:
    """The engine's phases in a process of its own (pyspark-job: each phase in one of its own, as spark-submit runs a
    job); a result per measured run (warm-ups are not kept)."""
    if engine == "pyspark-job" and len(phase_list) > 1:
        return [r for n, p in enumerate(phase_list, start=1)
                for r in run_engine(engine, [{**p, "file": n}], work, spark_conf, timeout_s)]  # fmt: skip
    label = f"{engine}-{phase_list[0]['file']}" if phase_list and "file" in phase_list[0] else engine
    phase_file = work / f"{label}-phases.json"
    phase_file.write_text(json.dumps(phase_list))
    by_name = {p["name"]: p for p in phase_list}
    log = work / f"{label}.log"
    results: list[dict] = []
    with log.open("w") as err:
        env = {**os.environ, "PYTHONPATH": ""} if engine == "flink" else None
        proc = subprocess.Popen(engine_command(engine, phase_file, spark_conf), cwd=REPO, stdout=subprocess.PIPE,
                                stderr=err, stdin=subprocess.DEVNULL, text=True, start_new_session=True, env=env)  # fmt: skip
        killer = threading.Timer(timeout_s, proc.kill)
        killer.start()
        current: dict = {}
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                if not line.startswith("{"):
                    continue
                event = json.loads(line)
                if event.get("event") == "start":
                    current = {"cpu": session_cpu(proc.pid), "memory": PeakMemory(proc.pid), "load": [os.getloadavg()[0]]}
                elif event.get("event") == "end" and current:
                    cpu, peak = session_cpu(proc.pid) - current["cpu"], current["memory"].stop()
                    p = by_name[event["phase"]]
                    query, run = p["query"], p["name"].split()[1]
                    print(json.dumps({"engine": engine, **{k: v for k, v in event.items() if k != "t"}}), file=sys.stderr, flush=True)
                    if run == "warm-up":
                        continue
                    result = {"id": f"{engine} {p['name']}", "engine": engine, "query": query, "run": int(run[4:]),
                              "sink": p["sink"], "load": [*current["load"], os.getloadavg()[0]]}  # fmt: skip
                    if "error" in event:
                        result["error"] = event["error"]
                    elif engine == "streamshell":  # the detached job's own figures (its process tree, not ours)
                        result.update({k: event[k] for k in ("wall_s", "cpu_s", "peak_rss", "rows", "batches", "job_wall_s")})
                    else:
                        result.update(wall_s=event["wall_s"], cpu_s=cpu, peak_rss=peak, rows=event.get("rows"))
                    results.append(result)
                    current = {}
        finally:
            code = proc.wait()
            killer.cancel()
    done = {r["id"] for r in results}
    for p in phase_list:  # a run the process never finished (it died, or ran out of time) is a failed run
        if p["sink"] and f"{engine} {p['name']}" not in done:
            results.append({"id": f"{engine} {p['name']}", "engine": engine, "query": p["query"],
                            "run": int(p["name"].split()[1][4:]), "sink": p["sink"],
                            "error": f"not run: {engine} exited {code}; see {log}"})  # fmt: skip
    return results


# ---- the run and its report --------------------------------------------------------------------------------------


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()

    return git("rev-parse", "--short=10", "HEAD") + (" (with changes)" if git("status", "--porcelain", "--", "benchmarks", "shell") else "")


def versions() -> str:
    import pyspark

    return f"pyspark {pyspark.__version__}, apache-flink 2.3.0 (.venv-flink), Python {sys.version.split()[0]}"


def summarize(results: dict) -> list[dict]:
    """One row per query and engine: the runs' figures together."""
    events = results["events"]
    rows = []
    for query in results["queries"]:
        for engine in results["engines"]:
            runs = [r for r in results["runs"] if r["query"] == query and r["engine"] == engine]
            if not runs:
                continue
            good = [r for r in runs if "wall_s" in r and r["wall_s"] > 0]
            walls = [r["wall_s"] for r in good]
            row = {"query": query, "engine": engine, "runs": len(runs), "measured": len(good),
                   "checked": checked_text(runs, results.get("verified", False))}  # fmt: skip
            if walls:
                wall, cpu = statistics.median(walls), statistics.median(r["cpu_s"] for r in good)
                row.update(wall_s=wall, spread=(max(walls) - min(walls)) / wall if wall else 0.0,
                           events_per_s=events / wall, per_core=events / cpu if cpu > 0 else None, cpu_s=cpu,
                           peak_mib=max(r.get("peak_rss") or 0 for r in good) / 2**20,
                           sink_rows=(good[0].get("verdict") or {}).get("rows"))  # fmt: skip
            rows.append(row)
    return rows


def checked_text(runs: list[dict], verified: bool) -> str:
    if not verified:
        return "no (--no-verify)"
    verdicts = [r.get("verdict") for r in runs]
    if all(v and v["ok"] for v in verdicts):
        return f"yes, = {verdicts[0]['against']}"
    return "DIFFERS"


def report(results: dict) -> str:
    rows = summarize(results)
    engines = results["engines"]
    load = [*results["load"], results["load"][-1]][:2]
    during = results.get("run_loads") or load
    baseline = results.get("baseline")  # {"file": ..., "events_per_s": {"q0 flink": ...}}
    lines = [
        "## Nexmark beside Flink SQL and hand-written PySpark",
        "",
        f"Measured with `{results['command']}` on {results['date']} at commit {results['commit']}, {machine()}; "
        f"{versions()}; Kafka on the same machine; load average (1 min) {load[0]:.1f} at the start, "
        f"{load[1]:.1f} at the end ({min(during):.1f}-{max(during):.1f} during the runs).",
        "",
        f"{results['events']:,} Nexmark events ({results['gap']} ms apart on average) in a 2-partition Kafka topic, "
        f"each query {results['runs_per_query']} time(s) per engine, every run's sink checked against the other "
        "engines' (benchmarks/nexmark.py). Seconds: the runs' median (streamshell: the detached job's processing "
        "time, in a JVM of its own; Flink, PySpark: the INSERT to the job's end, in the JVM that ran the queries "
        "before it and the query's warm-up, if any; pyspark-job: the same PySpark, each run in a process and JVM "
        "of its own, as spark-submit runs a job, from the query's start); spread: (slowest - fastest) / median; "
        "events/s per core: events per CPU second of all the engine's processes; ratio: events/s against the "
        "other engine's; peak: the engine's processes' resident memory together."
        + (f" vs baseline: events/s against the same query and engine in {baseline['file']}." if baseline else ""),
        "",
        "| query | engine | checked | seconds | spread | events/s | events/s per core | "
        + " | ".join(f"ratio to {e}" for e in engines) + " | CPU s | peak MiB |" + (" vs baseline |" if baseline else ""),
        "| --- | --- | --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in engines) + " | ---: | ---: |"
        + (" ---: |" if baseline else ""),
    ]
    for row in rows:
        desc = f"{row['query']} ({nq.SINKS[row['query']][0]})"
        if "wall_s" not in row:
            lines.append(f"| {desc} | {row['engine']} | {row['checked']} | failed | | | | "
                         + " | ".join("" for _ in engines) + " | | |" + (" |" if baseline else ""))  # fmt: skip
            continue
        ratios = []
        for peer in engines:
            other = next((o for o in rows if o["query"] == row["query"] and o["engine"] == peer and "wall_s" in o), None)
            ratios.append(f"{row['events_per_s'] / other['events_per_s']:.2f}x" if other else "-")
        per_core = f"{row['per_core']:,.0f}" if row["per_core"] else "-"
        lines.append(f"| {desc} | {row['engine']} | {row['checked']} | {row['wall_s']:.1f} | {row['spread'] * 100:.0f}% | "
                     f"{row['events_per_s']:,.0f} | {per_core} | " + " | ".join(ratios)
                     + f" | {row['cpu_s']:.1f} | {row['peak_mib']:,.0f} |")  # fmt: skip
        if baseline:
            before = baseline["events_per_s"].get(f"{row['query']} {row['engine']}")
            lines[-1] += f" {row['events_per_s'] / before:.2f}x |" if before else " - |"
    return "\n".join(lines)


def failures(results: dict) -> list[str]:
    out = []
    for r in results["runs"]:
        if "error" in r:
            out.append(f"{r['id']}: failed: {r['error']}")
        elif results["verified"] and not (r.get("verdict") or {}).get("ok"):
            out.append(f"{r['id']}: " + "\n    ".join((r.get("verdict") or {}).get("differences") or ["not checked"]))
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 events, 1 run, the same checks")
    parser.add_argument("--events", type=int, help="events in the topic (default 1,000,000; quick 20,000)")
    parser.add_argument("--runs", type=int, help="runs per query and engine (default 3; quick 1)")
    parser.add_argument("--warm-up-events", type=int, help="Flink's and PySpark's warm-up (default 20,000; quick 0: none)")
    parser.add_argument("--gap", type=int, default=10, help="mean ms between the events' times (default 10)")
    parser.add_argument("--queries", default=",".join(nq.QUERIES))
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for streamshell and PySpark (repeatable; e.g. another state store)")
    parser.add_argument("--timeout", type=float, default=8 * 3600, help="seconds an engine may take for all its runs (default 8 h)")
    parser.add_argument("--no-verify", dest="verify", action="store_false", help="do not check the sinks (exploration only)")
    parser.add_argument("--keep-topics", action="store_true")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--from-results", type=Path, help="report a finished run's results.json, measure nothing")
    parser.add_argument("--baseline", type=Path,
                        help="an earlier run's results.json: each row's events/s against it (a regression shows)")
    args = parser.parse_args(argv)
    if args.from_results:
        return finish(with_baseline(json.loads(args.from_results.read_text()), args.baseline), args.write)
    events = args.events or (20_000 if args.quick else 1_000_000)
    runs = args.runs or (1 if args.quick else 3)
    warm_up = args.warm_up_events if args.warm_up_events is not None else (0 if args.quick else 20_000)
    queries = args.queries.split(",")
    engines = [e for e in ENGINES if e in args.engines.split(",")]
    unknown = [q for q in queries if q not in nq.SINKS] + [e for e in args.engines.split(",") if e not in ENGINES]
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)} (queries: {', '.join(nq.QUERIES)}; engines: {', '.join(ENGINES)})")

    work = Path(tempfile.mkdtemp(prefix="bench-nexmark-"))
    print(f"logs and results in {work}", flush=True)
    suffix = uuid.uuid4().hex[:6]
    topics = {"events": f"bench-nexmark-{suffix}-events", "end": f"bench-nexmark-{suffix}-end"}
    if warm_up:
        topics["warm-up"] = f"bench-nexmark-{suffix}-warm-up"
    sinks = {(e, q, r): f"bench-nexmark-{suffix}-{e}-{q}-{r}" for e in engines for q in queries for r in range(1, runs + 1)
             if e not in HAND_WRITTEN or q in nq.PYSPARK}  # fmt: skip
    created = [*topics.values(), *sinks.values()]
    data.create_topics(created)
    results: dict = {"command": "python -m benchmarks.nexmark " + " ".join(argv), "date": time.strftime("%Y-%m-%d"),
                     "commit": commit(), "events": events, "gap": args.gap, "runs_per_query": runs, "queries": queries,
                     "engines": engines, "verified": args.verify, "load": [os.getloadavg()[0]], "runs": []}  # fmt: skip
    started = time.time()
    try:
        log = work / "events.log"
        results["input"] = run_json([sys.executable, "-m", "benchmarks.nexmark_data", "--topic", topics["events"],
                                     "--events", str(events), "--gap", str(args.gap), "--file", str(work / "events.json")],
                                    log)  # fmt: skip
        if warm_up:
            run_json([sys.executable, "-m", "benchmarks.nexmark_data", "--topic", topics["warm-up"], "--events",
                      str(warm_up), "--gap", str(args.gap), "--file", str(work / "warm-up.json")], log)  # fmt: skip
        from benchmarks.nexmark_data import end_marker

        end_marker(topics["end"], data.KAFKA)
        for engine in engines:
            phase_list = phases(engine, queries, runs, topics, sinks)
            results["runs"] += run_engine(engine, phase_list, work, args.spark_conf, args.timeout)
        results["load"].append(os.getloadavg()[0])
        results["run_loads"] = [x for r in results["runs"] for x in r.get("load", [])] or results["load"]
        if args.verify:
            from benchmarks.nexmark_check import check, read_topic

            checked = time.time()
            verdicts = check([r for r in results["runs"] if "error" not in r],
                             lambda topic: read_topic(topic, data.KAFKA), work / "events.json")  # fmt: skip
            for r in results["runs"]:
                if r["id"] in verdicts:
                    r["verdict"] = verdicts[r["id"]].as_dict()
            results["check_s"] = time.time() - checked
    finally:
        if not args.keep_topics:
            data.delete_topics(created)
        (work / "events.json").unlink(missing_ok=True)
        (work / "warm-up.json").unlink(missing_ok=True)
        results["minutes"] = (time.time() - started) / 60
        (work / "results.json").write_text(json.dumps(results, indent=1))
        print(f"results in {work / 'results.json'}", flush=True)
    return finish(with_baseline(results, args.baseline), args.write)


def with_baseline(results: dict, path: Path | None) -> dict:
    """`results` with the events/s of an earlier run's results.json per query and engine, to compare with."""
    if path is not None:
        earlier = summarize(json.loads(path.read_text()))
        results["baseline"] = {"file": str(path), "events_per_s": {
            f"{r['query']} {r['engine']}": r["events_per_s"] for r in earlier if "events_per_s" in r}}  # fmt: skip
    return results


def finish(results: dict, write: bool) -> int:
    """Print the report; exit status 1, and nothing written, when a run failed or its sink differs."""
    text = report(results)
    print(text)
    failed = failures(results)
    if failed:  # a figure from a run whose results are wrong is not a result: nothing is written
        print("\nruns that failed or whose results differ (no table written):\n" + "\n".join(failed), file=sys.stderr)
        return 1
    if write:
        write_section("nexmark", text)
        print("\nwrote docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
