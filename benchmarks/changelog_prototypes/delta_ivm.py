"""Design 3: incremental view maintenance in foreachBatch over Delta tables (no state store, no Python per row).

`users` (uid, accountId) and the result `counts` (accountId, userCount) are Delta tables (deletion vectors
and change data feed on). `users` is written sorted by uid into --files files so that a literal
`uid IN (batch uids)` predicate lets Delta's data skipping (min/max per file) prune files. Per micro-batch:
dedupe to the latest change per uid; read the old rows of those uids (join, broadcast batch); MERGE into
users; weights -1 old / +1 new summed per account; read those accounts' counts, add, MERGE into counts
(delete at 0); the batch's output changelog is the new count per touched account (NULL = delete).
Idempotent per batch id through Delta's txnAppId/txnVersion on both MERGEs.

Delta Lake's jars are a JVM bundle of their own (jvm/delta/pom.xml, not in the "spark" bundle that every
streamshell session loads): `scripts/jvm-deps delta` resolves it, and `make bench-delta-ivm` does that and then
runs --check.

    .venv/bin/python -m benchmarks.changelog_prototypes.delta_ivm --check
    .venv/bin/python -m benchmarks.changelog_prototypes.delta_ivm --uids 1000000 --rows 1000 --batches 8
    .venv/bin/python -m benchmarks.changelog_prototypes.delta_ivm --uids 1000000 --rows 100000 --batches 5
"""

from __future__ import annotations

import argparse
import time

from delta.tables import DeltaTable
from pyspark.sql import functions as F

from . import common

PROPS = {"delta.enableDeletionVectors": "true", "delta.enableChangeDataFeed": "true"}


def create(spark, path, df, files, sort_col):
    w = df.repartitionByRange(files, sort_col).sortWithinPartitions(sort_col).write.format("delta")
    for k, v in PROPS.items():
        w = w.option(k, v)
    w.mode("overwrite").save(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="small deterministic correctness check")
    ap.add_argument("--uids", type=int, default=1_000_000)
    ap.add_argument("--accounts", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=1000, help="changes per micro-batch")
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--files", type=int, default=64, help="files of the users table (sorted by uid)")
    ap.add_argument("--no-skipping", action="store_true", help="no literal uid IN-list predicate")
    ap.add_argument("--partitions", type=int, default=4)
    a = ap.parse_args()
    if a.check:
        a.uids, a.accounts, a.rows, a.batches, a.files = 1000, 20, 300, 8, 4
    spark = common.spark_session(a.partitions, delta=True)
    spark.conf.set("spark.databricks.delta.optimizeWrite.enabled", "false")
    spark.conf.set("spark.databricks.delta.autoCompact.enabled", "false")
    spark.conf.set("spark.databricks.delta.snapshotPartitions", "2")  # log replay: default 50 tasks
    d = common.fresh_dir("delta-ivm")
    users_p, counts_p = d + "/users", d + "/counts"
    t = time.time()
    pre = common.changes_batch(spark, a.uids, a.uids, a.accounts).select("uid", "accountId")
    create(spark, users_p, pre, a.files, "uid")
    create(spark, counts_p, pre.groupBy("accountId").agg(F.count("*").alias("userCount")), 1, "accountId")
    print(f"[delta] preload {a.uids} users in {time.time() - t:.1f}s")
    users, counts = DeltaTable.forPath(spark, users_p), DeltaTable.forPath(spark, counts_p)
    got = {r["accountId"]: r["userCount"] for r in spark.read.format("delta").load(counts_p).collect()}
    timings: list[dict] = []

    def step(batch, batch_id):
        t0 = time.time()
        b = (batch.groupBy("uid").agg(F.max_by("accountId", "seq").alias("accountId"))
             .localCheckpoint())  # the batch is read once; every later step reuses it
        uids = [r[0] for r in b.select("uid").collect()] if not a.no_skipping else None
        target = spark.read.format("delta").load(users_p)
        if uids is not None:
            target = target.where(F.col("uid").isin(uids))
        old = target.join(F.broadcast(b.select("uid")), "uid").select("uid", F.col("accountId").alias("old"))
        ch = b.join(old, "uid", "left").where(~F.col("old").eqNullSafe(F.col("accountId"))).localCheckpoint()
        t1 = time.time()
        cond = "t.uid = s.uid" + (f" AND t.uid IN ({','.join(map(str, uids))})" if uids else "")
        spark.conf.set("spark.databricks.delta.write.txnAppId", "users")
        spark.conf.set("spark.databricks.delta.write.txnVersion", str(batch_id))
        (users.alias("t").merge(ch.alias("s"), cond)
         .whenMatchedDelete("s.accountId IS NULL").whenMatchedUpdate(set={"accountId": "s.accountId"})
         .whenNotMatchedInsert("s.accountId IS NOT NULL", values={"uid": "s.uid", "accountId": "s.accountId"})
         .execute())
        t2 = time.time()
        w = (ch.where("old IS NOT NULL").select(F.col("old").alias("accountId"), F.lit(-1).alias("w"))
             .unionAll(ch.where("accountId IS NOT NULL").select("accountId", F.lit(1).alias("w")))
             .groupBy("accountId").agg(F.sum("w").alias("w")).where("w != 0"))
        cur = spark.read.format("delta").load(counts_p)
        diff = (w.join(cur, "accountId", "left")
                .select("accountId", (F.coalesce("userCount", F.lit(0)) + F.col("w")).alias("userCount"))
                .localCheckpoint())
        spark.conf.set("spark.databricks.delta.write.txnAppId", "counts")
        (counts.alias("t").merge(diff.alias("s"), "t.accountId = s.accountId")
         .whenMatchedDelete("s.userCount = 0").whenMatchedUpdate(set={"userCount": "s.userCount"})
         .whenNotMatchedInsert("s.userCount != 0", values={"accountId": "s.accountId", "userCount": "s.userCount"})
         .execute())
        spark.conf.unset("spark.databricks.delta.write.txnAppId")
        spark.conf.unset("spark.databricks.delta.write.txnVersion")
        out = diff.select("accountId", F.when(F.col("userCount") == 0, None).otherwise(F.col("userCount"))
                          .alias("userCount"))
        rows = out.collect() if a.check else None  # the sink; the benchmark only counts them
        n_out = len(rows) if rows is not None else out.count()
        if rows is not None:
            common.apply_upserts(got, rows, "accountId", "userCount")
        t3 = time.time()
        timings.append({"batch": batch_id, "lookup": t1 - t0, "merge_users": t2 - t1, "counts": t3 - t2,
                        "total": t3 - t0, "out": n_out})

    q = (common.change_stream(spark, a.rows, a.uids, a.accounts, start=a.uids).writeStream
         .foreachBatch(step).option("checkpointLocation", d + "/cp").start())
    prog = common.run_batches(q, a.batches, timeout=3600)
    q.stop()
    for x in timings:
        print("[delta] batch {batch}: lookup {lookup:.2f}s, MERGE users {merge_users:.2f}s, counts+MERGE+emit "
              "{counts:.2f}s, total {total:.2f}s, {out} result changes".format(**x))
    common.report(f"delta IVM files={a.files}", prog, 1)
    if a.check:
        n = a.uids + sum(p["numInputRows"] for p in q.recentProgress)
        want = common.expected_counts(spark, n, a.uids, a.accounts)
        common.check("delta IVM (emitted changelog)", got, want)
        table = {r[0]: r[1] for r in spark.read.format("delta").load(counts_p).collect()}
        common.check("delta IVM (counts table)", table, want)


if __name__ == "__main__":
    main()
