"""Shared pieces of the changelog prototypes: the Spark session, a deterministic change source, the
reference (batch) result, a changelog applier for the correctness check and the per-batch timing report.

Changes: change number `v` (0, 1, 2, ...) from Spark's `rate-micro-batch` source becomes one upsert message
(uid, accountId|NULL, seq=v). With `preload`, changes 0..uids-1 insert every uid once (uid = v); after that
uid = pmod(xxhash64(v), uids), accountId is NULL (a delete) one time in ten, else pmod(xxhash64(v, 1), accounts).
The same expressions over `spark.range` give the reference final table, so the check needs no driver state.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from shell.paths import jvm_bundle_jars

JARS = jvm_bundle_jars("spark")  # what every streamshell session loads (the Kafka connector)
WORK = os.path.join(tempfile.gettempdir(), "changelog_prototypes")


def delta_jars() -> list[str]:
    """Delta Lake's jars, the "delta" bundle (jvm/delta/pom.xml): only delta_ivm.py uses them, so no streamshell
    session and no other prototype has them on its classpath. `make bench-delta-ivm` resolves the bundle."""
    jars = jvm_bundle_jars("delta")
    if not jars:
        raise SystemExit("the Delta Lake jars are missing: run `scripts/jvm-deps delta` (or `make bench-delta-ivm`)")
    return jars


def spark_session(partitions: int = 4, rocksdb: bool = True, delta: bool = False, extra_jars=()) -> SparkSession:
    """A local session with the spark bundle's jars; `delta=True` adds the delta bundle and Delta's catalog."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers need pandas/pyarrow from this venv
    b = (
        SparkSession.builder.master("local[*]").appName("changelog-prototype")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.driver.memory", "6g")
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    if rocksdb:
        b = b.config("spark.sql.streaming.stateStore.providerClass",
                     "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
    b = b.config("spark.jars", ",".join([*JARS, *(delta_jars() if delta else ()), *extra_jars]))
    if delta:
        b = (b.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def fresh_dir(name: str) -> str:
    path = os.path.join(WORK, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def change_columns(v: Column, uids: int, accounts: int, preload: bool) -> list[Column]:
    """(uid, accountId|NULL, seq) of change number v; deterministic, same in batch and streaming."""
    rand_uid = F.pmod(F.xxhash64(v), F.lit(uids))
    uid = F.when(v < uids, v).otherwise(rand_uid) if preload else rand_uid
    acct = F.pmod(F.xxhash64(v, F.lit(1)), F.lit(accounts))
    is_delete = (F.pmod(F.xxhash64(v, F.lit(2)), F.lit(10)) == 0) & (v >= uids if preload else F.lit(True))
    return [uid.cast("long").alias("uid"), F.when(is_delete, None).otherwise(acct).cast("long").alias("accountId"),
            v.cast("long").alias("seq")]


def change_stream(spark: SparkSession, rows_per_batch: int, uids: int, accounts: int,
                  preload: bool = True, start: int = 0) -> DataFrame:
    """Changes start, start+1, ... (start > 0: the preload was written some other way)."""
    src = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch).load()
    return src.select(*change_columns(F.col("value") + start, uids, accounts, preload))


def changes_batch(spark: SparkSession, n: int, uids: int, accounts: int, preload: bool = True) -> DataFrame:
    return spark.range(n).select(*change_columns(F.col("id"), uids, accounts, preload))


def expected_counts(spark: SparkSession, n: int, uids: int, accounts: int, preload: bool = True) -> dict:
    """The query's final result over the first n changes, computed as a plain batch query."""
    ch = changes_batch(spark, n, uids, accounts, preload)
    latest = ch.groupBy("uid").agg(F.max_by("accountId", "seq").alias("accountId"))
    rows = latest.where("accountId IS NOT NULL").groupBy("accountId").count().collect()
    return {r["accountId"]: r["count"] for r in rows}


def apply_upserts(table: dict, rows, key: str, value: str) -> None:
    """Apply upsert-sink rows to a dict: value None is a delete (tombstone)."""
    for r in rows:
        if r[value] is None:
            table.pop(r[key], None)
        else:
            table[r[key]] = r[value]


def check(name: str, got: dict, want: dict) -> bool:
    ok = got == want
    diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
    print(f"[{name}] correctness: {'OK' if ok else 'WRONG'} ({len(want)} result rows"
          + ("" if ok else f", {len(diff)} differ, e.g. {list(diff.items())[:5]}") + ")")
    return ok


def run_batches(query, batches: int, timeout: float = 1800) -> list[dict]:
    """Wait until the query has completed batch id `batches - 1`; return the progress dicts."""
    t0 = time.time()
    while True:
        if query.exception():
            raise RuntimeError(str(query.exception()))
        prog = query.recentProgress
        done = [p for p in prog if p.get("numInputRows", 0) > 0 or p["batchId"] >= 0]
        if prog and prog[-1]["batchId"] >= batches - 1:
            break
        if time.time() - t0 > timeout:
            raise TimeoutError(f"{len(done)} batches in {timeout}s")
        time.sleep(0.2)
    return [p for p in query.recentProgress if p["batchId"] < batches]


def last_batch(query) -> int:
    return max((p["batchId"] for p in query.recentProgress), default=-1)


def cpu_seconds(spark: SparkSession) -> float:
    """CPU time (user + system) of Spark's JVM and all its descendants (the Python workers): load-independent cost."""
    root = spark._jvm.java.lang.ProcessHandle.current().pid()
    stats = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                f = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(d)] = (int(f[1]), (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"))
    tree, total = {root}, 0.0
    for _ in range(4):  # descendants a few levels down
        tree |= {pid for pid, (ppid, _) in stats.items() if ppid in tree}
    for pid in tree:
        total += stats.get(pid, (0, 0.0))[1]
    return total


def run_measured(spark: SparkSession, query, skip: int, batches: int) -> tuple[list[dict], float]:
    """run_batches, plus the CPU seconds per change of the batches after `skip` (after the preload)."""
    run_batches(query, skip)
    c0, first = cpu_seconds(spark), last_batch(query) + 1
    prog = run_batches(query, batches)
    rows = sum(p["numInputRows"] for p in prog if p["batchId"] >= first)
    cpu = (cpu_seconds(spark) - c0) / max(rows, 1)
    print(f"CPU {cpu * 1e6:.1f} us per change over {rows} changes (batches {first}..{batches - 1}): "
          f"{1 / cpu:,.0f} changes/s per core if CPU-bound" if rows else "no rows measured")
    return prog, cpu


def loadavg() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip().split("load average:")[-1]


def report(name: str, progress: list[dict], skip: int) -> dict:
    """Summarise the batches after the first `skip` (preload / warm-up): changes/s and per-batch time."""
    steady = [p for p in progress if p["batchId"] >= skip and p.get("numInputRows")]
    if not steady:
        print(f"[{name}] no steady batches")
        return {}
    secs = [p["durationMs"]["triggerExecution"] / 1000 for p in steady]
    rows = sum(p["numInputRows"] for p in steady)
    state = [op for p in steady[-1:] for op in p.get("stateOperators", [])]
    out = {
        "batches": len(steady), "rows_per_batch": rows // len(steady),
        "changes_per_s": rows / sum(secs), "batch_s_p50": statistics.median(secs), "batch_s_max": max(secs),
        "state": [(op.get("operatorName"), op.get("numRowsTotal"), op.get("memoryUsedBytes"),
                   op.get("customMetrics", {}).get("rocksdbSstFileSize"),
                   op.get("customMetrics", {}).get("rocksdbBytesCopied")) for op in state],
        "load": loadavg(),
        "parts_ms_p50": {k: statistics.median(p["durationMs"].get(k, 0) for p in steady)
                         for k in ("addBatch", "latestOffset", "queryPlanning", "walCommit", "commitOffsets")},
    }
    print(f"[{name}] {out['batches']} batches of {out['rows_per_batch']}: {out['changes_per_s']:,.0f} changes/s, "
          f"batch p50 {out['batch_s_p50']:.2f}s max {out['batch_s_max']:.2f}s; "
          f"parts p50 ms {out['parts_ms_p50']}; "
          f"state (op, rows, mem, sst bytes, bytes copied) {out['state']}; load {out['load']}")
    return out
