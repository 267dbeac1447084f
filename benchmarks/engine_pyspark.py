"""The hand-written PySpark side of the engine benchmark: the user count and the three-way join as a PySpark user
would write them, on the same Spark, to tell streamshell's own cost from Spark's.

Why it exists: the changelog benchmarks compared streamshell with Flink only, so a gap could not be split into what
Spark costs and what streamshell adds. Spark has no retractions, so a user writing these pipelines by hand keeps
each key's current row in state themselves: `transformWithStateInPandas` keyed by the user id (Spark calls it once
per key a micro-batch touches), then, for the count, Spark's own aggregation per account in update mode, and
Spark's own Kafka sink (a count that falls to 0, or a user without a row, is a tombstone, as an upsert sink writes
a delete). No `foreachBatch`, no planner, no bad-record keeping: the least a correct job does.

It runs on the Spark streamshell starts (shell/engine/spark.py: the same JVM options, RocksDB state store with
changelog checkpointing, shuffle partitions, local file system), so the comparison isolates the jobs, not the set-up.

    .venv/bin/python -m benchmarks.engine_pyspark --pipeline count|join|count-messages --topics T1[,T2,T3] --sink S --work DIR

`count-messages` is not a pipeline of the benchmark but Spark's floor beside the user count: the same input, every
message counted per account by Spark's own aggregation (no retractions, no Python), checked against that count.

It prints what engine_streamshell.py prints: `{"event": "submitted", ...}` once the query runs, `{"event": "batch",
"rows": numInputRows, ...}` per micro-batch, `{"event": "failed", ...}` if it fails; `stop` on stdin ends it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Iterator

import pandas as pd

from benchmarks.engine_procs import say, stop_requested

PIPELINES = ("count", "join")
FLOOR = "count-messages"  # not the user count: Spark's floor for a stateful query over the same input (see `pipeline`)



def read_topics(spark, topics: list[str]):
    """Every message of the topics from the start: the key as text, its value's JSON fields, its order."""
    from benchmarks.engine_data import KAFKA

    raw = (
        spark.readStream.format("kafka").option("kafka.bootstrap.servers", KAFKA)
        .option("subscribe", ",".join(topics)).option("startingOffsets", "earliest").load()
    )  # fmt: skip
    index = "CASE topic " + " ".join(f"WHEN '{t}' THEN {i}" for i, t in enumerate(topics)) + " END"
    return raw.selectExpr(
        "CAST(key AS STRING) AS k", f"{index} AS src", "offset", "value IS NULL AS gone",
        "get_json_object(CAST(value AS STRING), '$.accountId') AS accountId",
        "get_json_object(CAST(value AS STRING), '$.favoriteColor') AS favoriteColor",
        "get_json_object(CAST(value AS STRING), '$.favoriteCheese') AS favoriteCheese",
    )  # fmt: skip


def _latest(frames: Iterator[pd.DataFrame]) -> pd.DataFrame:
    """A key's messages of the micro-batch in the order they were written (one partition holds a key), and per
    input only the last one counts."""
    rows = pd.concat(list(frames), ignore_index=True).sort_values("offset", kind="stable")
    return rows.groupby("src", sort=False).tail(1)


def count_processor():  # noqa: ANN201 - a StatefulProcessor class, imported where Spark's Python is
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class UserAccount(StatefulProcessor):
        """A user's account, kept; a micro-batch's change of it as -1 for the old account and +1 for the new."""

        def init(self, handle) -> None:  # noqa: ANN001
            self.account = handle.getValueState("account", "accountId STRING")

        def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:  # noqa: ANN001, N802
            last = _latest(rows).iloc[-1]
            new = None if last["gone"] else last["accountId"]
            old = self.account.get()[0] if self.account.exists() else None
            if new == old:
                return
            if new is None:
                self.account.clear()
            else:
                self.account.update((new,))
            out = [(a, w) for a, w in ((old, -1), (new, 1)) if a is not None]
            yield pd.DataFrame({"accountId": [a for a, _ in out], "w": [w for _, w in out]})

    return UserAccount


def join_processor():  # noqa: ANN201
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class UserRow(StatefulProcessor):
        """A user's row of each input (account, colour, cheese), kept; the joined row after the micro-batch, or a
        tombstone when there is no user (LEFT JOIN from users)."""

        def init(self, handle) -> None:  # noqa: ANN001
            self.row = handle.getValueState(
                "row", "hasUser BOOLEAN, accountId STRING, favoriteColor STRING, favoriteCheese STRING")

        def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:  # noqa: ANN001, N802
            has_user, account, color, cheese = self.row.get() if self.row.exists() else (False, None, None, None)
            for _, r in _latest(rows).iterrows():  # at most one row per input
                if r["src"] == 0:
                    has_user, account = not r["gone"], None if r["gone"] else r["accountId"]
                elif r["src"] == 1:
                    color = None if r["gone"] else r["favoriteColor"]
                else:
                    cheese = None if r["gone"] else r["favoriteCheese"]
            if has_user or color is not None or cheese is not None:
                self.row.update((has_user, account, color, cheese))
            else:
                self.row.clear()
            yield pd.DataFrame({"userUid": [key[0]], "hasUser": [has_user], "accountId": [account],
                                "favoriteColor": [color], "favoriteCheese": [cheese]})

    return UserRow


def pipeline(spark, name: str, topics: list[str]):
    """(the rows to write to Kafka: key and value, NULL for a tombstone; the query's output mode)."""
    from pyspark.sql import functions as F

    rows = read_topics(spark, topics)
    if name == FLOOR:
        # The messages per account, every message counted and none retracted: the user count's shape (Kafka in,
        # a keyed aggregation in RocksDB, Kafka out) without its semantics and without Python. What Spark's
        # micro-batches cost at the least on this machine for a stateful query; checked against the same count
        # recomputed from the topic (engine_data.verify, pipeline `count-messages`).
        counts = rows.where("NOT gone").groupBy("accountId").count()
        return counts.selectExpr(
            "accountId AS key", "to_json(named_struct('accountId', accountId, 'userCount', count)) AS value"), "update"
    if name == "count":
        changes = rows.groupBy("k").transformWithStateInPandas(
            statefulProcessor=count_processor()(), outputStructType="accountId STRING, w INT",
            outputMode="Update", timeMode="None")
        counts = changes.groupBy("accountId").agg(F.sum("w").alias("userCount"))
        return counts.selectExpr(
            "accountId AS key",
            "IF(userCount = 0, CAST(NULL AS STRING), to_json(named_struct('accountId', accountId, 'userCount', userCount))) AS value",
        ), "update"  # fmt: skip
    joined = rows.groupBy("k").transformWithStateInPandas(
        statefulProcessor=join_processor()(),
        outputStructType="userUid STRING, hasUser BOOLEAN, accountId STRING, favoriteColor STRING, favoriteCheese STRING",
        outputMode="Update", timeMode="None")  # fmt: skip
    return joined.selectExpr(
        "userUid AS key",
        "IF(hasUser, to_json(named_struct('accountId', accountId, 'userUid', userUid, 'favoriteColor', favoriteColor, "
        "'favoriteCheese', favoriteCheese)), CAST(NULL AS STRING)) AS value",
    ), "update"  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", choices=(*PIPELINES, FLOOR), required=True)
    parser.add_argument("--topics", required=True, help="the input topics, users first (join: then colours, cheeses)")
    parser.add_argument("--sink", required=True)
    parser.add_argument("--work", required=True, type=Path, help="a fresh directory: Spark's log and the checkpoint")
    parser.add_argument("--trigger-ms", type=int, default=0,
                        help="the micro-batch interval (0, Spark's default: the next batch starts when input waits)")
    args = parser.parse_args(argv)

    from benchmarks.engine_data import KAFKA
    from shell.engine.spark import SparkRuntime

    args.work.mkdir(parents=True, exist_ok=True)
    spark = SparkRuntime("local[*]", {}, args.work / "spark.log", app_name="bench-engine-pyspark").get()
    frame, mode = pipeline(spark, args.pipeline, args.topics.split(","))
    query = (
        frame.writeStream.format("kafka").option("kafka.bootstrap.servers", KAFKA).option("topic", args.sink)
        .option("checkpointLocation", str(args.work / "checkpoint")).outputMode(mode)
        .trigger(processingTime=f"{args.trigger_ms} milliseconds").start()
    )  # fmt: skip
    say("submitted")
    stopping = stop_requested()
    reported: set[tuple[int, str]] = set()  # an idle query reports the next batch's id too, with no input: by time
    try:
        while not stopping.wait(0.25):
            for p in query.recentProgress:
                if (p["batchId"], p["timestamp"]) not in reported:
                    reported.add((p["batchId"], p["timestamp"]))
                    say("batch", id=p["batchId"], rows=p["numInputRows"], ms=p["durationMs"].get("triggerExecution", 0))
            if not query.isActive:
                error = query.exception()
                say("failed", status="FAILED" if error else "FINISHED", error=str(error)[:500] if error else None)
                break
    finally:
        if query.isActive:
            query.stop()
        spark.stop()
    say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
