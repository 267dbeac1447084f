"""Design 1b: retract stream from a bucketed transformWithStateInPandas whose state is a MapState of sub-buckets.

Same query shape as `bucketed_pandas_state` (design 1): changes are grouped by bucket = pmod(xxhash64(uid), B);
the stateful operator emits weights (-1 old accountId, +1 new accountId), pre-summed per accountId, in append
mode, and a native `groupBy(accountId).agg(sum(w))` in update mode follows in the same query. The difference is
the state: per bucket, a MapState keyed by sub-bucket = pmod(xxhash64(uid, 2), S) whose value is that
sub-bucket's current rows (uid sorted, then accountId) as raw little-endian int64 bytes. A call reads only the
sub-buckets the batch touches (one MapState get and one put per touched sub-bucket), merges all of them with the
batch in one vectorized numpy pass and writes them back, so the work per batch follows the changes, not the state.

transformWithStateInPandas needs protobuf >= 6.33.5 in the Python workers (pyspark 4.2's generated
StateMessage_pb2 refuses 6.33.1: "Detected incompatible Protobuf Gencode/Runtime versions"); the project pins
6.33.5 since the engine's keyed stage became this design (shell/engine/stage_operators.py).

    .venv/bin/python -m benchmarks.changelog_prototypes.submap_state --check
    .venv/bin/python -m benchmarks.changelog_prototypes.submap_state --stats \
        --buckets 16 --subs 64 --rows 100000 --batches 14 --low-rows 1000 --low-batches 8

B=16 groups of S=64 sub-buckets (1,024 values of ~1K rows, ~16 KB each at 1M keys) was the best of the sizes
tried: each MapState get or put is a round trip to the JVM of ~0.2-0.5 ms at that size (more with larger values),
so many small sub-buckets cost more round trips than they save in bytes, and few groups keep the number of Python
calls (and their fixed cost) low.

`--stats` makes every Python call append one line (bucket, rows, sub-buckets touched, seconds in MapState gets,
seconds in puts, seconds in the call) to /tmp/changelog_prototypes/submap-stats/<pid>; the driver summarises it
per phase.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import time

import numpy as np
from pyspark.sql import functions as F
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from . import common
from .bucketed_pandas_state import latest_per_uid, match_latest, stage2, weights

OUT_SCHEMA = "accountId LONG, w LONG"
STATS_DIR = os.path.join(common.WORK, "submap-stats")
EMPTY = np.empty(0, np.int64)


def encode(uids: np.ndarray, accts: np.ndarray) -> bytes:
    return np.concatenate([uids, accts]).astype("<i8", copy=False).tobytes()


def decode(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    a = np.frombuffer(blob, "<i8")
    n = len(a) // 2
    return a[:n], a[n:]


def merge(subs_t: np.ndarray, lens: np.ndarray, s_uid: np.ndarray, s_acct: np.ndarray,
          sub: np.ndarray, uid: np.ndarray, seq: np.ndarray, acct: np.ndarray):
    """Vectorized merge of one bucket's batch with the touched sub-buckets' rows (concatenated in `subs_t` order).

    Returns the new rows per touched sub-bucket (as split points into sorted arrays) and the weights."""
    b_uid, b_new, b_sub = latest_per_uid(uid, seq, acct, sub)  # NaN = delete
    s_sub = np.repeat(subs_t, lens)
    # find each batch uid in the state: sort state uids once, searchsorted (uids are unique within the state)
    so = np.argsort(s_uid, kind="stable")
    posc, found, old, new, has_new, minus, plus = match_latest(s_uid[so], s_acct[so], b_uid, b_new)
    idx = so[posc] if len(so) else np.zeros(len(b_uid), np.int64)
    keep = np.ones(len(s_uid), bool)
    keep[idx[found]] = False
    n_sub = np.concatenate([s_sub[keep], b_sub[has_new]])
    n_uid = np.concatenate([s_uid[keep], b_uid[has_new]])
    n_acct = np.concatenate([s_acct[keep], new[has_new]])
    o = np.lexsort((n_uid, n_sub))
    n_sub, n_uid, n_acct = n_sub[o], n_uid[o], n_acct[o]
    bounds = np.searchsorted(n_sub, subs_t, side="left"), np.searchsorted(n_sub, subs_t, side="right")
    return n_uid, n_acct, bounds, weights(old, new, minus, plus)


class SubBucketRetract(StatefulProcessor):
    def __init__(self, stats: bool = False):
        self.stats = stats

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.rows = handle.getMapState("rows", "sub INT", "blob BINARY")
        self.out = None
        if self.stats:
            os.makedirs(STATS_DIR, exist_ok=True)
            self.out = open(os.path.join(STATS_DIR, str(os.getpid())), "a", buffering=1)

    def handleInputRows(self, key, rows, timerValues):
        t0 = time.perf_counter()
        pdfs = list(rows)
        uid = np.concatenate([p["uid"].to_numpy() for p in pdfs])
        seq = np.concatenate([p["seq"].to_numpy() for p in pdfs])
        sub = np.concatenate([p["sub"].to_numpy() for p in pdfs])
        acct = np.concatenate([p["accountId"].to_numpy(dtype="float64", na_value=np.nan) for p in pdfs])
        subs_t = np.unique(sub)
        t1 = time.perf_counter()
        uids, accts, lens = [], [], np.zeros(len(subs_t), np.int64)
        for i, s in enumerate(subs_t.tolist()):  # one MapState get per touched sub-bucket
            v = self.rows.getValue((s,))
            if v is not None:
                u, a = decode(v[0])
                uids.append(u)
                accts.append(a)
                lens[i] = len(u)
        t2 = time.perf_counter()
        s_uid = np.concatenate(uids) if uids else EMPTY
        s_acct = np.concatenate(accts) if accts else EMPTY
        n_uid, n_acct, (lo, hi), out = merge(subs_t, lens, s_uid, s_acct, sub, uid, seq, acct)
        t3 = time.perf_counter()
        for s, a, b, n in zip(subs_t.tolist(), lo.tolist(), hi.tolist(), lens.tolist()):  # one put/remove each
            if b > a:
                self.rows.updateValue((s,), (encode(n_uid[a:b], n_acct[a:b]),))
            elif n:
                self.rows.removeKey((s,))
        t4 = time.perf_counter()
        if self.out:
            self.out.write(f"{key[0]} {len(uid)} {len(subs_t)} {t2 - t1:.6f} {t4 - t3:.6f} {t4 - t0:.6f} "
                           f"{time.time():.3f}\n")
        if out is not None:
            yield out

    def close(self) -> None:
        if self.out:
            self.out.close()


def stage1(changes, buckets: int, subs: int, stats: bool = False):
    return (changes.withColumn("bucket", F.pmod(F.xxhash64("uid"), F.lit(buckets)).cast("int"))
            .withColumn("sub", F.pmod(F.xxhash64("uid", F.lit(2)), F.lit(subs)).cast("int"))
            .groupBy("bucket")
            .transformWithStateInPandas(SubBucketRetract(stats), OUT_SCHEMA, "Append", "None"))


def read_stats(since: float) -> str:
    """Summary of the per-call lines written after `since` (wall clock)."""
    lines = [ln.split() for f in glob.glob(os.path.join(STATS_DIR, "*")) for ln in open(f)]
    rows = [list(map(float, ln)) for ln in lines if len(ln) == 7 and float(ln[6]) >= since]
    if not rows:
        return "no stats"
    a = np.array(rows)
    calls, touched = len(a), a[:, 2].sum()
    return (f"{calls} calls, {a[:, 1].sum():.0f} rows, {touched:.0f} sub-buckets touched; "
            f"MapState get {a[:, 3].sum() / touched * 1e6:.0f} us/sub, put {a[:, 4].sum() / touched * 1e6:.0f} "
            f"us/sub; call body {a[:, 5].sum() / calls * 1e3:.2f} ms/call "
            f"({a[:, 5].sum():.1f} s in all, gets {a[:, 3].sum():.1f} s, puts {a[:, 4].sum():.1f} s)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="small deterministic correctness check")
    ap.add_argument("--buckets", type=int, default=16)
    ap.add_argument("--subs", type=int, default=64, help="sub-buckets per bucket")
    ap.add_argument("--uids", type=int, default=1_000_000)
    ap.add_argument("--accounts", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=100_000, help="changes per micro-batch")
    ap.add_argument("--batches", type=int, default=14)
    ap.add_argument("--skip", type=int, default=-1, help="batches not measured (default: the preload + 1)")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--low-rows", type=int, default=0, help="then restart with this many changes per batch")
    ap.add_argument("--low-batches", type=int, default=10)
    ap.add_argument("--stats", action="store_true", help="per-call timings of MapState gets/puts")
    a = ap.parse_args()
    if a.check and a.uids == 1_000_000:
        a.uids, a.accounts, a.rows, a.batches, a.buckets, a.subs = 1000, 20, 300, 12, 16, 4
    skip = a.skip if a.skip >= 0 else -(-a.uids // a.rows) + 1
    shutil.rmtree(STATS_DIR, ignore_errors=True)
    spark = common.spark_session(a.partitions)
    name = f"submap B={a.buckets} S={a.subs}"
    d = common.fresh_dir(f"submap-{a.buckets}-{a.subs}")
    changes = common.change_stream(spark, a.rows, a.uids, a.accounts)
    got: dict = {}

    def collect(df, _):
        common.apply_upserts(got, df.collect(), "accountId", "userCount")

    w = stage2(stage1(changes, a.buckets, a.subs, a.stats)).writeStream.outputMode("update") \
        .option("checkpointLocation", d)
    q = (w.foreachBatch(collect) if a.check else w.format("noop")).start()
    common.run_batches(q, skip)
    t_steady = time.time()
    common.report(name, common.run_measured(spark, q, skip, a.batches)[0], skip)
    if a.stats:
        print(f"[{name}] steady calls: {read_stats(t_steady)}")
    q.stop()
    n = sum(p["numInputRows"] for p in q.recentProgress)
    if a.check:
        common.check(name, got, common.expected_counts(spark, n, a.uids, a.accounts))
    if a.low_rows:  # same checkpoint, smaller batches: per-batch time at a low rate, state already loaded
        changes = common.change_stream(spark, a.low_rows, a.uids, a.accounts)
        w = stage2(stage1(changes, a.buckets, a.subs, a.stats)).writeStream.outputMode("update") \
            .option("checkpointLocation", d)
        q = w.format("noop").start()
        first = max(common.last_batch(q) + 1, a.batches)
        common.run_batches(q, first + 2)
        t_low = time.time()
        prog = common.run_batches(q, first + a.low_batches + 2)
        common.report(f"{name} low rate", prog, first + 2)
        if a.stats:
            print(f"[{name} low rate] calls: {read_stats(t_low)}")
        q.stop()


if __name__ == "__main__":
    main()
