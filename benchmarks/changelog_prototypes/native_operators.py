"""Design 2: can Spark's native operators alone turn the upsert stream into old + new rows (and then counts)?

Each experiment builds one streaming query over the change stream and starts it; the script prints whether
Spark accepted it and, if not, the first line of its error. Accepted ones run three small batches.

    .venv/bin/python -m benchmarks.changelog_prototypes.native_operators
"""

from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from . import common


def experiments(spark):
    ch = common.change_stream(spark, 300, 1000, 20)
    latest = ch.groupBy("uid").agg(F.max_by(F.struct("accountId", "seq"), "seq").alias("row"))
    ts = ch.withColumn("ts", F.timestamp_seconds(F.col("seq") / 1000)).withWatermark("ts", "10 seconds")
    prev = ch.alias("n").join(ch.alias("o"), F.expr("n.uid = o.uid AND o.seq < n.seq"))
    prev_ts = ts.alias("n").join(ts.alias("o"), F.expr(
        "n.uid = o.uid AND o.seq < n.seq AND o.ts BETWEEN n.ts - INTERVAL 1 HOUR AND n.ts"), "leftOuter")
    yield "latest row per key: groupBy(uid).agg(max_by(struct, seq))", latest, "update"
    yield "latest row, then COUNT per accountId (update)", latest.groupBy("row.accountId").count(), "update"
    yield "latest row, then COUNT per accountId (append)", latest.groupBy("row.accountId").count(), "append"
    yield ("latest row with watermark, then COUNT (append)",
           ts.groupBy("uid").agg(F.max_by("accountId", "seq").alias("a"), F.max("ts").alias("ts"))
           .groupBy("a").count(), "append")
    yield "self join: every older version of the key (no watermark)", prev, "append"
    yield ("self join, then max_by(old, seq) per new row (update)",
           prev.groupBy("n.uid", "n.seq").agg(F.max_by("o.accountId", "o.seq")), "update")
    yield ("self left join with watermark + time bound, then max_by per new row (append)",
           prev_ts.groupBy("n.uid", "n.seq").agg(F.max_by("o.accountId", "o.seq")), "append")
    yield "lag(accountId) over (partition by uid order by seq)", ch.withColumn(
        "old", F.lag("accountId").over(Window.partitionBy("uid").orderBy("seq"))), "append"
    yield "dropDuplicatesWithinWatermark(uid)", ts.dropDuplicatesWithinWatermark(["uid"]), "append"


def main() -> None:
    spark = common.spark_session(2)
    for i, (name, df, mode) in enumerate(experiments(spark)):
        d = common.fresh_dir(f"native-{i}")
        try:
            q = df.writeStream.outputMode(mode).format("noop").option("checkpointLocation", d).start()
            common.run_batches(q, 3, timeout=300)
            q.stop()
            print(f"[native] ACCEPTED  {name} ({mode})")
        except Exception as e:  # noqa: BLE001 - we want Spark's message
            msg = str(e).strip().splitlines()[0][:400]
            print(f"[native] REFUSED   {name} ({mode}): {msg}")


if __name__ == "__main__":
    main()
