"""Opening a catalog table as a streaming DataFrame: the connector's rows, then computed columns and watermark.

Connectors only know physical and metadata columns; the DDL's computed columns and `WATERMARK FOR` are the same
for every connector, so they are applied here, once, with Spark expressions (no Python per row).
"""

from __future__ import annotations

from shell.catalog.model import ColumnKind, TableDef
from shell.connectors.base import ConnectorContext, SourceFrame
from shell.connectors.registry import connector_for, resolved
from shell.engine import bad_records
from shell.errors import OptionError, UnsupportedFeatureError
from shell.formats.base import ERROR_COLUMN
from shell.sql.translate import expression_to_spark, watermark_delay


def open_table(ctx: ConnectorContext, table: TableDef) -> SourceFrame:
    """The table's rows with every declared column, in declaration order, with its watermark applied."""
    table = resolved(table)
    connector = connector_for(table)
    if not connector.is_source:
        raise OptionError(
            f"table '{table.name}' uses connector '{connector.name}', which cannot be read from",
            hint="use it as the target of INSERT INTO",
        )
    source = connector.source(ctx, table)
    frame = source.frame
    dead = None
    if ERROR_COLUMN in frame.columns:
        frame, dead = bad_records.split(frame, table)
    computed = [c for c in table.columns if c.kind == ColumnKind.COMPUTED]
    if computed:
        frame = frame.selectExpr("*", *(f"{expression_to_spark(c.expression)} AS `{c.name}`" for c in computed))
    frame = frame.select(*(f"`{c.name}`" for c in table.columns))
    if table.watermark is not None:
        delay = watermark_delay(table.watermark)
        if delay is None:
            raise UnsupportedFeatureError(
                f"watermark expression '{table.watermark.expression}' of table '{table.name}' is not supported",
                hint=f"use WATERMARK FOR {table.watermark.column} AS {table.watermark.column} - INTERVAL 'n' SECOND",
            )
        frame = frame.withWatermark(table.watermark.column, delay)
    path = str(bad_records.dead_letter_dir(table, ctx.errors_dir or ctx.work_dir / "errors")) if dead is not None else None
    return SourceFrame(frame, source.bounded, dead, path)

