"""Engine benchmark: streamshell's changelog path beside Flink SQL, and its append path beside hand-written PySpark.

Why it exists: DESIGN.md's targets for the engine (changelog path: >= 50K changes/s at 1M keys on 2 cores, >= Flink
SQL on the same input, p50 <= 2 s at 1K changes/s; append path: >= 0.95x the same query in PySpark) are to be
measured with a command, in one run on this machine. One invocation measures, back to back:

1. Three pipelines over `upsert-kafka` tables (2-partition topics): the two of /work/shared/scenarios, the user
   count (`SELECT accountId, COUNT(1) ... GROUP BY accountId`) and the three-way LEFT JOIN, and a two-stage one,
   the orders per account (`SELECT u.accountId, COUNT(*) FROM orders o JOIN users u ON o.uid = u.uid GROUP BY
   u.accountId`: in streamshell a keyed stage turning the orders' upserts into a changelog keyed by `oid`, a join
   stage keyed by `uid`, then Spark's aggregation per account). Each runs in streamshell (a fresh process,
   library API, default settings: `local[*]`, 1 s trigger, 16 key buckets of 64 sub-buckets, RocksDB) and in
   Flink SQL (PyFlink 2.3 in .venv-flink, `upsert-kafka` connector from jvm/flink, parallelism 2, Flink's
   defaults: heap state, no checkpoints, no mini-batch), with the same SQL text. Per engine, on topics of its own
   with identical content (benchmarks/engine_data.py):
   * preload: `--keys` users (join: and a colour and a cheese each; orders: and `--keys` orders) are in Kafka
     before the job starts; time from the job's submission until its last sink write once it has read them all;
   * changes: with the job caught up, `--changes` changes are written by Spark's Kafka batch writer (~100K/s);
     time from the first change's Kafka timestamp to the job's last sink write once it has read them all;
   * latency: `--rate` changes/s for `--seconds` with a probe every 200 ms (benchmarks/engine_latency.py);
   * check: the sink's final content against the result recomputed from the input topics (`--no-verify` skips).
   "Read them all": the job's own counters, streamshell's `numInputRows` per micro-batch, Flink's source vertices'
   emitted records (REST API), then no counter moving for 3 s. The CPU time of the engine's process tree is
   summed from /proc per phase (load-independent).
2. benchmarks/engine_append.py: a filter/project query and a tumbling window over `--orders` JSON orders.

    .venv/bin/python -m benchmarks.engine [--quick] [--keys N] [--changes N] [--rate R] [--seconds S]
        [--orders N] [--only count|join|orders|append] [--engines streamshell,flink] [--buckets B] [--sub-buckets S] [--no-verify]
        [--keep-topics] [--write] [--pyspark-trigger-ms MS]

`--engines` also takes `pyspark`, the user count and the join written by hand in PySpark (benchmarks/engine_pyspark.py:
each key's row kept by `transformWithStateInPandas`, Spark's aggregation, Spark's Kafka sink), and `spark-floor`,
beside the user count only: Spark's own aggregation of every message per account (not the user count: no
retractions, no Python), what a stateful micro-batch query costs on this machine at the least. Each is checked
against its own result recomputed from the topics.

Needs Kafka (`scripts/services start kafka`), `scripts/flink-venv` and `scripts/jvm-deps flink`. `--write` puts
the figures between the engine markers of docs/benchmarks.md (benchmarks/engine_report.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks import engine_append, engine_latency, scratch
from benchmarks import engine_data as data
from benchmarks.engine_procs import REPO, Engine, finish_json, run_json, start_json
from benchmarks.engine_pyspark import FLOOR as PYSPARK_FLOOR
from benchmarks.engine_pyspark import PIPELINES as PYSPARK_PIPELINES
from shell.paths import jvm_bundle_jars

FLINK_PYTHON = REPO / ".venv-flink" / "bin" / "python"
QUIET_S = 3.0
INPUTS = {  # the input tables of each pipeline (users first), in the order the pipelines run
    "count": ["users"],
    "join": ["users", "user_favorite_color", "user_favorite_cheese"],
    "orders": ["users", "orders"],
}


def upsert_kafka(topic: str) -> str:
    return (f"'connector' = 'upsert-kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{data.KAFKA}', "
            "'key.format' = 'raw', 'value.format' = 'json'")  # fmt: skip


def pipeline_sql(pipeline: str, topics: list[str], sink: str) -> str:
    users = f"CREATE TABLE users (uid STRING, accountId STRING, fullName STRING, PRIMARY KEY (uid) NOT ENFORCED) WITH ({upsert_kafka(topics[0])});\n"
    if pipeline == "count":
        return users + (
            f"CREATE TABLE user_count_by_account (accountId STRING, userCount BIGINT, PRIMARY KEY (accountId) NOT ENFORCED) WITH ({upsert_kafka(sink)});\n"
            "INSERT INTO user_count_by_account (accountId, userCount)\nSELECT accountId, COUNT(1) AS userCount FROM users GROUP BY accountId;\n"
        )  # fmt: skip
    if pipeline == "orders":
        return users + (
            f"CREATE TABLE orders (oid STRING, uid STRING, amount INT, PRIMARY KEY (oid) NOT ENFORCED) WITH ({upsert_kafka(topics[1])});\n"
            f"CREATE TABLE orders_by_account (accountId STRING, orderCount BIGINT, PRIMARY KEY (accountId) NOT ENFORCED) WITH ({upsert_kafka(sink)});\n"
            "INSERT INTO orders_by_account\nSELECT u.accountId, COUNT(*) AS orderCount FROM orders o JOIN users u ON o.uid = u.uid GROUP BY u.accountId;\n"
        )  # fmt: skip
    return users + (
        f"CREATE TABLE user_favorite_color (userUid STRING, favoriteColor STRING, PRIMARY KEY (userUid) NOT ENFORCED) WITH ({upsert_kafka(topics[1])});\n"
        f"CREATE TABLE user_favorite_cheese (userUid STRING, favoriteCheese STRING, PRIMARY KEY (userUid) NOT ENFORCED) WITH ({upsert_kafka(topics[2])});\n"
        "CREATE TABLE user_favorite_color_and_cheese (accountId STRING, userUid STRING, favoriteColor STRING, favoriteCheese STRING, "
        f"PRIMARY KEY (userUid) NOT ENFORCED) WITH ({upsert_kafka(sink)});\n"
        "INSERT INTO user_favorite_color_and_cheese (accountId, userUid, favoriteColor, favoriteCheese)\n"
        "SELECT u.accountId, u.uid, ufcol.favoriteColor, ufchz.favoriteCheese FROM users u\n"
        "LEFT JOIN user_favorite_color ufcol ON u.uid = ufcol.userUid\nLEFT JOIN user_favorite_cheese ufchz ON u.uid = ufchz.userUid;\n"
    )  # fmt: skip


def start_engine(name: str, sql: Path, work: Path, pipeline: str = "", topics: list[str] | None = None,
                 trigger_ms: int = 0) -> Engine:
    """The engine's process for the script `sql` (hand-written PySpark: for `pipeline` over `topics`, the sink
    last, micro-batches every `trigger_ms`); its files beside the script, named after it."""
    if name in ("pyspark", "spark-floor"):
        if name == "spark-floor" and pipeline != "count":
            raise RuntimeError("the Spark floor job runs beside the user count only")
        if pipeline not in PYSPARK_PIPELINES:
            raise RuntimeError(f"no hand-written PySpark job for the {pipeline} pipeline")
        state = work / f"{sql.stem}-pyspark"
        job = PYSPARK_FLOOR if name == "spark-floor" else pipeline
        command = [sys.executable, "-m", "benchmarks.engine_pyspark", "--pipeline", job,
                   "--topics", ",".join(topics[:-1]), "--sink", topics[-1], "--work", str(state),
                   "--trigger-ms", str(trigger_ms)]  # fmt: skip
        return Engine(name, command, work / f"{sql.stem}.log", state=state)
    if name == "streamshell":
        home = work / f"{sql.stem}-home"
        command = [sys.executable, "-m", "benchmarks.engine_streamshell", "--sql", str(sql), "--home", str(home)]
    else:
        jars = jvm_bundle_jars("flink")
        if not FLINK_PYTHON.exists() or not jars:
            raise RuntimeError("Flink is not set up: run scripts/flink-venv and scripts/jvm-deps flink")
        command = [str(FLINK_PYTHON), str(REPO / "benchmarks" / "engine_flink.py"), "--sql", str(sql),
                   "--parallelism", "2", "--rest-port", str(18100 + os.getpid() % 800)]  # fmt: skip
        command += [a for j in jars for a in ("--jar", str(j))]
        home = None  # Flink runs without checkpoints and holds its state on the heap
    return Engine(name, command, work / f"{sql.stem}.log", state=home)


class Phase:
    """Load average and the engine's CPU seconds around one phase."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.load = [os.getloadavg()[0]]
        self.cpu = engine.cpu()
        self.started = time.time()

    def end(self, **figures) -> dict:
        self.load.append(os.getloadavg()[0])
        return {**figures, "cpu_s": self.engine.cpu() - self.cpu, "wall_s": time.time() - self.started, "load": self.load}


def wait_caught_up(engine: Engine, sink: str, target: int, timeout: float) -> tuple[bool, float | None]:
    """(whether the job read `target` records in time, its last sink write)."""
    done = engine.wait_rows(target, timeout, quiet_s=QUIET_S)
    return done, data.last_write([sink])


def producer_command(pipeline: str, topics: list[str], keys: int, accounts: int) -> list[str]:
    """benchmarks.engine_data's command that writes a phase of `pipeline`'s input (add `--phase ...`)."""
    return [sys.executable, "-m", "benchmarks.engine_data", "produce", "--pipeline", pipeline,
            "--topics", ",".join(topics), "--keys", str(keys), "--accounts", str(accounts)]  # fmt: skip


def run_pipeline(engine_name: str, pipeline: str, args, work: Path) -> dict:
    suffix = uuid.uuid4().hex[:6]
    topics = [f"bench-engine-{suffix}-{t}" for t in INPUTS[pipeline]]
    sink = f"bench-engine-{suffix}-sink"
    data.create_topics([*topics, sink])
    log = work / f"{engine_name}-{pipeline}-data.log"
    producer = producer_command(pipeline, topics, args.keys, args.accounts)
    out: dict = {"engine": engine_name, "pipeline": pipeline, "keys": args.keys, "n_changes": args.changes}
    preload = run_json([*producer, "--phase", "preload"], log)["rows"]
    sql = work / f"{engine_name}-{pipeline}.sql"
    setting = ""
    if engine_name == "streamshell":
        setting += f"SET 'table.exec.changelog.buckets' = '{args.buckets}';\n" if args.buckets else ""
        setting += f"SET 'table.exec.changelog.sub-buckets' = '{args.sub_buckets}';\n" if args.sub_buckets else ""
        setting += "".join(f"SET '{k}' = '{v}';\n" for k, v in (kv.split("=", 1) for kv in args.settings or []))
    sql.write_text(setting + pipeline_sql(pipeline, topics, sink))
    engine = start_engine(engine_name, sql, work, pipeline, [*topics, sink], args.pyspark_trigger_ms)
    try:
        submitted = engine.event("submitted", timeout=600)["t"]
        phase = Phase(engine)
        done, last = wait_caught_up(engine, sink, preload, args.timeout)
        out["preload"] = phase.end(rows=preload, read=engine.rows, done=done,
                                   seconds=(last - submitted) if done and last else time.time() - submitted)  # fmt: skip
        if not done:
            return out
        before = data.end_offsets(topics)
        phase = Phase(engine)
        writer = start_json([*producer, "--phase", "changes", "--changes", str(args.changes)], log)
        written = finish_json(writer)
        first = data.first_after(before)
        done, last = wait_caught_up(engine, sink, preload + args.changes, args.timeout)
        out["changes"] = phase.end(rows=args.changes, read=engine.rows - preload, done=done,
                                   seconds=(last if done and last else time.time()) - first,
                                   producer_s=written["done"] - first)  # fmt: skip
        if not done:
            return out
        phase = Phase(engine)
        latency = engine_latency.measure(pipeline, topics, sink, args.keys, args.accounts, args.rate, args.seconds)
        out["latency"] = phase.end(**latency.figures())
        done, _ = wait_caught_up(engine, sink, preload + args.changes + latency.sent, args.timeout)
        if done and args.idle_seconds:
            phase, batches = Phase(engine), len(engine.events)  # no input arrives: what the running job costs
            time.sleep(args.idle_seconds)
            out["idle"] = phase.end(batches=sum(1 for e in engine.events[batches:] if e.get("event") == "batch"))
        if args.verify:
            engine.stop()
            checked = PYSPARK_FLOOR if engine_name == "spark-floor" else pipeline
            check = [sys.executable, "-m", "benchmarks.engine_data", "verify", "--pipeline", checked,
                     "--inputs", ",".join(topics), "--sink", sink]  # fmt: skip
            out["verify"] = run_json(check, log) if done else {"ok": False, "error": "did not catch up"}
        return out
    except (RuntimeError, TimeoutError) as exc:
        out["error"] = str(exc)
        return out
    finally:
        engine.stop()
        if not args.keep_state:
            scratch.remove(engine.state)
        out["batches"] = [[e["rows"], e["ms"]] for e in engine.events if e.get("event") == "batch" and e["rows"]]
        out["topics"] = [*topics, sink]
        if not args.keep_topics:
            data.delete_topics([*topics, sink])


def run_append(args, work: Path) -> list[dict]:
    suffix = uuid.uuid4().hex[:6]
    warm, topic = f"bench-engine-{suffix}-orders-warmup", f"bench-engine-{suffix}-orders"
    data.create_topics([warm, topic])
    log = work / "append.log"
    orders = [sys.executable, "-m", "benchmarks.engine_data", "orders"]
    run_json([*orders, "--topic", warm, "--rows", str(min(args.orders, 20_000))], log)
    run_json([*orders, "--topic", topic, "--rows", str(args.orders)], log)
    results = []
    try:
        for query in args.append_queries.split(","):
            for variant in args.append_variants.split(","):
                try:
                    results.append(engine_append.measure(query, variant, [warm, topic], log))
                except RuntimeError as exc:
                    results.append({"query": query, "variant": variant, "error": str(exc)})
                print(json.dumps(results[-1]), flush=True)
    finally:
        data.delete_topics([warm, topic])
    return results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check that everything runs")
    parser.add_argument("--keys", type=int, help="users (default 1,000,000; quick 10,000)")
    parser.add_argument("--changes", type=int, help="changes after the preload (default 1,000,000; quick 10,000)")
    parser.add_argument("--accounts", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=1000, help="changes/s of the latency phase")
    parser.add_argument("--seconds", type=float, help="length of the latency phase (default 60; quick 15)")
    parser.add_argument("--append-queries", default=",".join(engine_append.QUERIES),
                        help="the append path's queries to measure (default: filter,window)")
    parser.add_argument("--append-variants", default=",".join(engine_append.VARIANTS),
                        help="the append path's runs per query (default: pyspark,streamshell,streamshell-ignore)")
    parser.add_argument("--idle-seconds", type=float,
                        help="with the job caught up and no input, how long its CPU is measured (default 60; quick 10)")
    parser.add_argument("--orders", type=int, help="orders of the append queries (default 1,000,000; quick 100,000)")
    parser.add_argument("--buckets", type=int, help="streamshell: SET 'table.exec.changelog.buckets' (default: not set, 16)")
    parser.add_argument("--sub-buckets", type=int,
                        help="streamshell: SET 'table.exec.changelog.sub-buckets' (default: not set, 64)")
    parser.add_argument("--set", dest="settings", action="append", metavar="K=V",
                        help="streamshell: a SET before the pipeline (repeatable), to explore a setting")
    parser.add_argument("--timeout", type=float, default=900, help="seconds an engine may take per phase")
    parser.add_argument("--only", choices=(*INPUTS, "append"), action="append")
    parser.add_argument("--engines", default="streamshell,flink",
                        help="of streamshell, flink, pyspark (the pipeline hand-written: count and join) and "
                             "spark-floor (beside the user count: Spark's own aggregation of every message, no Python)")
    parser.add_argument("--pyspark-trigger-ms", type=int, default=0,
                        help="pyspark and spark-floor: the micro-batch interval (default 0: back to back)")
    parser.add_argument("--no-verify", dest="verify", action="store_false")
    parser.add_argument("--keep-topics", action="store_true", help="leave the pipelines' topics in Kafka")
    parser.add_argument("--keep-state", action="store_true",
                        help="leave streamshell's catalog homes (checkpoints, state) in the work directory")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--from-results", type=Path, help="report a finished run's results.json, measure nothing")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.append_variants.split(",")) - set(engine_append.VARIANTS))
    if unknown:
        parser.error(f"--append-variants: unknown {', '.join(unknown)} (known: {', '.join(engine_append.VARIANTS)})")
    if args.from_results:
        return report(json.loads(args.from_results.read_text()), args.write)
    quick = args.quick
    args.keys = args.keys or (10_000 if quick else 1_000_000)
    args.changes = args.changes or (10_000 if quick else 1_000_000)
    args.seconds = args.seconds or (15 if quick else 60)
    args.idle_seconds = (10 if quick else 60) if args.idle_seconds is None else args.idle_seconds
    args.orders = args.orders or (100_000 if quick else 1_000_000)
    work = Path(tempfile.mkdtemp(prefix="bench-engine-"))
    print(f"logs and scripts in {work}", flush=True)
    started = time.time()
    results: dict = {"changelog": [], "append": [], "load_start": os.getloadavg()[0]}
    for pipeline in INPUTS:
        if args.only and pipeline not in args.only:
            continue
        for engine in args.engines.split(","):
            results["changelog"].append(run_pipeline(engine, pipeline, args, work))
            print(json.dumps(results["changelog"][-1]), flush=True)
    if not args.only or "append" in args.only:
        results["append"] = run_append(args, work)
    results["load_end"], results["minutes"] = os.getloadavg()[0], (time.time() - started) / 60
    results["args"], results["argv"] = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}, argv
    (work / "results.json").write_text(json.dumps(results, indent=1))
    print(f"results in {work / 'results.json'}", flush=True)
    failed = unverified(results) if args.verify else []
    if failed:  # a figure from a run whose results are wrong is not a result: nothing is written
        print("results differ or were not checked: " + "; ".join(failed), file=sys.stderr)
        report(results, False)
        return 1
    return report(results, args.write)


def unverified(results: dict) -> list[str]:
    """Each changelog run whose sink was not found equal to the result recomputed from its inputs."""
    return [f"{r['engine']} {r['pipeline']}: {r.get('error') or (r.get('verify') or {}).get('error') or 'differs'}"
            for r in results["changelog"] if not (r.get("verify") or {}).get("ok")]  # fmt: skip


def report(results: dict, write: bool) -> int:
    from benchmarks import engine_report

    args, argv = argparse.Namespace(**results["args"]), results["argv"]
    print(engine_report.render(results, args, argv))
    if write:
        engine_report.write(results, args, argv)
        print(f"\nwrote {engine_report.DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
