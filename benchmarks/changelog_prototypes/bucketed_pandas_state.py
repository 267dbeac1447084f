"""Design 1: retract stream from a bucketed applyInPandasWithState, then a native weighted COUNT.

Stage 1 groups the changes by bucket = pmod(xxhash64(uid), B); the state of a bucket is its current rows
(uid -> accountId, sorted by uid) as one Arrow IPC blob. One pandas call per bucket per batch: numpy
searchsorted finds the old rows, the function emits weights (-1 old accountId, +1 new accountId), pre-summed
per accountId, in append mode. Stage 2 is `groupBy(accountId).agg(sum(w))` in update mode; a count of 0 is a
delete. `--mode same` tries both in one query; `--mode kafka` chains two queries through a Kafka topic.

    .venv/bin/python -m benchmarks.changelog_prototypes.bucketed_pandas_state --check
    .venv/bin/python -m benchmarks.changelog_prototypes.bucketed_pandas_state --stage1-only --buckets 1024 \
        --uids 1000000 --rows 100000 --batches 16
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import pyarrow as pa
from kafka.admin import KafkaAdminClient, NewTopic
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupStateTimeout

from . import common

STATE_SCHEMA = "blob BINARY"
OUT_SCHEMA = "accountId LONG, w LONG"


def decode(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    t = pa.ipc.open_stream(blob).read_all()
    return t.column(0).to_numpy(), t.column(1).to_numpy()


def encode(uids: np.ndarray, accts: np.ndarray) -> bytes:
    sink = pa.BufferOutputStream()
    batch = pa.record_batch([pa.array(uids), pa.array(accts)], names=["uid", "accountId"])
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def latest_per_uid(uid: np.ndarray, seq: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """The batch's latest change of each uid (ordered by uid), with the same rows of `columns`."""
    order = np.lexsort((seq, uid))  # by uid, then seq: the last row of each uid is its latest change
    uid = uid[order]
    last = np.append(uid[1:] != uid[:-1], True)
    return (uid[last], *(c[order][last] for c in columns))


def match_latest(s_uid: np.ndarray, s_acct: np.ndarray, b_uid: np.ndarray, b_new: np.ndarray):
    """Each batch uid's latest accountId (NaN: a delete) against the state (`s_uid` sorted and unique): the uid's
    position in the state, whether it is there, its old and new accountId, whether a new row exists, and which
    uids lose their old row (-1) and gain a new one (+1)."""
    pos = np.searchsorted(s_uid, b_uid)
    posc = np.minimum(pos, max(len(s_uid) - 1, 0))
    found = (pos < len(s_uid)) & (s_uid[posc] == b_uid) if len(s_uid) else np.zeros(len(b_uid), bool)
    old = s_acct[posc] if len(s_uid) else np.zeros(len(b_uid), np.int64)
    has_new = ~np.isnan(b_new)
    new = np.where(has_new, b_new, -1).astype(np.int64)
    changed = ~(found & has_new & (old == new))
    return posc, found, old, new, has_new, found & changed, has_new & changed


def weights(old: np.ndarray, new: np.ndarray, minus: np.ndarray, plus: np.ndarray) -> pd.DataFrame | None:
    """-1 per old accountId that lost a row, +1 per new one that gained one, summed per accountId (None: none)."""
    accs = np.concatenate([old[minus], new[plus]])
    if not len(accs):
        return None
    ws = np.concatenate([np.full(minus.sum(), -1), np.full(plus.sum(), 1)])
    keys, inv = np.unique(accs, return_inverse=True)
    sums = np.bincount(inv, weights=ws).astype(np.int64)
    return pd.DataFrame({"accountId": keys[sums != 0], "w": sums[sums != 0]})


def retract(key, pdfs, state):
    """All changes of one bucket in this batch -> weights per accountId; state = the bucket's current rows.

    Only numpy inside (pandas calls cost ~0.5 ms each, and this runs once per bucket per batch)."""
    s_uid, s_acct = decode(state.get[0]) if state.exists else (np.empty(0, np.int64), np.empty(0, np.int64))
    pdfs = list(pdfs)
    uid = np.concatenate([p["uid"].to_numpy() for p in pdfs])
    seq = np.concatenate([p["seq"].to_numpy() for p in pdfs])
    acct = np.concatenate([p["accountId"].to_numpy(dtype="float64", na_value=np.nan) for p in pdfs])
    b_uid, b_new = latest_per_uid(uid, seq, acct)  # NaN = delete
    posc, found, old, new, has_new, minus, plus = match_latest(s_uid, s_acct, b_uid, b_new)
    # new state: drop the touched uids, add the new rows, keep sorted by uid
    keep = np.ones(len(s_uid), bool)
    keep[posc[found]] = False
    uids = np.concatenate([s_uid[keep], b_uid[has_new]])
    accts = np.concatenate([s_acct[keep], new[has_new]])
    order = np.argsort(uids, kind="stable")
    state.update((encode(uids[order], accts[order]),))
    out = weights(old, new, minus, plus)
    if out is not None:
        yield out


def stage1(changes, buckets: int):
    return (changes.withColumn("bucket", F.pmod(F.xxhash64("uid"), F.lit(buckets)))
            .groupBy("bucket")
            .applyInPandasWithState(retract, OUT_SCHEMA, STATE_SCHEMA, "append", GroupStateTimeout.NoTimeout))


def stage2(weights):
    agg = weights.groupBy("accountId").agg(F.sum("w").alias("c"))
    return agg.select("accountId", F.when(F.col("c") == 0, None).otherwise(F.col("c")).alias("userCount"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="small deterministic correctness check")
    ap.add_argument("--mode", choices=["same", "kafka"], default="kafka")
    ap.add_argument("--stage1-only", action="store_true", help="measure stage 1 into a noop sink")
    ap.add_argument("--buckets", type=int, default=1024)
    ap.add_argument("--uids", type=int, default=1_000_000)
    ap.add_argument("--accounts", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=100_000, help="changes per micro-batch")
    ap.add_argument("--batches", type=int, default=16)
    ap.add_argument("--skip", type=int, default=-1, help="batches not measured (default: the preload + 1)")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--low-rows", type=int, default=0, help="then restart with this many changes per batch")
    ap.add_argument("--low-batches", type=int, default=10)
    a = ap.parse_args()
    if a.check:
        a.uids, a.accounts, a.rows, a.batches, a.buckets = 1000, 20, 300, 12, 16
    skip = a.skip if a.skip >= 0 else -(-a.uids // a.rows) + 1
    spark = common.spark_session(a.partitions)
    d = common.fresh_dir(f"bucketed-{a.mode}-{a.buckets}")
    changes = common.change_stream(spark, a.rows, a.uids, a.accounts)
    got: dict = {}

    def collect(df, _):
        common.apply_upserts(got, df.collect(), "accountId", "userCount")

    if a.stage1_only:
        q = stage1(changes, a.buckets).writeStream.format("noop").option("checkpointLocation", d).start()
        common.report(f"stage1 B={a.buckets}", common.run_batches(q, a.batches), skip)
        q.stop()
        return
    if a.mode == "same":
        w = stage2(stage1(changes, a.buckets)).writeStream.outputMode("update").option("checkpointLocation", d)
        q = (w.foreachBatch(collect) if a.check else w.format("noop")).start()
        common.report(f"one query B={a.buckets}", common.run_measured(spark, q, skip, a.batches)[0], skip)
        q.stop()
        n = sum(p["numInputRows"] for p in q.recentProgress)
        if a.low_rows:  # same checkpoint, smaller batches: per-batch time at a low rate, state already loaded
            changes = common.change_stream(spark, a.low_rows, a.uids, a.accounts)
            w = stage2(stage1(changes, a.buckets)).writeStream.outputMode("update").option("checkpointLocation", d)
            q = w.format("noop").start()
            first = common.last_batch(q) + 1
            time.sleep(5)
            first = max(first, a.batches)
            prog = common.run_batches(q, first + a.low_batches + 2)
            common.report(f"one query B={a.buckets} low rate", prog, first + 2)
            q.stop()
    else:
        topic = f"cl-weights-{int(time.time())}"
        admin = KafkaAdminClient(bootstrap_servers="127.0.0.1:9092")
        admin.create_topics([NewTopic(topic, num_partitions=a.partitions, replication_factor=1)])
        q1 = (stage1(changes, a.buckets)
              .select(F.col("accountId").cast("string").alias("key"), F.col("w").cast("string").alias("value"))
              .writeStream.format("kafka").option("kafka.bootstrap.servers", "127.0.0.1:9092")
              .option("topic", topic).option("checkpointLocation", d + "/q1").start())
        w = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", "127.0.0.1:9092")
             .option("subscribe", topic).option("startingOffsets", "earliest").load()
             .select(F.col("key").cast("string").cast("long").alias("accountId"),
                     F.col("value").cast("string").cast("long").alias("w")))
        sink = (stage2(w).writeStream.outputMode("update").option("checkpointLocation", d + "/q2")
                .foreachBatch(collect) if a.check else
                stage2(w).writeStream.outputMode("update").format("noop").option("checkpointLocation", d + "/q2"))
        q2 = sink.start()
        prog = common.run_batches(q1, a.batches)
        common.report(f"stage1 B={a.buckets}", prog, skip)
        q1.stop()
        n = sum(p["numInputRows"] for p in q1.recentProgress)
        idle = 0  # stage 2 has caught up once it saw no new data for 5 s
        while idle < 10:
            idle = idle + 1 if not (q2.status["isDataAvailable"] or q2.status["isTriggerActive"]) else 0
            time.sleep(0.5)
        common.report("stage2", q2.recentProgress, 1)
        q2.stop()
    if a.check:
        common.check(f"bucketed {a.mode}", got, common.expected_counts(spark, n, a.uids, a.accounts))


if __name__ == "__main__":
    main()
