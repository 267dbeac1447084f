"""The changelog path's plan model: the stages a query becomes, their inputs, and what they compute.

Why it exists: the planner's rules (planner/changelog.py and the rewrites beside it) build these, the engine
(engine/changelog.py) runs them, EXPLAIN draws them (planner/plan_tree.py). Plain dataclasses, no logic but
their own description, so every layer can import them without importing another's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shell.catalog.model import TableDef
from shell.changes import InputKind, ResultKind
from shell.planner.stages import KeyedJoin, Stage

RETRACT, UPSERTS = ResultKind.RETRACT, ResultKind.UPSERTS  # what the plan's result rows are
APPEND, CHANGELOG, UPSERT_INPUT = InputKind.APPEND, InputKind.CHANGELOG, InputKind.UPSERT  # what an input's rows are
SEMI, ANTI = "semi", "anti"  # joins of an IN / EXISTS and a NOT EXISTS subquery (planner/rules/in_exists.py)
# a scalar subquery's joined aggregate (its alias starts so), and the constant key an uncorrelated one is joined on
# (planner/rules/scalar_subqueries.py): neither is a column `*` shows
SCALAR_ALIAS, CONSTANT_KEY = "__sq", "__one"

WEIGHT, COUNT, HAVING, ROWNUM = "__w", "__count", "__having", "__rownum"
GROUP_KEY = "__group_key_"  # + n: a GROUP BY expression the result does not show, kept to tell its rows apart


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
    join: str = ""  # "" for the first input; inner, left, right, full, or semi/anti (planner/rules/in_exists.py)
    joins_with: int = 0  # the earlier input whose key this one's key is equated with
    # Spark SQL over the table's columns: only these rows enter the stage (an upsert table's new row that fails it
    # is a delete of its key: the key leaves the filtered table)
    filter: str | None = None
    derived: tuple[str, tuple[tuple[TableDef, str], ...]] | None = None  # a FROM subquery: (Spark SQL, its tables and views)
    # a FROM subquery over changelogs: its own plan (a keyed stage of its own), whose weighted rows are this input's
    plan: "ChangelogPlan | None" = None
    window_results: bool = False  # a derived input that aggregates windows: Spark's window aggregation runs in it

    def stage_column(self, column: str) -> str:
        """The input column's name in the stage's output (and in the rest of the query)."""
        return f"{self.alias}__{column}"

    @property
    def shown(self) -> bool:
        """Whether the query sees this input's columns: not those of an IN or EXISTS subquery's table, nor a scalar
        subquery's aggregate (the query reads its value where the subquery was)."""
        return self.join not in (SEMI, ANTI) and not self.alias.startswith(SCALAR_ALIAS)


@dataclass(frozen=True)
class ChangelogPlan:
    inputs: list[StageInput]
    stage: Stage  # what the stage computes (planner/stages.py): the engine builds it by its class
    stage_view: str  # the view the rest of the query reads
    sql: str  # the rest of the query, Spark SQL over `stage_view`
    output: str  # RETRACT or UPSERTS
    key: list[str] = field(default_factory=list)  # UPSERTS: the output columns that identify a row
    # UPSERTS whose GROUP BY is not all in the output: hidden columns (GROUP_KEY + n) that identify a row instead
    hidden_key: list[str] = field(default_factory=list)
    grows_only: bool = False  # RETRACT whose rows are never taken back (append-only inputs, inner and semi joins)
    # RETRACT whose rest only projects (no WHERE): each output column and the stage column it passes on, or None for
    # an expression (an upsert sink keyed by passed columns can take the stage's changes netted per its key)
    passed_through: tuple[tuple[str, str | None], ...] | None = None

    @property
    def reads_window_results(self) -> bool:
        """Whether a window aggregation that Spark runs feeds a stage or an aggregate of this plan (or below)."""
        return any(i.window_results or (i.plan is not None and i.plan.reads_window_results) for i in self.inputs)

    @property
    def joins_keyed(self) -> bool:
        """Whether a keyed join stage (the one a state TTL applies to) is this plan's stage or one it reads."""
        return type(self.stage) is KeyedJoin or any(i.plan is not None and i.plan.joins_keyed for i in self.inputs)

    @property
    def keyed(self) -> bool:
        """Whether the keyed stage runs (an upsert input, a join, an aggregate, ...) or weights come from the rows."""
        return self.stage.keyed

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
        lines.extend(self.stage.describe(self))
        if self.output == UPSERTS:
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
