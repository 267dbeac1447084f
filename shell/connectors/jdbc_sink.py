"""Writing one micro-batch into a PostgreSQL table: staged by Spark's JDBC writer, merged by one transaction.

Why it exists: Flink's JDBC sink upserts by primary key (`INSERT ... ON CONFLICT (key) DO UPDATE`, `DELETE` for a
deletion) and appends without one. Spark's JDBC writer only appends. So a batch goes in two steps:

1. the executors write the batch (every change: its kind in `streamshell_op`, its place in the batch in
   `streamshell_seq`) into a staging table beside the target, with Spark's JDBC writer (`batchsize` is
   `sink.buffer-flush.max-rows`, at most `sink.parallelism` connections); the staging table is emptied first;
2. the driver runs one transaction over a short-lived connection (jdbc_client.py: SQL text only, no rows):
   with a primary key, the last change of each key in the batch wins (`DISTINCT ON (key) ... ORDER BY seq DESC`),
   deleted keys are deleted and the others upserted; without one, the inserted rows are appended; then the
   staging table is emptied, and everything commits together.

A batch lands whole or not at all. Spark replays the last batch after a crash: the staging table is filled again
with the same changes and merged again, which leaves an upserted table as it was (idempotent); an appended batch
whose transaction committed just before the crash is appended twice (at-least-once). A failed batch is tried
again up to `sink.max-retries` times. The staging table (`<table>_streamshell_<writer>`, UNLOGGED, the target's
column types) is one per writing job and stays, empty, between batches; a one-off `INSERT ... VALUES` drops its
own.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.changes import RowKind
from shell.connectors import jdbc_client
from shell.connectors.jdbc_client import Endpoint
from shell.errors import CatalogError, StreamshellError
from shell.formats.base import OP_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

OP, SEQ = "streamshell_op", "streamshell_seq"  # the staging table's bookkeeping columns
QUERY_ID_PROPERTY = "sql.streaming.queryId"  # set by Spark on the thread that runs a streaming micro-batch
MAX_NAME = 63  # PostgreSQL's identifier limit (NAMEDATALEN - 1)
RETRY_PAUSE_S = 1.0  # times the attempt number, as Flink's JDBC sink waits between tries


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Merge:
    """The SQL of one batch's merge: the target (as written in 'table-name'), its columns as the database spells
    them, the key among them (empty: append) and the staging table's name."""

    target: str
    columns: list[str]
    key: list[str]
    staging: str

    def create_staging(self) -> str:
        cols = ", ".join(quoted(c) for c in self.columns)
        return (f"CREATE UNLOGGED TABLE IF NOT EXISTS {self.staging} AS SELECT {cols}, ''::text AS {OP}, "
                f"0::bigint AS {SEQ} FROM {self.target} WITH NO DATA")

    def clear_staging(self) -> str:
        return f"TRUNCATE {self.staging}"

    def drop_staging(self) -> str:
        return f"DROP TABLE IF EXISTS {self.staging}"

    def statements(self) -> list[str]:
        """The merge, in the order it runs in its transaction (the staging table is emptied last)."""
        cols = ", ".join(quoted(c) for c in self.columns)
        if not self.key:
            return [f"INSERT INTO {self.target} ({cols}) SELECT {cols} FROM {self.staging} "
                    f"WHERE {OP} <> '{RowKind.DELETE}' AND {OP} <> '{RowKind.UPDATE_BEFORE}' ORDER BY {SEQ}",
                    self.clear_staging()]  # fmt: skip
        keys = ", ".join(quoted(k) for k in self.key)
        latest = (f"(SELECT DISTINCT ON ({keys}) * FROM {self.staging} WHERE {OP} <> '{RowKind.UPDATE_BEFORE}' "
                  f"ORDER BY {keys}, {SEQ} DESC)")
        same_key = " AND ".join(f"t.{quoted(k)} = s.{quoted(k)}" for k in self.key)
        others = [c for c in self.columns if c not in self.key]
        on_conflict = (f"DO UPDATE SET {', '.join(f'{quoted(c)} = EXCLUDED.{quoted(c)}' for c in others)}" if others
                       else "DO NOTHING")
        return [
            f"DELETE FROM {self.target} AS t USING {latest} AS s WHERE {same_key} AND s.{OP} = '{RowKind.DELETE}'",
            f"INSERT INTO {self.target} ({cols}) SELECT {cols} FROM {latest} AS s WHERE s.{OP} <> '{RowKind.DELETE}' "
            f"ON CONFLICT ({keys}) {on_conflict}",
            self.clear_staging(),
        ]


def staging_name(target: str, writer: str) -> str:
    """`<target>_streamshell_<8 hex of the writer>`, in the target's schema, within PostgreSQL's 63 characters."""
    schema, _, name = target.rpartition(".")
    tag = hashlib.sha256(writer.encode()).hexdigest()[:8]
    suffix = f"_streamshell_{tag}"
    bare = name.strip('"').lower()[: MAX_NAME - len(suffix)] + suffix
    return f"{schema}.{bare}" if schema else bare


def matched_columns(table: TableDef, existing: list[str]) -> dict[str, str]:
    """Each persisted column of the table with the database's spelling of it (names match ignoring case)."""
    by_lower = {c.lower(): c for c in existing}
    found = {}
    for column in table.persisted_columns():
        real = by_lower.get(column.name.lower())
        if real is None:
            raise CatalogError(
                f"jdbc table '{table.name}': column '{column.name}' is not in PostgreSQL table "
                f"'{table.options['table-name']}' (its columns: {', '.join(existing)})",
                hint="declare the columns the PostgreSQL table has",
            )
        found[column.name] = real
    return found


def write_batch(spark, table: TableDef, batch: "DataFrame", batch_id: int, batch_rows: int,  # noqa: ANN001
                parallelism: int | None, retries: int) -> None:
    """Write one batch of the table's persisted columns (with `__op` for changes) as the module docstring says."""
    from pyspark.sql import functions as F

    endpoint = Endpoint.of(table)
    query_id = spark.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
    writer = query_id or uuid.uuid4().hex
    target = table.options["table-name"]
    names = matched_columns(table, jdbc_client.existing_columns(spark, table))
    key = [names[c.name] for k in table.primary_key for c in table.persisted_columns() if c.name.lower() == k.lower()]
    merge = Merge(target, list(names.values()), key, staging_name(target, writer))
    op = F.col(OP_COLUMN) if OP_COLUMN in batch.columns else F.lit(RowKind.INSERT)
    staged = batch.select(*(F.col(f"`{c}`").alias(real) for c, real in names.items()), op.alias(OP),
                          F.monotonically_increasing_id().alias(SEQ))  # fmt: skip
    options = {"url": endpoint.url, "dbtable": merge.staging, "driver": endpoint.driver,
               "batchsize": str(batch_rows), **endpoint.properties()}  # fmt: skip
    if parallelism:
        options["numPartitions"] = str(parallelism)
    for attempt in range(retries + 1):
        try:
            with jdbc_client.connection(spark, endpoint, table.name) as conn:
                jdbc_client.run_in_transaction(conn, [merge.create_staging(), merge.clear_staging()])
            staged.write.format("jdbc").options(**options).mode("append").save()
            with jdbc_client.connection(spark, endpoint, table.name) as conn:
                jdbc_client.run_in_transaction(conn, merge.statements() + ([] if query_id else [merge.drop_staging()]))
            return
        except Exception as exc:  # noqa: BLE001 - tried again, then explained in one line
            if attempt >= retries:
                if isinstance(exc, StreamshellError):
                    raise
                raise jdbc_client.explained(exc, table.name, endpoint, target) from None
            time.sleep(RETRY_PAUSE_S * (attempt + 1))
