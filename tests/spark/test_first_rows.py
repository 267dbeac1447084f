"""jvm/stages' FirstRowByTime over several micro-batches: each key's smallest-time row leaves once the watermark
reaches it, a smaller time arriving later replaces a row still waiting, a key's rows after its first has left are
ignored, and a row behind the watermark is late (what one micro-batch of the differential cases cannot show)."""

from __future__ import annotations

import json

import pytest

from shell.engine.first_rows import first_rows_view
from shell.planner.first_rows import FirstRows

pytestmark = pytest.mark.spark

BATCHES = [  # one file, so one micro-batch, each; the watermark is the largest time so far less 5 s
    [("a", "a1", "10:00:10"), ("b", "b1", "10:00:12")],  # the watermark goes to 10:00:07
    [("a", "a0", "10:00:08"),  # smaller than a1, a still waiting (not late): replaces it
     ("c", "c1", "10:01:00")],  # the watermark goes to 10:00:55: a0 and b1 leave
    [("a", "a2", "10:00:56"),  # a's row has left: ignored
     ("d", "d0", "10:00:30"),  # behind the watermark (10:00:55): late, dropped
     ("c", "c0", "10:00:59")],  # smaller than c1, c still waiting: replaces it
    [("z", "z1", "10:05:00")],  # moves the watermark past c0; z waits
    [("z", "z0", "10:04:58")],  # a no-data batch lets timers fire
]


def test_each_keys_first_row_by_time_leaves_once_the_watermark_reaches_it(spark_runtime, tmp_path):
    spark = spark_runtime.get()
    folder = tmp_path / "rows"
    folder.mkdir()
    rows = (spark.readStream.schema("k STRING, v STRING, ts TIMESTAMP").option("maxFilesPerTrigger", 1)
            .json(str(folder)).withWatermark("ts", "5 seconds"))
    rows.createOrReplaceTempView("first_rows_input")
    first = first_rows_view(spark, FirstRows("first_rows_out", "SELECT * FROM first_rows_input", ("k",), "ts"))
    query = first.writeStream.format("memory").queryName("first_rows_result").outputMode("append") \
        .option("checkpointLocation", str(tmp_path / "checkpoint")).start()
    try:
        for n, batch in enumerate(BATCHES):
            lines = [json.dumps({"k": k, "v": v, "ts": f"2024-01-01 {t}"}) for k, v, t in batch]
            (folder / f"{n:02}.json").write_text("\n".join(lines) + "\n")
            query.processAllAvailable()
        emitted = sorted((r.k, r.v) for r in spark.table("first_rows_result").collect())
    finally:
        query.stop()
    assert emitted == [("a", "a0"), ("b", "b1"), ("c", "c0")], "z's row waits: the watermark has not reached it"
