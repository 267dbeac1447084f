"""The changelog path's plan model: the stages a query becomes, their inputs, and what they compute.

Why it exists: the planner's rules (planner/changelog.py and the rewrites beside it) build these, the engine
(engine/changelog.py) runs them, EXPLAIN draws them (planner/plan_tree.py). Plain dataclasses, no logic but
their own description, so every layer can import them without importing another's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shell.catalog.model import TableDef
from shell.changes import InputKind, ResultKind

RETRACT, UPSERT = ResultKind.RETRACT, ResultKind.UPSERTS  # what the plan's result rows are
APPEND, CHANGELOG, UPSERT_INPUT = InputKind.APPEND, InputKind.CHANGELOG, InputKind.UPSERT  # what an input's rows are
SEMI, ANTI = "semi", "anti"  # joins of an IN / EXISTS and a NOT EXISTS subquery (planner/subqueries.py)

WEIGHT, COUNT, HAVING, ROWNUM = "__w", "__count", "__having", "__rownum"
GROUP_KEY = "__group_key_"  # + n: a GROUP BY expression the result does not show, kept to tell its rows apart
SUBQUERY_JOIN, SUBQUERY_FILTER = "_subquery_join", "_subquery_filter"  # on the Join nodes planner/subqueries.py adds


@dataclass(frozen=True)
class Sources:
    """The tables a query reads, by lower-cased name: their definitions, kinds and temporary views."""

    tables: dict[str, TableDef]
    kinds: dict[str, str]  # APPEND, CHANGELOG or UPSERT_INPUT
    views: dict[str, str] = field(default_factory=dict)  # for FROM subqueries that Spark runs as written


@dataclass(frozen=True)
class StageInput:
    """One table of the query, as the keyed stage sees it."""

    table: TableDef
    alias: str
    kind: str  # APPEND, CHANGELOG (rows carry +I/-U/+U/-D) or UPSERT_INPUT (the latest row per primary key)
    columns: list[str]  # the table's columns the query reads, in table order
    key: list[str] = field(default_factory=list)  # the columns the stage partitions this input by
    join: str = ""  # "" for the first input; inner, left, right, full, or semi/anti (planner/subqueries.py)
    joins_with: int = 0  # the earlier input whose key this one's key is equated with
    # Spark SQL over the table's columns: only these rows enter the stage (an upsert table's new row that fails it
    # is a delete of its key: the key leaves the filtered table)
    filter: str | None = None
    derived: tuple[str, tuple[tuple[TableDef, str], ...]] | None = None  # a FROM subquery: (Spark SQL, its tables and views)
    # a FROM subquery over changelogs: its own plan (a keyed stage of its own), whose weighted rows are this input's
    plan: "ChangelogPlan | None" = None

    def stage_column(self, column: str) -> str:
        """The input column's name in the stage's output (and in the rest of the query)."""
        return f"{self.alias}__{column}"

    @property
    def shown(self) -> bool:
        """Whether the query sees this input's columns: not those of an IN or EXISTS subquery's table."""
        return self.join not in (SEMI, ANTI)


@dataclass(frozen=True)
class Rank:
    """Top-N / deduplication: ROW_NUMBER() OVER (PARTITION BY the input's key ORDER BY `order`) <= `limit`."""

    order: list[tuple[str, bool, bool]]  # (stage column, descending, nulls first)
    limit: int
    # A window Top-N (PARTITION BY window_start, window_end of a window's rows or aggregation): the stage column of
    # the window's end; each window's first rows leave once, when it closes (engine: keyed_stage.step_window_rank)
    window_end: str | None = None
    drop_late: bool = False  # over the window's own rows: rows of a window already closed are late and dropped


@dataclass(frozen=True)
class Aggregation:
    """GROUP BY in the keyed stage (keyed by the group columns): each touched group's aggregates, before and after."""

    group: list[str]  # stage columns
    functions: list[tuple[str, str, str | None, bool]]  # (output column, count|sum|avg|min|max, argument, distinct)


@dataclass(frozen=True)
class Temporal:
    """An event-time temporal join: each row of input 0 meets the version of input 1 valid at its time."""

    left_time: str  # stage column: the time of the left row (FOR SYSTEM_TIME AS OF it)
    right_time: str  # stage column: the versioned table's event time (when a version starts)
    outer: bool  # LEFT JOIN: a left row without a version keeps NULLs


@dataclass(frozen=True)
class Over:
    """An OVER aggregation in event time (engine/over_stage.py): each row of the one input leaves once the
    watermark passes it, with aggregates over the rows of its key (PARTITION BY) up to it."""

    time: str  # stage column: the rowtime the rows are ordered by
    rows: bool  # a ROWS frame (else RANGE)
    preceding: int | None  # ROWS: rows before the current one; RANGE: microseconds; None: UNBOUNDED PRECEDING
    functions: list[tuple[str, str, str | None]]  # (output column, count|sum|avg|min|max, argument stage column)

    def frame(self) -> str:
        start = "UNBOUNDED" if self.preceding is None else \
            str(self.preceding) if self.rows else f"INTERVAL {self.preceding // 1000} ms"
        return f"{'ROWS' if self.rows else 'RANGE'} BETWEEN {start} PRECEDING AND CURRENT ROW"


@dataclass(frozen=True)
class ChangelogPlan:
    inputs: list[StageInput]
    keyed: bool  # whether the keyed stage runs (an upsert input or a join), or weights come from the rows alone
    stage_view: str  # the view the rest of the query reads
    sql: str  # the rest of the query, Spark SQL over `stage_view`
    output: str  # RETRACT or UPSERT
    key: list[str] = field(default_factory=list)  # UPSERT: the output columns that identify a row
    rank: Rank | None = None
    aggregation: Aggregation | None = None
    temporal: Temporal | None = None
    over: Over | None = None
    # UPSERT whose GROUP BY is not all in the output: hidden columns (GROUP_KEY + n) that identify a row instead
    hidden_key: list[str] = field(default_factory=list)
    grows_only: bool = False  # RETRACT whose rows are never taken back (append-only inputs, inner and semi joins)
    union: bool = False  # UNION ALL: the inputs' weighted rows together, no keyed stage

    def describe(self) -> list[str]:
        lines = []
        for i, source in enumerate(self.inputs):
            how = {APPEND: "append-only", CHANGELOG: "changelog", UPSERT_INPUT: "upsert by primary key"}[source.kind]
            other = self.inputs[source.joins_with].alias
            join = {SEMI: f", the IN/EXISTS subquery of {other}: keeps the rows of {other} with a match",
                    ANTI: f", the NOT EXISTS subquery of {other}: keeps the rows of {other} without a match",
                    "": ""}.get(source.join, f", {source.join} join with {other}")
            key = f", keyed by {', '.join(source.key)}" if source.key else ""
            what = "the subquery below" if source.plan is not None else source.table.name
            lines.append(f"stage input {i}: {what} AS {source.alias} ({how}{key}{join}),"
                         f" reads {', '.join(source.columns) or 'no columns'}")
            if source.plan is not None:
                lines.extend(f"  | {line}" for line in source.plan.describe())
        if self.union:
            lines.append("union all: every input's weighted rows, no keyed stage")
        elif self.temporal is not None:
            lines.append(f"keyed stage: event-time temporal join; each row of {self.inputs[0].alias} waits until the"
                         f" watermark passes its time, then meets the version of {self.inputs[1].alias} valid then")
        elif self.over is not None:
            calls = ", ".join(f"{f.upper()}({a or '*'})" for _, f, a in self.over.functions)
            lines.append(f"keyed stage: OVER aggregation; each row waits until the watermark passes its"
                         f" {self.over.time}, then leaves with {calls} over {self.over.frame()}")
        elif self.keyed:
            lines.append("keyed stage: current rows of each input in Spark's state store, by key bucket;"
                         " emits the weighted change of the join per touched key")
        else:
            lines.append("no keyed stage: every input's rows carry their own weight")
        if self.aggregation is not None:
            calls = ", ".join(f"{f.upper()}({'DISTINCT ' if d else ''}{a or '*'})" for _, f, a, d in self.aggregation.functions)
            lines.append(f"grouped in the stage by {', '.join(self.aggregation.group) or 'nothing'}: {calls}")
        if self.rank is not None:
            order = ", ".join(f"{c}{' DESC' if d else ''}" for c, d, _ in self.rank.order)
            of = "each key" if self.inputs[0].key else "all rows (one key)"
            lines.append(f"top-n: the first {self.rank.limit} rows of {of} ordered by {order}, numbered")
        if self.output == UPSERT:
            key = ", ".join(self.key) if self.key else "the GROUP BY (not shown)" if self.hidden_key else \
                "the single result row"
            lines.append(f"rest: weighted aggregation in update mode; output upserts keyed by {key}")
        else:
            lines.append("rest: projection and filter of weighted rows; output retractions (+I/-D)")
        return lines

    def operator_tree(self) -> list[str]:
        """The plan as operators with their changelog modes (Flink's EXPLAIN CHANGELOG_MODE shape)."""
        from shell.planner.plan_tree import tree_lines

        return tree_lines(self)
