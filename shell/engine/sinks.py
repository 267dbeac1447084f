"""Writing into a table: a query's columns fitted to the target's, INSERT ... VALUES, and which targets take a
result that changes.

Why it exists: an INSERT job (engine/query.py, engine/path_parts.py) and INSERT ... VALUES write through the
same connector contract; the checks of a target (a sink at all, its columns, whether it accepts changes) are
said once, here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors.registry import connector_for, resolved
from shell.engine.run_context import RunContext
from shell.engine.spark_errors import from_spark
from shell.errors import CatalogError, OptionError
from shell.formats.base import OP_COLUMN
from shell.planner.plan import APPEND_ONLY, Plan
from shell.sql.types import flink_type_to_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def conform_to_target(frame: "DataFrame", target: TableDef, columns: list[str] | None) -> "DataFrame":
    """Map the query's columns onto the target's writable columns, by position, cast to the target's types.

    With an explicit column list (`INSERT INTO t (a, b) SELECT ...`) the query fills those columns in order and
    the rest are NULL, as in Flink.
    """
    has_op = OP_COLUMN in frame.columns  # a changelog's row kinds travel with the rows
    if has_op:
        frame = frame.select(*(f"`{c}`" for c in frame.columns if c != OP_COLUMN), OP_COLUMN)
    writable = target.persisted_columns()
    chosen = filled_columns(target, columns)
    given = len(frame.columns) - has_op
    if given != len(chosen):
        raise CatalogError(
            f"INSERT INTO {target.name} gives {given} columns but expects {len(chosen)}"
            f" ({', '.join(c.name for c in chosen)})",
            hint="list the target columns, INSERT INTO t (a, b) SELECT ..., or select one value per column",
        )
    source_of = {c.name.lower(): src for c, src in zip(chosen, frame.columns)}
    projection = []
    for column in writable:
        spark_type = flink_type_to_spark(column.data_type)
        src = source_of.get(column.name.lower())
        value = f"`{src}`" if src is not None else "NULL"
        projection.append(f"CAST({value} AS {spark_type}) AS `{column.name}`")
    return frame.selectExpr(*projection, *([OP_COLUMN] if has_op else []))


def filled_columns(target: TableDef, columns: list[str] | None) -> list:
    """The target's columns an INSERT fills, in the order of the query's columns: its explicit column list, or
    every writable column."""
    writable = target.persisted_columns()
    if columns is None:
        return writable
    by_name = {c.name.lower(): c for c in writable}
    chosen = []
    for name in columns:
        column = by_name.get(name.lower())
        if column is None:
            raise CatalogError(f"table '{target.name}' has no writable column '{name}'")
        chosen.append(column)
    return chosen


def write_values(
    run: RunContext, target: TableDef, columns: list[str] | None, rows: list[list], kind: str | None = None
) -> int:
    """`INSERT INTO t VALUES (...)`: the rows written once through the target's batch writer; returns the count.

    With `kind` (a row kind, '-D' for DELETE FROM) the rows are changes of that kind: the upsert sink writes a
    `-D` row as its key's tombstone.
    """
    from shell.sql.translate import to_spark_expression

    connector = sink_connector(target)
    session = run.spark
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        raise CatalogError("every row of VALUES must have the same number of values")
    values = ", ".join("(" + ", ".join(to_spark_expression(v) for v in row) + ")" for row in rows)
    names = ", ".join(f"c{i}" for i in range(width))
    try:
        op = f", '{kind}' AS `{OP_COLUMN}`" if kind else ""
        frame = session.sql(f"SELECT *{op} FROM VALUES {values} AS v({names})")
        # One task writes the rows in their order, as Flink's VALUES source (parallelism 1) does: a key's versions
        # must reach its partition in the order they were written.
        batch = conform_to_target(frame.coalesce(1), target, columns)
        connector.write_batch(run.connector_context(session), resolved(target), batch, 0)
    except Exception as exc:  # noqa: BLE001
        raise from_spark(exc) from None
    return len(rows)


def refuse_append_only_target(plan: Plan, target: TableDef, connector) -> None:  # noqa: ANN001
    """An INSERT of a result that changes into a table that cannot take changes is refused, with the reason."""
    if plan.output != APPEND_ONLY and not connector.accepts_changes(target):
        raise OptionError(
            f"INSERT INTO {target.name}: the query's result is updated as its input changes ({plan.reason}),"
            f" but '{connector.name}' table '{target.name}' is append-only",
            hint="write into an upsert table (upsert-kafka, upsert-pulsar with a PRIMARY KEY) or a changelog format"
            " (debezium-json)",
        )


def sink_connector(target: TableDef):  # noqa: ANN202 - a Connector
    """The target's connector, which must be a sink."""
    connector = connector_for(target)
    if not connector.is_sink:
        raise OptionError(
            f"table '{target.name}' uses connector '{connector.name}', which cannot be written to",
            hint="INSERT INTO a table whose connector is a sink (kafka, pulsar, filesystem, print, blackhole)",
        )
    return connector


