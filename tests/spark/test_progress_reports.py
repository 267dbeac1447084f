"""The progress reader on a real query: across looks, `unread` hands each of Spark's reports over once and in
order, none missing (several batches between two looks included), and `latest` is Spark's last report."""

from __future__ import annotations

import json

import pytest

from shell.engine.progress_reports import ProgressReader

pytestmark = pytest.mark.spark


def test_each_report_is_read_once_and_the_latest_is_sparks(spark_runtime, tmp_path):
    spark = spark_runtime.get()
    folder = tmp_path / "rows"
    folder.mkdir()
    rows = spark.readStream.schema("k STRING").option("maxFilesPerTrigger", 1).json(str(folder))
    query = rows.writeStream.format("memory").queryName("progress_reports_out") \
        .option("checkpointLocation", str(tmp_path / "checkpoint")).start()
    reader = ProgressReader()
    read = []
    try:
        for n in range(5):
            (folder / f"{n:02}.json").write_text(json.dumps({"k": str(n)}) + "\n")
            query.processAllAvailable()
            if n != 2:  # batches 2 and 3 complete between two looks
                read += reader.unread(query)
                read += reader.unread(query)  # a second look at once finds nothing new (or an idle trigger's)
        (folder / "99.json").write_text("\n".join(json.dumps({"k": k}) for k in "xyz") + "\n")
        query.processAllAvailable()
        assert reader.latest(query) == json.loads(query._jsq.lastProgress().json())
        read += reader.unread(query)  # the report `latest` read is unread still
        spark_reports = [p if isinstance(p, dict) else json.loads(p.json) for p in query.recentProgress]
    finally:
        query.stop()
    assert [(r["batchId"], r["timestamp"]) for r in read] == [(r["batchId"], r["timestamp"]) for r in spark_reports]
    assert sum(r["numInputRows"] for r in read) == 8
