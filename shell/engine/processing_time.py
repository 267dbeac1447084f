"""A processing-time window's input: a relation's rows with their PROCTIME() column as Spark's event time.

Why it exists: Spark closes windows by an event-time watermark only. PROCTIME() is Spark's current_timestamp(): in
a streaming query, the time the micro-batch started, the same for every row of the batch. Made the event time with
a watermark of no delay, that column's watermark is the start of the last micro-batch that had a row, and no row is
ever late (a later batch starts later). A window then fires in the first micro-batch after one that started past
its end. For that to happen while no rows arrive, a heartbeat row (Spark's rate-micro-batch source, one row per
micro-batch, so a micro-batch per trigger interval) is unioned in before the watermark and dropped after it; the
observed metric between them (sources.watermark_barrier) keeps Spark from pushing the query's filters below the
watermark, which would drop the heartbeat before it is seen. No Python runs per row.

A bounded input's query stops once its input is read (trigger availableNow; the heartbeat's source ends with it),
so windows still open then are dropped, not fired: as in Flink, which does not fire processing-time windows that
are open when a bounded input ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.engine.sources import watermark_barrier
from shell.errors import CatalogError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

HEARTBEAT = "__heartbeat"  # BOOLEAN column: true on the heartbeat's rows


def processing_time_input(spark: "SparkSession", rows: "DataFrame", column: str) -> "DataFrame":
    """`rows` with `column` (a PROCTIME() column) as the event time, watermarked, moved along by a heartbeat."""
    from pyspark.sql import functions as F

    name = next((f.name for f in rows.schema.fields if f.name.lower() == column.lower()), None)
    if name is None:
        raise CatalogError(f"the processing-time window's input has no column '{column}'")
    beat = (
        spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1).option("numPartitions", 1).load()
        .select(*(F.current_timestamp().alias(f.name) if f.name == name else F.lit(None).cast(f.dataType).alias(f.name)
                  for f in rows.schema.fields), F.lit(True).alias(HEARTBEAT))
    )  # fmt: skip
    watermarked = rows.withColumn(HEARTBEAT, F.lit(False)).unionByName(beat).withWatermark(f"`{name}`", "0 seconds")
    return watermark_barrier(watermarked, f"proctime_{name}").where(~F.col(HEARTBEAT)).drop(HEARTBEAT)
