"""The Plan: everything the engine needs to run a query, decided before Spark sees it, and shown by EXPLAIN."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef

if TYPE_CHECKING:
    from shell.planner.first_rows import FirstRows
    from shell.planner.model import ChangelogPlan

NATIVE = "native"  # one Spark streaming query, Spark's own operators and state store
CHANGELOG = "changelog"  # retractions needed: upsert/changelog inputs, unwindowed aggregates, regular joins

APPEND_ONLY = "append-only"
UPDATING = "updating"


@dataclass(frozen=True)
class ProcessingTimeInput:
    """The rows of `relation` (a source or view of the plan) that a processing-time window reads, registered as
    `view` with the processing-time `column` as Spark's event time (planner/processing_time.py)."""

    view: str
    relation: str
    column: str


@dataclass(frozen=True)
class Plan:
    """A planned query.

    `spark_sql` is the query in Spark SQL over temporary views: `source_views` maps each source table's
    lower-cased name to its view's name; `views` are the catalog views the query uses, in dependency order,
    as (view name, Spark SQL) pairs. View names are unique to the plan, so plans never collide.
    """

    sources: list[TableDef]
    spark_sql: str
    path: str
    reason: str
    bounded: bool
    output: str = APPEND_ONLY
    views: list[tuple[str, str]] = field(default_factory=list)
    source_views: dict[str, str] = field(default_factory=dict)
    changelog: "ChangelogPlan | None" = None  # the changelog path's stages (path == CHANGELOG)
    stateless: bool = False  # one table, rows filtered and projected only: each micro-batch stands alone
    processing_time: tuple[ProcessingTimeInput, ...] = ()  # the inputs of windows over PROCTIME() columns
    lookups: tuple[str, ...] = ()  # lower-cased names of tables joined FOR SYSTEM_TIME AS OF a PROCTIME() column
    first_rows: tuple["FirstRows", ...] = ()  # views of keep-first deduplications on time (planner/first_rows.py)

    def describe(self) -> list[str]:
        """The plan in words, for EXPLAIN."""
        lines = [f"path: {self.path} ({self.reason})"]
        for table in self.sources:
            lines.append(f"source: {table.name} via {table.connector}")
        if self.changelog is not None:
            lines.extend(self.changelog.describe())
            lines.append("operators and their changelog modes ([I] inserts, [I,D] retractions, [UA,D] upserts):")
            lines.extend(f"  {line}" for line in self.changelog.operator_tree())
        for window_input in self.processing_time:
            lines.append(f"processing-time windows over {window_input.column}: they close by the wall clock (a"
                         " micro-batch per trigger interval moves the watermark); open ones are dropped when a"
                         " bounded input ends")
        for first in self.first_rows:
            lines.append(f"deduplication: the first row of each {', '.join(first.key)} by {first.time} leaves once"
                         " the watermark reaches it, later rows of the key are ignored (append-only, on the JVM)")
        for name in self.lookups:
            lines.append(f"lookup join: {name} is read as of each row's processing time (a table that can be looked"
                         " up is the static side, read again or from its cache every micro-batch)")
        lines.append(f"output: {self.output}")
        lines.append("input: bounded (the query ends when its input ends)" if self.bounded else "input: unbounded")
        return lines
