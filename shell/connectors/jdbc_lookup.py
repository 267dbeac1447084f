"""A jdbc table as the dimension of a lookup join: a static frame that Spark joins every micro-batch with.

Why it exists: `JOIN customers FOR SYSTEM_TIME AS OF o.proc_time` means "each row meets the table as it is when
the row is processed". Spark runs it as a stream-static join: the table is a batch DataFrame (Spark's JDBC reader),
planned again for every micro-batch, so without a cache every micro-batch reads the table from PostgreSQL again
(Flink's `lookup.cache` 'NONE': every row sees the table's current rows).

With a cache (`lookup.cache` = 'PARTIAL' and `lookup.partial-cache.max-rows`, or Flink's older
`lookup.cache.max-rows` with `lookup.cache.ttl`), the whole table is kept in Spark's cache (on the executors, as
any cached DataFrame), and micro-batches join with that copy. After each micro-batch the copy is dropped once it
is older than the ttl (`expire-after-write`, or `expire-after-access`, or `lookup.cache.ttl`), and the next
micro-batch reads the table again: rows changed in PostgreSQL show up within the ttl plus a micro-batch. A table
with more rows than the cache's `max-rows` is not cached (read every micro-batch). Nothing of this runs per row.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors import jdbc_client
from shell.connectors.jdbc_client import Endpoint
from shell.units import parse_duration_ms

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CachePolicy:
    """How long a cached copy of the table lives and how many rows it may hold; None: no cache."""

    max_rows: int
    ttl_ms: int | None  # None: kept until the query ends

    @classmethod
    def of(cls, table: TableDef) -> "CachePolicy | None":
        """Flink's options, the current ones first: 'lookup.cache' = 'PARTIAL' with 'lookup.partial-cache.*', or
        the older 'lookup.cache.max-rows' with 'lookup.cache.ttl' (both needed, as in Flink)."""
        options = table.options
        if options.get("lookup.cache", "NONE").upper() == "PARTIAL":
            ttl = options.get("lookup.partial-cache.expire-after-write") or options.get(
                "lookup.partial-cache.expire-after-access")
            return cls(int(options["lookup.partial-cache.max-rows"]), parse_duration_ms(ttl) if ttl else None)
        if "lookup.cache.max-rows" in options and "lookup.cache.ttl" in options:
            return cls(int(options["lookup.cache.max-rows"]), parse_duration_ms(options["lookup.cache.ttl"]))
        return None


@dataclass
class LookupTable:
    """The static frame a lookup join reads, and its cache (when the table has one)."""

    spark: "SparkSession"
    table: TableDef
    frame: "DataFrame"
    policy: CachePolicy | None
    retries: int = 3
    loaded_at: float | None = field(default=None)  # monotonic time the cached copy was declared; None: not cached

    def open(self) -> "LookupTable":
        self._load()
        return self

    def after_batch(self) -> None:
        """Called after each micro-batch: a copy older than the ttl is dropped and the table read again."""
        if self.policy is None or self.policy.ttl_ms is None:
            return
        if self.loaded_at is not None and (time.monotonic() - self.loaded_at) * 1000 < self.policy.ttl_ms:
            return
        self._drop()
        self._load()

    def close(self) -> None:
        self._drop()

    def _load(self) -> None:
        if self.policy is None:
            return
        rows = self._count()
        if rows is not None and rows > self.policy.max_rows:
            log.warning("jdbc table '%s' has %d rows, more than its lookup cache's max-rows (%d): not cached, read "
                        "every micro-batch", self.table.name, rows, self.policy.max_rows)
            self.loaded_at = time.monotonic()  # looked at again after the ttl
            return
        self.frame.persist()  # materialized by the next micro-batch that joins with it
        self.loaded_at = time.monotonic()

    def _drop(self) -> None:
        if self.frame.storageLevel.useMemory or self.frame.storageLevel.useDisk:
            self.frame.unpersist()

    def _count(self) -> int | None:
        """The table's rows, counted by PostgreSQL (one small query); None when it cannot say now."""
        endpoint = Endpoint.of(self.table)
        for attempt in range(self.retries + 1):
            try:
                with jdbc_client.connection(self.spark, endpoint, self.table.name) as conn:
                    [(count,)] = jdbc_client.query(conn, f"SELECT COUNT(*) FROM {self.table.options['table-name']}")
                    return int(count)
            except Exception:  # noqa: BLE001 - the micro-batch's own read reports a lasting failure
                if attempt < self.retries:
                    time.sleep(attempt + 1)
        return None
