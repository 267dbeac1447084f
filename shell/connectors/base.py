"""What every connector declares and provides, so that the rest of the shell never asks which one it has.

A connector declares its options (name, type, default, allowed values, secret or not) as data; the registry
validates a table's WITH clause against that declaration at CREATE TABLE time, and secrets are redacted from the
same declaration. At run time a connector turns a table into a streaming DataFrame (source) and writes one micro-batch at a time
(sink). Sinks are batch writers on purpose: a job drives them from `foreachBatch`, `INSERT ... VALUES` calls them
once, and the changelog engine hands them the changes it computed per batch, all through the same code.
Nothing here runs per row in Python.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol, TextIO

from shell.catalog.model import TableDef
from shell.changes import InputKind
from shell.errors import OptionError
from shell.options import OptionSpec

if TYPE_CHECKING:  # pyspark is imported lazily: the prompt must not wait for it
    from pyspark.sql import DataFrame, SparkSession

END_OF_INPUT = "__end_of_input"  # BOOLEAN column: true on the row a bounded source adds after its last one
APPEND = InputKind.APPEND  # every message is an inserted row
UPSERT = InputKind.UPSERT  # a message is the new version of its key's row; a null value deletes it


@dataclass
class ConnectorContext:
    """What a connector may use at run time besides the table itself."""

    spark: "SparkSession"
    work_dir: Path  # a directory owned by this query or job
    errors_dir: Path | None = None  # where records that do not decode are kept, one folder per table
    print_stream: TextIO = field(default_factory=lambda: sys.stderr)


@dataclass
class SourceFrame:
    """A table opened for reading: the streaming DataFrame (physical and metadata columns) and whether it ends.

    `dead_letters`, when set, is a frame of the records that did not decode (raw bytes, position, reason),
    which the engine writes aside next to the query, to `dead_letter_path`. `bad_count`, when set, names an
    observed metric of the frame: its number of such records per micro-batch (engine/batch_dead_letters.py).

    `END_OF_INPUT`, when the frame has it, marks one extra row that a bounded source adds after its last row:
    the engine gives it the largest event time, so the watermark passes every pending window (Flink's end of
    input), and removes it before the query sees it.
    """

    frame: "DataFrame"
    bounded: bool
    dead_letters: "DataFrame | None" = None
    dead_letter_path: str | None = None
    bad_count: str | None = None


class Lookup(Protocol):
    """The static side of a lookup join, open while its query runs."""

    frame: "DataFrame"

    def after_batch(self) -> None:
        """Called after every micro-batch of the query (a cache may expire)."""

    def close(self) -> None:
        """The query ended: let go of what the lookup holds (a cached copy)."""


class Connector:
    """Base class; subclasses set `name`, `options` and override what they support."""

    name: ClassVar[str]
    options: ClassVar[tuple[OptionSpec, ...]] = ()
    changelog_mode: ClassVar[str] = APPEND
    is_source: ClassVar[bool] = True
    is_sink: ClassVar[bool] = True
    # write_batch reads an append-only batch (what a stateless job writes) in one Spark action over every row: the
    # job then counts the batch's bad records on the way instead of caching the batch (engine/path_parts.py, PerBatch)
    writes_in_one_pass: ClassVar[bool] = False
    has_formats: ClassVar[bool] = False  # carries bytes: accepts the format options ('json.*', 'value.json.*', ...)
    # can be the static side of a lookup join (`JOIN t FOR SYSTEM_TIME AS OF o.proc_time`): see `lookup`
    has_lookup: ClassVar[bool] = False

    def check(self, table: TableDef) -> None:
        """Connector-specific checks beyond the option declarations (raise OptionError)."""

    def is_bounded(self, table: TableDef) -> bool:
        return False

    def require_broker(self, table: TableDef) -> None:
        """Raise ExecutionError unless the table's broker answers (connectors that have one: kafka, pulsar and
        their upsert kinds); a quick check before a job is started, so an unreachable broker fails the statement
        at once instead of the job's first batch after a long retry."""

    def source(self, ctx: ConnectorContext, table: TableDef) -> SourceFrame:
        raise OptionError(f"connector '{self.name}' cannot be read from", hint="use it only as an INSERT target")

    def lookup(self, ctx: ConnectorContext, table: TableDef) -> "Lookup":
        """The table as the static side of a lookup join (connectors with `has_lookup`): a batch DataFrame of
        its physical columns that Spark joins every micro-batch with, and what to do after each micro-batch."""
        raise OptionError(f"connector '{self.name}' cannot be looked up")

    # -- reading again by offset range (a stateful job's bad records: engine/batch_dead_letters.py) -------------

    def range_topics(self, table: TableDef) -> frozenset[str] | None:
        """The topics the table's streaming offsets name, when `read_range` can read it again; else None."""
        return None

    def offset_topics(self, offset: str) -> frozenset[str]:
        """The topics an offset of this connector's streaming source (its JSON, as in Spark's offset log) names."""
        return frozenset()

    def read_range(self, ctx: ConnectorContext, table: TableDef, start: str, end: str) -> "DataFrame":
        """The table's decoded records from offset `start` to offset `end` (a micro-batch's range: what Spark
        read between the two), as a batch DataFrame with the columns `source` gives (bad records included)."""
        raise OptionError(f"connector '{self.name}' cannot read a table by offset range")

    def write_batch(self, ctx: ConnectorContext, table: TableDef, batch: "DataFrame", batch_id: int) -> None:
        """Write one batch of rows (the table's persisted columns, plus `__op` for changelogs).

        `batch_id` increases by one per micro-batch and repeats when Spark replays a batch after a failure, so
        a sink that can be idempotent uses it.
        """
        raise OptionError(f"connector '{self.name}' cannot be written to", hint="use it only in FROM")

    def writes_upserts(self, table: TableDef) -> bool:
        """Whether `write_batch` takes a table's changes by key (+I/+U as upserts, -D as deletes), so an updating
        query may write into it."""
        return self.changelog_mode == UPSERT

    def accepts_changes(self, table: TableDef) -> bool:
        """Whether the table can take a result that changes (updates and deletes): it takes changes by key
        (`writes_upserts`), or its format carries each row's kind (debezium-json)."""
        if self.writes_upserts(table):
            return True
        if not self.has_formats:
            return False
        from shell.formats.registry import format_options

        value = format_options(table.options, "value")
        return value is not None and value[0].produces_changelog

    def option(self, table: TableDef, key: str) -> str | None:
        """The table's value for `key`, or the declared default."""
        if key in table.options:
            return table.options[key]
        spec = next((s for s in self.options if s.key == key), None)
        return spec.default if spec else None
