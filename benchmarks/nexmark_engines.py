"""The streamshell and hand-written PySpark sides of the Nexmark benchmark: child processes that run phases.

Why it exists: benchmarks/nexmark.py runs each engine in a process of its own, which reads a JSON list of phases
(`{"name": ..., "query": ..., "statements": [...], "sink": topic or null, ...}`) and prints one JSON object per
line: `{"event": "start", "phase": ...}` before a phase's job, `{"event": "end", "phase": ..., "wall_s": ...}`
after it (or `"error"`), as benchmarks/nexmark_flink.py does for Flink.

* streamshell, as users run it: each phase a fresh catalog home and `Session` (library API, as `streamshell -f`),
  its statements executed, the INSERT started as a detached job (a process, a JVM and a Spark of its own) and
  followed from outside through its folder (benchmarks/detached_job.py). `wall_s` is the job's processing time
  (its micro-batches' `triggerExecution`, summed: its process's Spark start left out), `cpu_s` the user + system
  seconds of the job's processes (its session: job process, JVM, Python workers) from its first micro-batch on,
  `peak_rss` the most resident memory they held together (sampled every 0.1 s), `job_wall_s` the time from
  starting the INSERT to the job's end.
* hand-written PySpark (benchmarks/nexmark_queries.py PYSPARK): one SparkSession with streamshell's Spark settings
  for every phase; the events topic and the end-marker topic read with a typed `from_json`, the watermark on the
  event's `dateTime` (as the `datagen` table has it) over every event (an observed count keeps Spark from moving
  the `bid` filter below it), `bid` as a projection, the query in Spark SQL, the result as
  JSON into the sink topic (`noop` for the warm-up), the available-now trigger. The caller measures its CPU and
  memory.

    .venv/bin/python -m benchmarks.nexmark_engines streamshell|pyspark --phases FILE [--spark-conf K=V ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

from benchmarks import scratch
from benchmarks.engine_data import KAFKA
from benchmarks.engine_procs import say


def run_streamshell(phases: list[dict], spark_conf: dict[str, str]) -> None:
    from benchmarks.detached_job import run_to_end
    from shell.session import Session, SessionOptions
    from shell.sql.parse import parse_script

    for phase in phases:
        home = Path(tempfile.mkdtemp(prefix="bench-nexmark-"))
        session = Session(SessionOptions(home=home, settings=spark_conf))
        try:
            *ddl, insert = [parse_script(s + ";")[0] for s in phase["statements"]]
            for statement in ddl:
                session.execute(statement)
            say("start", phase=phase["name"])
            started = time.perf_counter()
            job = run_to_end(session, insert, memory=True)
            say("end", phase=phase["name"], job_wall_s=time.perf_counter() - started, wall_s=job.processing_s,
                cpu_s=job.cpu_s, rows=job.rows, batches=len(job.reports), peak_rss=job.peak_rss)
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which fails the run
            traceback.print_exc()
            say("end", phase=phase["name"], error=(str(exc) or repr(exc)).splitlines()[0][:500])
        finally:
            session.close()
            scratch.remove(home)


def run_pyspark(phases: list[dict], spark_conf: dict[str, str]) -> None:
    from pyspark.sql import functions as F

    from benchmarks.nexmark_queries import EVENT_SCHEMA, PYSPARK
    from shell.engine.spark import SparkRuntime

    work = Path(tempfile.mkdtemp(prefix="bench-nexmark-pyspark-"))
    runtime = SparkRuntime("local[*]", spark_conf, work / "spark.log", app_name="bench-nexmark-pyspark")
    spark = runtime.get()
    try:
        for n, phase in enumerate(phases):
            raw = (
                spark.readStream.format("kafka").option("kafka.bootstrap.servers", KAFKA)
                .option("subscribe", ",".join(phase["topics"])).option("startingOffsets", "earliest").load()
            )  # fmt: skip
            parsed = F.from_json(F.col("value").cast("string"), EVENT_SCHEMA, {"timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS"})
            events = raw.select(parsed.alias("e")).select("e.*").selectExpr(
                "*", "CASE WHEN event_type = 0 THEN person.dateTime WHEN event_type = 1 THEN auction.dateTime "
                "ELSE bid.dateTime END AS dateTime").withWatermark("dateTime", "4 seconds")  # fmt: skip
            # Spark pushes `event_type = 2` below the watermark (it does not mention `dateTime`), which would then
            # see neither persons, auctions nor the end marker; an observed count is a node no filter passes
            events = events.observe(f"all_events_{n}", F.count(F.lit(1)).alias("rows"))
            events.where("event_type = 2").selectExpr(
                "bid.auction", "bid.bidder", "bid.price", "bid.channel", "bid.url", "dateTime", "bid.extra"
            ).createOrReplaceTempView(f"bid{n}")
            result = spark.sql(PYSPARK[phase["query"]].format(bid=f"bid{n}"))
            if phase["sink"]:
                writer = result.selectExpr(
                    "to_json(struct(*), map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSS', 'ignoreNullFields', 'false')) AS value"
                ).writeStream.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("topic", phase["sink"])
            else:
                writer = result.writeStream.format("noop")
            say("start", phase=phase["name"])
            started = time.perf_counter()
            try:
                running = (writer.outputMode("append").trigger(availableNow=True)
                           .option("checkpointLocation", str(work / f"checkpoint-{n}")).start())  # fmt: skip
                running.awaitTermination()
            except Exception as exc:  # noqa: BLE001 - reported to the caller, which fails the run
                traceback.print_exc()
                say("end", phase=phase["name"], error=(str(exc) or repr(exc)).splitlines()[0][:500])
                continue
            rows = sum(p["numInputRows"] for p in running.recentProgress)
            say("end", phase=phase["name"], wall_s=time.perf_counter() - started, rows=rows)
    finally:
        runtime.stop()
        scratch.remove(work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=("streamshell", "pyspark"))
    parser.add_argument("--phases", required=True, type=Path)
    parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    runner = run_streamshell if args.engine == "streamshell" else run_pyspark
    runner(json.loads(args.phases.read_text()), dict(kv.split("=", 1) for kv in args.spark_conf))
    return 0


if __name__ == "__main__":
    sys.exit(main())
