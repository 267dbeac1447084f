"""`jdbc` tables with Flink's options: a PostgreSQL table read once (bounded), looked up, or written by key.

Why it exists: dimension data and results often live in a database. Flink SQL users write
`'connector' = 'jdbc', 'url' = 'jdbc:postgresql://...', 'table-name' = '...'` and expect three things, each
built here on Spark's own JDBC reader and writer (the PostgreSQL driver is in the "spark" JVM bundle), so the
executors move the rows and nothing runs per row in Python:

* a scan (`SELECT ... FROM t`): the table's rows when the query starts, then the input ends (a bounded table,
  as in Flink). The rows come from Spark's JDBC reader (`scan.partition.*` splits the read into parallel ranges,
  `scan.fetch-size` sets the driver's fetch size), joined in the first micro-batch of a one-row stream, so a
  streaming job reads them like any bounded source; a restarted job does not read them again.
* the dimension of a lookup join (`JOIN t FOR SYSTEM_TIME AS OF o.proc_time`): jdbc_lookup.py.
* a sink: with a PRIMARY KEY, upserts and deletes by key (an updating query can write into it); without one,
  appended rows (jdbc_sink.py).

Every query or job of a jdbc table first connects once from the driver and reads the table's columns, so a
wrong URL, a server that is down, a wrong password or a missing table is one line naming the table
(jdbc_client.py), not a failed Spark job.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors import jdbc_client, jdbc_sink
from shell.connectors.base import APPEND, Connector, ConnectorContext, OptionSpec, SourceFrame
from shell.connectors.jdbc_client import POSTGRES_DRIVER, Endpoint
from shell.connectors.jdbc_lookup import CachePolicy, LookupTable
from shell.errors import OptionError
from shell.sql.types import flink_type_to_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PARTITION_KEYS = ("scan.partition.column", "scan.partition.num", "scan.partition.lower-bound",
                  "scan.partition.upper-bound")  # fmt: skip
NOT_CACHING = "with the whole table cached, a missing key stays missing until the copy expires"


class JdbcConnector(Connector):
    """A PostgreSQL table: read once (bounded), looked up by a join FOR SYSTEM_TIME AS OF a PROCTIME() column
    (cached with `lookup.cache`), or written (upserts and deletes by PRIMARY KEY, else appended rows)."""

    name = "jdbc"
    changelog_mode = APPEND
    has_lookup = True
    options = (
        OptionSpec("url", required=True, description="the database: 'jdbc:postgresql://host:5432/database'"),
        OptionSpec("table-name", required=True,
                   description="the table in the database, as PostgreSQL names it ('orders', 'shop.orders')"),
        OptionSpec("username", description="user to connect as"),
        OptionSpec("password", secret=True, description="the user's password"),
        OptionSpec("driver", default=POSTGRES_DRIVER,
                   description="JDBC driver class; the shell ships PostgreSQL's (org.postgresql:postgresql)"),
        OptionSpec("connection.max-retry-timeout", "duration", default="60s",
                   description="accepted for Flink compatibility; connecting times out after 10 s"),
        OptionSpec("scan.partition.column", description="a numeric, date or timestamp column that splits the scan "
                   "into `scan.partition.num` ranges read in parallel"),
        OptionSpec("scan.partition.num", "int", description="how many ranges the scan is split into"),
        OptionSpec("scan.partition.lower-bound", "int", description="the smallest value of the first range "
                   "(rows below it are still read, by the first range)"),
        OptionSpec("scan.partition.upper-bound", "int", description="the largest value of the last range "
                   "(rows above it are still read, by the last range)"),
        OptionSpec("scan.fetch-size", "int", default="0",
                   description="rows fetched from the database per round trip while reading (0: the driver's default)"),
        OptionSpec("scan.auto-commit", "bool", default="true",
                   description="accepted for Flink compatibility; no effect (Spark sets it for fetching in chunks)"),
        OptionSpec("lookup.cache", "enum", default="NONE", allowed=("NONE", "PARTIAL"),
                   description="NONE: a lookup join reads the table every micro-batch; PARTIAL: it keeps a copy "
                   "of the whole table in Spark's cache (see lookup.partial-cache.*)"),
        OptionSpec("lookup.partial-cache.max-rows", "int",
                   description="with lookup.cache PARTIAL (required): the most rows cached; a larger table is read "
                   "every micro-batch instead"),
        OptionSpec("lookup.partial-cache.expire-after-write", "duration",
                   description="the cached copy is read again once it is this old (checked after each micro-batch)"),
        OptionSpec("lookup.partial-cache.expire-after-access", "duration",
                   description="as expire-after-write (the copy is read whole, so both mean its age)"),
        OptionSpec("lookup.partial-cache.cache-missing-key", "bool", default="true",
                   description=f"accepted for Flink compatibility; {NOT_CACHING}"),
        OptionSpec("lookup.cache.max-rows", "int",
                   description="Flink's older name: with lookup.cache.ttl, caches the table as "
                   "lookup.partial-cache.max-rows does"),
        OptionSpec("lookup.cache.ttl", "duration",
                   description="Flink's older name: with lookup.cache.max-rows, the age at which the cached copy "
                   "is read again"),
        OptionSpec("lookup.cache.caching-missing-key", "bool", default="true",
                   description=f"Flink's older name; accepted, {NOT_CACHING}"),
        OptionSpec("lookup.max-retries", "int", default="3",
                   description="tries again to count the table when its cached copy is refreshed"),
        OptionSpec("sink.buffer-flush.max-rows", "int", default="100",
                   description="rows per batch of INSERT statements the executors send (Spark's JDBC batchsize)"),
        OptionSpec("sink.buffer-flush.interval", "duration", default="1s",
                   description="accepted for Flink compatibility; no effect (each micro-batch is written at once)"),
        OptionSpec("sink.max-retries", "int", default="3",
                   description="how often a micro-batch whose write failed is written again before the job fails"),
        OptionSpec("sink.parallelism", "int",
                   description="the most connections that write a micro-batch at once (default: one per partition)"),
    )  # fmt: skip

    # -- validation ------------------------------------------------------------------------------------------

    def check(self, table: TableDef) -> None:
        options = table.options
        jdbc_client.check_url(options["url"], table.name)
        given = [k for k in PARTITION_KEYS if k in options]
        if given and len(given) != len(PARTITION_KEYS):
            missing = [k for k in PARTITION_KEYS if k not in options]
            raise OptionError(f"table '{table.name}': a partitioned scan needs all of the scan.partition.* "
                              f"options; missing {', '.join(missing)}")  # fmt: skip
        if given:
            if table.column(options["scan.partition.column"]) is None:
                raise OptionError(f"table '{table.name}': 'scan.partition.column' names no column of the table "
                                  f"('{options['scan.partition.column']}')")
            if int(options["scan.partition.num"]) < 1:
                raise OptionError("'scan.partition.num' must be at least 1")
            if int(options["scan.partition.lower-bound"]) > int(options["scan.partition.upper-bound"]):
                raise OptionError("'scan.partition.lower-bound' is above 'scan.partition.upper-bound'")
        if options.get("lookup.cache", "NONE") == "PARTIAL" and "lookup.partial-cache.max-rows" not in options:
            raise OptionError(f"table '{table.name}': 'lookup.cache' = 'PARTIAL' needs 'lookup.partial-cache.max-rows'")
        if ("lookup.cache.max-rows" in options) != ("lookup.cache.ttl" in options):
            raise OptionError(f"table '{table.name}': the older lookup cache options go together: set both "
                              "'lookup.cache.max-rows' and 'lookup.cache.ttl' (or use 'lookup.cache' = 'PARTIAL')")
        least = {"sink.buffer-flush.max-rows": 1, "sink.parallelism": 1, "lookup.partial-cache.max-rows": 1,
                 "lookup.cache.max-rows": 1}
        for key in ("scan.fetch-size", "sink.max-retries", "lookup.max-retries", *least):
            if key in options and int(options[key]) < least.get(key, 0):
                raise OptionError(f"option '{key}' of table '{table.name}' must be at least {least.get(key, 0)}, "
                                  f"got '{options[key]}'")
        for column in table.metadata_columns():
            raise OptionError(f"column '{column.name}': the jdbc connector has no metadata columns",
                              hint="declare it as a physical column of the PostgreSQL table")
        CachePolicy.of(table)

    def is_bounded(self, table: TableDef) -> bool:
        return True

    # -- reading ---------------------------------------------------------------------------------------------

    def rows(self, ctx: ConnectorContext, table: TableDef) -> "DataFrame":
        """The table's physical columns as a batch DataFrame from Spark's JDBC reader, cast to the declared
        types (checked first: jdbc_client.existing_columns)."""
        from pyspark.sql import functions as F

        existing = jdbc_client.existing_columns(ctx.spark, table)
        names = jdbc_sink.matched_columns(table, existing)
        endpoint = Endpoint.of(table)
        options = {"url": endpoint.url, "dbtable": table.options["table-name"], "driver": endpoint.driver,
                   **endpoint.properties()}  # fmt: skip
        fetch = int(self.option(table, "scan.fetch-size") or 0)
        if fetch > 0:
            options["fetchsize"] = str(fetch)
        if "scan.partition.column" in table.options:
            options.update(partitionColumn=names.get(table.column(table.options["scan.partition.column"]).name,
                                                     table.options["scan.partition.column"]),
                           numPartitions=table.options["scan.partition.num"],
                           lowerBound=table.options["scan.partition.lower-bound"],
                           upperBound=table.options["scan.partition.upper-bound"])  # fmt: skip
        frame = ctx.spark.read.format("jdbc").options(**options).load()
        return frame.select(*(F.col(f"`{names[c.name]}`").cast(flink_type_to_spark(c.data_type)).alias(c.name)
                              for c in table.physical_columns()))  # fmt: skip

    def source(self, ctx: ConnectorContext, table: TableDef) -> SourceFrame:
        """The rows, in the first micro-batch of a one-row stream (a stream-static join: the executors read them)."""
        from pyspark.sql import functions as F

        rows = self.rows(ctx, table)
        first = (
            ctx.spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1).option("numPartitions", 1).load()
            .where(F.col("value") == F.lit(0))  # batch 0 only: a restarted job does not read the table again
            .select(F.lit(1).alias("__jdbc_once"))
        )  # fmt: skip
        return SourceFrame(F.broadcast(first).crossJoin(rows).drop("__jdbc_once"), bounded=True)

    def lookup(self, ctx: ConnectorContext, table: TableDef) -> LookupTable:
        """The static side of a lookup join (jdbc_lookup.py), cached when the table's options say so."""
        from pyspark.sql import functions as F

        retries = int(self.option(table, "lookup.max-retries") or 3)
        policy, rows = CachePolicy.of(table), self.rows(ctx, table)
        if policy is not None:
            # Spark finds a cached frame by its plan: a column of its own keeps this cache from serving (and its
            # expiry from dropping) another read of the same database table, in this query or another one.
            tag = uuid.uuid4().hex
            rows = rows.withColumn(f"__lookup_{tag}", F.lit(tag))
        return LookupTable(ctx.spark, table, rows, policy, retries).open()

    # -- writing ---------------------------------------------------------------------------------------------

    def writes_upserts(self, table: TableDef) -> bool:
        return bool(table.primary_key)

    def write_batch(self, ctx: ConnectorContext, table: TableDef, batch: "DataFrame", batch_id: int) -> None:
        parallelism = self.option(table, "sink.parallelism")
        jdbc_sink.write_batch(ctx.spark, table, batch, batch_id, int(self.option(table, "sink.buffer-flush.max-rows")),
                              int(parallelism) if parallelism else None, int(self.option(table, "sink.max-retries")))
