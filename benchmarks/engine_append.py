"""Append path of the engine benchmark: a filter/project query and a tumbling window, through streamshell and the
same queries hand-written in PySpark, over the same Kafka topic of JSON orders.

Why it exists: DESIGN.md's target for the native path is at least 0.95x the throughput of the same query written
by hand in PySpark. Each measurement runs in a fresh process (`run`, started by `measure` with a session of its
own so that the CPU time of its JVM and Python workers can be summed). Hand-written PySpark first runs the same
query over a small warm-up topic, then over the measured one, in one JVM; streamshell's job runs detached in a
process and a JVM of its own, as users run it, so a warm-up job would warm nothing, and only the measured one runs:

* streamshell: a `kafka` table (`'format' = 'json'`, `'scan.bounded.mode' = 'latest-offset'`, so the job reads
  to the end offsets with the available-now trigger and ends) and `INSERT INTO` a `blackhole` table, through
  the library API with a fresh catalog home, default settings; once with the default `'errors.mode'`
  (dead-letter: a second query keeps undecodable records) and once with `'errors.mode' = 'ignore'`;
* hand-written: `readStream.format("kafka")` from earliest, `from_json`, the same filter/projection or
  `withWatermark` + `groupBy(window(...))`, `writeStream.format("noop")`, available-now trigger, in a
  SparkSession with streamshell's Spark settings (`shell.engine.spark.SparkRuntime`: 2 shuffle partitions,
  RocksDB state store, AQE off).

Time: hand-written, wall time from starting the query to its end; streamshell, the job's processing time (its
micro-batches' `triggerExecution`, from the batch log of the job process that runs it detached, as users run it:
the Spark start of that process is left out, and its JVM is cold). CPU: the process trees of both, the job's
included.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import scratch
from benchmarks.detached_job import run_to_end
from benchmarks.engine_data import KAFKA
from benchmarks.engine_procs import REPO, session_cpu

QUERIES = {
    "filter": ("SELECT id, price * qty AS total FROM {t} WHERE qty > 2", "id BIGINT, total DOUBLE"),
    "window": (
        "SELECT window_start, window_end, COUNT(*) AS orders, SUM(price) AS revenue "
        "FROM TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end",
        "window_start TIMESTAMP(3), window_end TIMESTAMP(3), orders BIGINT, revenue DOUBLE",
    ),
}
VARIANTS = ("pyspark", "streamshell", "streamshell-ignore")  # the order of the runs per query


def streamshell_run(query: str, topics: list[str], ignore: bool) -> list[dict]:
    from shell.session import Session, SessionOptions
    from shell.sql.parse import parse_script

    sql, sink_columns = QUERIES[query]
    watermark = ", WATERMARK FOR ts AS ts - INTERVAL '1' SECOND" if query == "window" else ""
    extra = ", 'errors.mode' = 'ignore'" if ignore else ""
    home = Path(tempfile.mkdtemp(prefix="bench-append-"))
    session = Session(SessionOptions(home=home))
    out = []
    try:
        for n, topic in list(enumerate(topics))[-1:]:  # each job is a JVM of its own: a warm-up would warm nothing
            script = (
                f"CREATE TABLE o{n} (id BIGINT, price DOUBLE, qty INT, ts TIMESTAMP(3){watermark}) WITH ("
                f"'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{KAFKA}', "
                f"'format' = 'json', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'{extra});"
                f"CREATE TABLE h{n} ({sink_columns}) WITH ('connector' = 'blackhole');"
            )  # fmt: skip
            for statement in parse_script(script):
                session.execute(statement)
            insert = parse_script(f"INSERT INTO h{n} {sql.format(t=f'o{n}')};")[0]
            cpu = session_cpu(os.getsid(0))
            job = run_to_end(session, insert)  # detached, in a process and a Spark of its own, as users run it
            out.append(summary(job.reports, job.processing_s, session_cpu(os.getsid(0)) - cpu + job.cpu_s))
    finally:
        session.close()
        scratch.remove(home)
    return out


def pyspark_run(query: str, topics: list[str]) -> list[dict]:
    from pyspark.sql import functions as F

    from shell.engine.spark import SparkRuntime

    work = Path(tempfile.mkdtemp(prefix="bench-append-pyspark-"))
    runtime = SparkRuntime("local[*]", {}, work / "spark.log", app_name="bench-append-pyspark")
    spark = runtime.get()
    out = []
    try:
        for n, topic in enumerate(topics):
            orders = typed_json_stream(spark, topic, "id BIGINT, price DOUBLE, qty INT, ts TIMESTAMP")
            if query == "filter":
                result = orders.where("qty > 2").selectExpr("id", "price * qty AS total")
            else:
                result = (
                    orders.withWatermark("ts", "1 second").groupBy(F.window("ts", "1 second"))
                    .agg(F.count("*").alias("orders"), F.sum("price").alias("revenue"))
                    .selectExpr("window.start AS window_start", "window.end AS window_end", "orders", "revenue")
                )  # fmt: skip
            cpu, started = session_cpu(os.getsid(0)), time.perf_counter()
            running = drain_to_noop(result, work / f"checkpoint-{n}")
            wall = time.perf_counter() - started
            out.append(summary(running.recentProgress, wall, session_cpu(os.getsid(0)) - cpu))
    finally:
        runtime.stop()
        scratch.remove(work)
    return out


def typed_json_stream(spark, topic: str, schema: str):  # noqa: ANN001, ANN201 - a SparkSession; a DataFrame
    """A Kafka topic of JSON read from its earliest offsets as the hand-written queries read it: one typed
    `from_json` (timestamps as 'yyyy-MM-dd HH:mm:ss.SSS'), bad fields NULL."""
    from pyspark.sql import functions as F

    raw = (
        spark.readStream.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("subscribe", topic)
        .option("startingOffsets", "earliest").load()
    )  # fmt: skip
    parsed = F.from_json(F.col("value").cast("string"), schema, {"timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS"})
    return raw.select(parsed.alias("row")).select("row.*")


def drain_to_noop(result, checkpoint: Path):  # noqa: ANN001, ANN201 - a streaming DataFrame; its StreamingQuery
    """Run `result` into the `noop` sink with the available-now trigger until it has read everything."""
    running = (
        result.writeStream.format("noop").outputMode("append").trigger(availableNow=True)
        .option("checkpointLocation", str(checkpoint)).start()
    )  # fmt: skip
    running.awaitTermination()
    return running


def summary(progress: list[dict], wall: float, cpu: float) -> dict:
    return {
        "rows": sum(p["numInputRows"] for p in progress),
        "wall_s": wall,
        "in_batches_s": sum(p["durationMs"].get("triggerExecution", 0) for p in progress) / 1000,
        "cpu_s": cpu,
        "load": os.getloadavg()[0],
    }


def measure(query: str, variant: str, topics: list[str], log: Path) -> dict:
    """One run in a fresh process with a session of its own: the warm-up topic, then the measured one."""
    import subprocess

    command = [sys.executable, "-m", "benchmarks.engine_append", "--query", query, "--variant", variant,
               "--topics", ",".join(topics)]  # fmt: skip
    load = os.getloadavg()[0]
    with log.open("a") as err:
        done = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, stderr=err, text=True, timeout=3600,
                              start_new_session=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{query} {variant} failed (exit {done.returncode}); see {log}")
    measured = json.loads(done.stdout.strip().splitlines()[-1])[-1]
    return {**measured, "load_start": load, "query": query, "variant": variant}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query", choices=tuple(QUERIES), required=True)
    parser.add_argument("--variant", choices=VARIANTS, required=True)
    parser.add_argument("--topics", required=True, help="warm-up topic, then the measured one")
    args = parser.parse_args(argv)
    topics = args.topics.split(",")
    if args.variant == "pyspark":
        result = pyspark_run(args.query, topics)
    else:
        result = streamshell_run(args.query, topics, ignore=args.variant == "streamshell-ignore")
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
