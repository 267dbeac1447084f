"""Opening a catalog table as a streaming DataFrame: the connector's rows, then computed columns and watermark.

Connectors only know physical and metadata columns; the DDL's computed columns and `WATERMARK FOR` are the same
for every connector, so they are applied here, once, with Spark expressions (no Python per row).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from shell.catalog.model import ColumnKind, TableDef
from shell.connectors.base import END_OF_INPUT, ConnectorContext, Lookup, SourceFrame
from shell.connectors.registry import connector_for, resolved
from shell.engine import bad_records
from shell.engine.batch_dead_letters import counted
from shell.errors import OptionError, UnsupportedFeatureError
from shell.connectors.topic import ORDER
from shell.formats.base import ERROR_COLUMN, OP_COLUMN
from shell.sql.translate import expression_to_spark, watermark_delay

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def open_table(ctx: ConnectorContext, table: TableDef, watermark: bool = True) -> SourceFrame:
    """The table's rows with every declared column, in declaration order, with its watermark applied.

    A changelog table's rows keep their kind in `__op` (and an upsert table's their order in `__order`). The
    changelog path opens tables without the watermark: its results are not event-time windows, and a watermark
    would make Spark drop rows it thinks late. Its bad records are counted per micro-batch when the job can keep
    them itself (engine/batch_dead_letters.py).
    """
    frame, bounded = decoded(ctx, table)
    frame, bad_count = counted(frame, table)
    source = finished(ctx, table, frame, bounded, watermark)
    source.bad_count = bad_count
    return source


def open_lookup(ctx: ConnectorContext, table: TableDef) -> "Lookup | None":
    """The table as the static side of a lookup join, when its connector can be looked up; else None (the table
    is then read as a stream, as any other: a regular join with its rows)."""
    table = resolved(table)
    connector = connector_for(table)
    return connector.lookup(ctx, table) if connector.has_lookup else None


def decoded(ctx: ConnectorContext, table: TableDef) -> tuple["DataFrame", bool]:
    """The connector's decoded rows, bad records and their bookkeeping columns included, and whether the input
    ends (then followed by an end-of-input row). `finished` makes them the table's rows."""
    table = resolved(table)
    connector = connector_for(table)
    if not connector.is_source:
        raise OptionError(
            f"table '{table.name}' uses connector '{connector.name}', which cannot be read from",
            hint="use it as the target of INSERT INTO",
        )
    source = connector.source(ctx, table)
    frame = source.frame
    if source.bounded and END_OF_INPUT not in frame.columns:
        frame = with_end_marker(ctx, frame)
    return frame, source.bounded


def finished(ctx: ConnectorContext, table: TableDef, frame: "DataFrame", bounded: bool, watermark: bool) -> SourceFrame:
    """Bad records set aside, computed columns added, the watermark applied and the end-of-input row dropped.
    Also works on one micro-batch of `decoded` rows (a static frame), without the watermark."""
    table = resolved(table)
    dead = None
    if ERROR_COLUMN in frame.columns:
        frame, dead = bad_records.split(frame, table)
    computed = [c for c in table.columns if c.kind == ColumnKind.COMPUTED]
    if computed:
        frame = frame.selectExpr("*", *(f"{expression_to_spark(c.expression)} AS `{c.name}`" for c in computed))
    ends = END_OF_INPUT in frame.columns
    kinds = [c for c in (OP_COLUMN, ORDER) if c in frame.columns]
    frame = frame.select(*(f"`{c.name}`" for c in table.columns), *kinds, *([END_OF_INPUT] if ends else []))
    if table.watermark is not None and watermark:
        delay = watermark_delay(table.watermark)
        if delay is None:
            raise UnsupportedFeatureError(
                f"watermark expression '{table.watermark.expression}' of table '{table.name}' is not supported",
                hint=f"use WATERMARK FOR {table.watermark.column} AS {table.watermark.column} - INTERVAL 'n' SECOND",
            )
        if ends:
            frame = with_end_of_input_time(frame, table.watermark.column)
        frame = frame.withWatermark(table.watermark.column, delay)
    if ends:
        frame = without_end_of_input(frame, table.watermark.column if table.watermark and watermark else None)
    if table.watermark is not None and watermark:
        frame = watermark_barrier(frame, table.name)
    path = str(bad_records.dead_letter_dir(table, ctx.errors_dir or ctx.work_dir / "errors")) if dead is not None else None
    return SourceFrame(frame, bounded, dead, path)


def with_end_marker(ctx: ConnectorContext, frame: "DataFrame") -> "DataFrame":
    """A bounded source's rows followed by one end-of-input row (all NULL), from a one-row stream read in the
    same micro-batch: so that, as in Flink, the end of the input fires every pending window."""
    from pyspark.sql import functions as F

    marker = (
        ctx.spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1).option("numPartitions", 1).load()
        .select(*(F.lit(None).cast(f.dataType).alias(f.name) for f in frame.schema.fields), F.lit(True).alias(END_OF_INPUT))
    )  # fmt: skip
    return frame.withColumn(END_OF_INPUT, F.lit(False)).unionByName(marker)


LAST_EVENT_TIME = "TIMESTAMP '9999-12-31 00:00:00'"  # far enough that every window ends before it


def with_end_of_input_time(frame: "DataFrame", column: str) -> "DataFrame":
    """The end-of-input row carries the largest event time, so the watermark moves past every pending window."""
    from pyspark.sql import functions as F

    at_end = F.when(F.col(END_OF_INPUT), F.expr(LAST_EVENT_TIME)).otherwise(F.col(f"`{column}`"))
    return frame.withColumn(column, at_end)


def watermark_barrier(frame: "DataFrame", table: str) -> "DataFrame":
    """The table's rows, behind a node Spark's optimizer pushes no filter through.

    Why: Spark moves a filter below the watermark unless it mentions the event-time column, so a view's `WHERE
    event_type = 2` over a table would hide every other row from the watermark, and the end-of-input row (all NULL)
    too: over such a view the last windows of a bounded input never fired. In Flink the watermark comes from every
    row of the source, whatever the query filters later. An observed metric (a count, never read) is a node the
    optimizer does not push filters through, and costs one counter per partition."""
    from pyspark.sql import functions as F

    name = f"__watermark_{''.join(c if c.isalnum() else '_' for c in table)}_{uuid.uuid4().hex[:8]}"
    return frame.observe(name, F.count(F.lit(1)).alias("rows"))


def without_end_of_input(frame: "DataFrame", event_time: str | None) -> "DataFrame":
    """Drop the end-of-input row after the watermark has seen it.

    The filter mentions the event-time column on purpose: Spark pushes filters below the watermark unless they
    reference its column, and the watermark must see the row.
    """
    from pyspark.sql import functions as F

    keep = ~F.col(END_OF_INPUT)
    if event_time is not None:
        keep = F.when(F.col(f"`{event_time}`").isNull(), F.lit(True)).otherwise(keep)
    return frame.where(keep).drop(END_OF_INPUT)
