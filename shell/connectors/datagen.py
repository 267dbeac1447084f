"""The `datagen` connector: generated rows with Flink's options, computed by Spark from its rate source.

It is the table that needs no broker: the quickstart, demos and benchmarks use it. Every field is a Spark SQL
expression over the rate source's `value` (a row counter) and `timestamp`, so generation costs no Python per row
and is deterministic per row number. With `number-of-rows` (or a sequence field) the table is bounded: it is read
with Spark's `rate-micro-batch` source in one batch, followed by an end-of-input row that lets every pending
window fire (see `SourceFrame`); every row beyond the bound is filtered out, so a restarted job never produces
the rows again. A bounded table that also names its `rows-per-second` gets its rows at that rate, as in Flink,
from datagen_paced.py (without it, all at once: the default rate, 10,000 rows a second, would only slow them).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from shell.catalog.model import Column, TableDef
from shell.connectors.base import END_OF_INPUT, Connector, ConnectorContext, OptionSpec, SourceFrame
from shell.errors import OptionError
from shell.sql.types import flink_type_to_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

INT_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "INTEGER": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
}
FLOAT_TYPES = ("FLOAT", "DOUBLE", "DECIMAL", "NUMERIC", "DEC", "REAL")
STRING_TYPES = ("STRING", "VARCHAR", "CHAR")
TIME_TYPES = ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE")
HASH_BUCKETS = 1_000_000_007  # a prime: pmod(xxhash64(..), p) spreads evenly over [0, p)


def base_type(data_type: str) -> str:
    """'VARCHAR(10)' -> 'VARCHAR', 'TIMESTAMP(3) WITH LOCAL TIME ZONE' -> 'TIMESTAMP_LTZ'."""
    upper = data_type.upper().strip()
    if "LOCAL TIME ZONE" in upper:
        return "TIMESTAMP_LTZ"
    return re.split(r"[\s(<]", upper, maxsplit=1)[0]


class DatagenConnector(Connector):
    """Generated rows, computed by Spark, no broker needed: random values or sequences per column; bounded with
    `number-of-rows` or a sequence column."""

    name = "datagen"
    is_sink = False
    options = (
        OptionSpec("rows-per-second", "int", default="10000",
                   description="rows generated per second; set beside number-of-rows, the bounded table's rows "
                               "come at this rate (unset there, all at once)"),
        OptionSpec("number-of-rows", "int", description="total rows; the table is unbounded without it"),
        OptionSpec("fields.#.kind", "enum", default="random", allowed=("random", "sequence"),
                   description="random values, or a sequence from fields.#.start to fields.#.end"),
        OptionSpec("fields.#.min", "float", description="smallest random value (numbers)"),
        OptionSpec("fields.#.max", "float", description="largest random value (numbers)"),
        OptionSpec("fields.#.max-past", "duration", description="how far back random timestamps reach"),
        OptionSpec("fields.#.length", "int", description="length of random strings and bytes"),
        OptionSpec("fields.#.start", "int", description="first value of a sequence"),
        OptionSpec("fields.#.end", "int", description="last value of a sequence"),
        OptionSpec("fields.#.null-rate", "float", description="fraction of NULLs, 0 to 1"),
    )

    def check(self, table: TableDef) -> None:
        rate = table.options.get("rows-per-second")
        if rate is not None and rate.strip().lstrip("+").isdigit() and int(rate) <= 0:
            raise OptionError(f"option 'rows-per-second' must be a positive integer, got '{rate}'")
        for column in table.physical_columns():
            generated_expression(self, table, column, "value", "timestamp")  # raises on a bad combination

    def row_limit(self, table: TableDef) -> int | None:
        """How many rows the table has, or None when it never ends."""
        limits = []
        if self.option(table, "number-of-rows") is not None:
            limits.append(int(self.option(table, "number-of-rows")))
        for column in table.physical_columns():
            if self.field_option(table, column, "kind") == "sequence":
                start, end = self._sequence_bounds(table, column)
                limits.append(end - start + 1)
        return min(limits) if limits else None

    def is_bounded(self, table: TableDef) -> bool:
        return self.row_limit(table) is not None

    def is_paced(self, table: TableDef) -> bool:
        """A bounded table that names its rate: its rows come at that rate (as in Flink), not all at once."""
        return self.is_bounded(table) and "rows-per-second" in table.options

    def field_option(self, table: TableDef, column: Column, key: str) -> str | None:
        for option_key, value in table.options.items():
            parts = option_key.split(".")
            if len(parts) == 3 and parts[0] == "fields" and parts[1].lower() == column.name.lower() and parts[2] == key:
                return value
        return "random" if key == "kind" else None

    def source(self, ctx: ConnectorContext, table: TableDef) -> SourceFrame:
        from pyspark.sql import functions as F

        limit = self.row_limit(table)
        partitions = str(ctx.spark.sparkContext.defaultParallelism)
        if limit is None:
            rate = self.option(table, "rows-per-second")
            raw = ctx.spark.readStream.format("rate").option("rowsPerSecond", rate).option("numPartitions", partitions)
        elif self.is_paced(table):
            from shell.connectors.datagen_paced import SHORT_NAME, register  # imports pyspark: only when Spark runs

            register(ctx.spark)
            raw = (  # the rows and, as row number `limit`, the end-of-input row, at the table's rate
                ctx.spark.readStream.format(SHORT_NAME)
                .option("rows", str(limit + 1))
                .option("rowsPerSecond", self.option(table, "rows-per-second"))
                .option("numPartitions", partitions)
                .option("startTimestamp", str(start_millis(ctx, table)))
            )
        else:
            raw = (  # one batch: the rows and, as row number `limit`, the end-of-input row
                ctx.spark.readStream.format("rate-micro-batch")
                .option("rowsPerBatch", str(limit + 1))
                .option("numPartitions", partitions)
                .option("startTimestamp", str(start_millis(ctx, table)))  # event times near now, as in Flink
            )
        frame: DataFrame = raw.load()
        columns = [
            F.expr(generated_expression(self, table, c, "value", "timestamp")).alias(c.name)
            for c in table.physical_columns()
        ]
        if limit is None:
            return SourceFrame(frame.select(*columns), bounded=False)
        # Row numbers beyond the end (a restarted job's next batches) are never generated again.
        frame = frame.where(F.col("value") <= F.lit(limit))
        end = (F.col("value") == F.lit(limit)).alias(END_OF_INPUT)
        return SourceFrame(frame.select(*columns, end), bounded=True)

    def _sequence_bounds(self, table: TableDef, column: Column) -> tuple[int, int]:
        start = self.field_option(table, column, "start")
        end = self.field_option(table, column, "end")
        if start is None or end is None:
            raise OptionError(
                f"sequence field '{column.name}' needs 'fields.{column.name}.start' and 'fields.{column.name}.end'"
            )
        if int(end) < int(start):
            raise OptionError(f"sequence field '{column.name}' ends ({end}) before it starts ({start})")
        return int(start), int(end)


START_TIMES = "datagen"  # in a job's directory: the first event time of each bounded datagen table


def start_millis(ctx: ConnectorContext, table: TableDef) -> int:
    """The first event time of a bounded table's rows: now, kept in the job's directory, so that a restarted or
    resumed job builds the same source (Spark refuses a rate source whose start moved after its checkpoint)."""
    marker = ctx.work_dir / START_TIMES / f"{table.name.lower()}.start"
    if marker.exists():
        return int(marker.read_text())
    now = int(time.time() * 1000)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(now))
    return now


def generated_expression(connector: DatagenConnector, table: TableDef, column: Column, row: str, ts: str) -> str:
    """The Spark SQL expression that produces `column` for the row numbered by column `row`."""
    kind = connector.field_option(table, column, "kind")
    spark_type = flink_type_to_spark(column.data_type)
    base = base_type(column.data_type)
    seed = f"xxhash64({row}, '{column.name.lower()}')"
    unit = f"(pmod({seed}, {HASH_BUCKETS}) / {float(HASH_BUCKETS)})"  # uniform in [0, 1)

    def option(key: str) -> str | None:
        return connector.field_option(table, column, key)

    if kind == "sequence":
        if base not in INT_RANGES and base not in FLOAT_TYPES and base not in STRING_TYPES:
            raise OptionError(f"datagen cannot make a sequence of {column.data_type} (field '{column.name}')")
        start, _ = connector._sequence_bounds(table, column)
        expression = f"CAST({start} + {row} AS {spark_type})"
    elif base in INT_RANGES:
        low, high = INT_RANGES[base]
        low = int(float(option("min"))) if option("min") is not None else low
        high = int(float(option("max"))) if option("max") is not None else high
        if high < low:
            raise OptionError(f"field '{column.name}': max ({high}) is below min ({low})")
        if high - low >= 2**62:
            expression = f"CAST({seed} AS {spark_type})"
        else:
            expression = f"CAST({low} + pmod({seed}, {high - low + 1}) AS {spark_type})"
    elif base in FLOAT_TYPES:
        low = float(option("min")) if option("min") is not None else 0.0
        high = float(option("max")) if option("max") is not None else 1000.0
        expression = f"CAST({low} + {unit} * {high - low} AS {spark_type})"
    elif base in STRING_TYPES:
        length = int(option("length") or _declared_length(column.data_type) or 100)
        blocks = max(1, -(-length // 64))
        expression = f"substring(repeat(sha2(CAST({seed} AS STRING), 256), {blocks}), 1, {length})"
    elif base == "BOOLEAN":
        expression = f"(pmod({seed}, 2) = 0)"
    elif base in ("BYTES", "VARBINARY", "BINARY"):
        length = int(option("length") or _declared_length(column.data_type) or 16)
        expression = f"substring(unhex(repeat(sha2(CAST({seed} AS STRING), 256), {max(1, -(-length // 32))})), 1, {length})"
    elif base in TIME_TYPES:
        from shell.units import parse_duration_ms

        past_ms = parse_duration_ms(option("max-past")) if option("max-past") else 0
        back = f"CAST({unit} * {past_ms} AS BIGINT)" if past_ms else "0"
        moment = f"timestamp_millis(unix_millis({ts}) - {back})"
        expression = f"CAST({moment} AS DATE)" if base == "DATE" else moment
    else:
        raise OptionError(
            f"datagen cannot generate type {column.data_type} (field '{column.name}')",
            hint="give the column a computed expression instead, e.g. `tags AS ARRAY['a', 'b']`",
        )
    null_rate = option("null-rate")
    if null_rate is not None and float(null_rate) > 0:
        expression = f"CASE WHEN pmod(xxhash64({row}, '{column.name.lower()}#null'), 1000000) < {int(float(null_rate) * 1_000_000)} THEN NULL ELSE {expression} END"
    return expression


def _declared_length(data_type: str) -> int | None:
    match = re.search(r"\((\d+)\)", data_type)
    return int(match.group(1)) if match else None
