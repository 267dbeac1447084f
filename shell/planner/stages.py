"""The kinds of stage a changelog plan runs, one class each: what it computes, how EXPLAIN describes and draws it.

Why it exists: a changelog plan's stage is one of a few kinds (an input's own weighted rows, a UNION ALL, a keyed
join, an aggregation, a Top-N, an event-time temporal join, an OVER aggregation), and three places need to know
which: the plan's description, EXPLAIN's operator tree and the engine that builds it. Each kind is a class here
with its own description and operator, and the engine picks its builder from a table keyed by the class
(engine/changelog.py), so a new kind is one class and one builder, not a branch in three if-chains.

The classes are plain frozen dataclasses importing nothing heavy: the keyed stage's workers receive `Rank` and
`Temporal` pickled inside their spec (engine/keyed_stage.py) and import this module to read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from shell.planner.plan_tree import INSERT_ONLY, RETRACT_ROWS, Node, join_node

if TYPE_CHECKING:
    from shell.planner.model import ChangelogPlan


@dataclass(frozen=True)
class Stage:
    """A kind of stage. `keyed`: whether it keeps rows in Spark's state store by key (the keyed stage runs);
    `waits_for_event_time`: its inputs are read with their watermarks and it emits rows once time passes them, each
    once (its result only grows, whatever its inputs do)."""

    keyed: ClassVar[bool] = True
    waits_for_event_time: ClassVar[bool] = False

    def describe(self, plan: "ChangelogPlan") -> list[str]:
        raise NotImplementedError

    def operator(self, plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
        """EXPLAIN's operator of the stage over its inputs' nodes; `mode` is the changelog mode of a stage whose
        result mode follows its inputs."""
        raise NotImplementedError


KEYED_ROWS = ("keyed stage: current rows of each input in Spark's state store, by key bucket;"
              " emits the weighted change of the join per touched key")  # fmt: skip


@dataclass(frozen=True)
class WeightedRows(Stage):
    """No keyed stage: one input whose rows carry their own weight (+1 an insert, -1 a retraction)."""

    keyed: ClassVar[bool] = False

    def describe(self, plan: "ChangelogPlan") -> list[str]:
        return ["no keyed stage: every input's rows carry their own weight"]

    def operator(self, plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
        return inputs[0]


@dataclass(frozen=True)
class UnionAll(Stage):
    """UNION ALL: every input's weighted rows together, no state."""

    keyed: ClassVar[bool] = False

    def describe(self, plan: "ChangelogPlan") -> list[str]:
        return ["union all: every input's weighted rows, no keyed stage"]

    def operator(self, plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
        return Node("Union", ["all=[true]"], mode, inputs)


@dataclass(frozen=True)
class KeyedJoin(Stage):
    """The current rows of each input by key (an upsert table's latest row per key, a join's both sides): each
    micro-batch emits the weighted change of the join for every key it touched. One input: normalization."""

    def describe(self, plan: "ChangelogPlan") -> list[str]:
        return ["keyed stage: current rows of each input in Spark's state store, by key (on the JVM, unless"
                " 'table.exec.changelog.jvm-stages' is 'false'); emits the weighted change of the join per touched key"]

    def operator(self, plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
        if len(plan.inputs) == 1:
            return Node("ChangelogNormalize", [f"key=[{', '.join(plan.inputs[0].key)}]"], RETRACT_ROWS, inputs)
        return join_node(plan, inputs, mode)


@dataclass(frozen=True)
class Aggregation(Stage):
    """GROUP BY in the keyed stage (keyed by the group columns): each touched group's aggregates, before and after."""

    group: list[str]  # stage columns
    functions: list[tuple[str, str, str | None, bool]]  # (output column, count|sum|avg|min|max, argument, distinct)

    def calls(self) -> str:
        return ", ".join(f"{f.upper()}({'DISTINCT ' if d else ''}{a or '*'})" for _, f, a, d in self.functions)

    def describe(self, plan: "ChangelogPlan") -> list[str]:
        return [KEYED_ROWS, f"grouped in the stage by {', '.join(self.group) or 'nothing'}: {self.calls()}"]

    def operator(self, plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
        return Node("StageAggregate", [f"groupBy=[{', '.join(self.group)}]", f"select=[{self.calls()}]"],
                    RETRACT_ROWS, inputs)  # fmt: skip


@dataclass(frozen=True)
class Rank(Stage):
    """Top-N / deduplication: ROW_NUMBER() OVER (PARTITION BY the input's key ORDER BY `order`) <= `limit`."""

    order: list[tuple[str, bool, bool]]  # (stage column, descending, nulls first)
    limit: int
    # A window Top-N (PARTITION BY window_start, window_end of a window's rows or aggregation): the stage column of
    # the window's end; each window's first rows leave once, when it closes (engine: event_time_steps.step_window_rank)
    window_end: str | None = None
    drop_late: bool = False  # over the window's own rows: rows of a window already closed are late and dropped

    def ordered_by(self) -> str:
        return ", ".join(f"{c}{' DESC' if d else ''}" for c, d, _ in self.order)

    def describe(self, plan: "ChangelogPlan") -> list[str]:
        of = "each key" if plan.inputs[0].key else "all rows (one key)"
        return [KEYED_ROWS, f"top-n: the first {self.limit} rows of {of} ordered by {self.ordered_by()}, numbered"]

    def operator(self, plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
        details = [f"partitionBy=[{', '.join(plan.inputs[0].key)}]", f"orderBy=[{self.ordered_by()}]",
                   f"rankRange=[1..{self.limit}]"]  # fmt: skip
        if self.window_end is not None:  # Flink's WindowRank: each window's rows once, when it closes
            return Node("WindowRank", [*details, f"windowEnd=[{self.window_end}]"], INSERT_ONLY, inputs)
        return Node("Rank", details, RETRACT_ROWS, inputs)


@dataclass(frozen=True)
class Temporal(Stage):
    """An event-time temporal join: each row of input 0 meets the version of input 1 valid at its time."""

    waits_for_event_time: ClassVar[bool] = True
    left_time: str  # stage column: the time of the left row (FOR SYSTEM_TIME AS OF it)
    right_time: str  # stage column: the versioned table's event time (when a version starts)
    outer: bool  # LEFT JOIN: a left row without a version keeps NULLs

    def describe(self, plan: "ChangelogPlan") -> list[str]:
        left, right = plan.inputs[0].alias, plan.inputs[1].alias
        return [f"keyed stage: event-time temporal join; each row of {left} waits until the watermark passes its"
                f" time, then meets the version of {right} valid then"]  # fmt: skip

    def operator(self, plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
        join = "LeftOuterJoin" if self.outer else "InnerJoin"
        return Node("TemporalJoin", [f"joinType=[{join}]", f"key=[{', '.join(plan.inputs[1].key)}]"], INSERT_ONLY,
                    inputs)  # fmt: skip


@dataclass(frozen=True)
class Over(Stage):
    """An OVER aggregation in event time (engine/over_stage.py): each row of the one input leaves once the
    watermark passes it, with aggregates over the rows of its key (PARTITION BY) up to it."""

    waits_for_event_time: ClassVar[bool] = True
    time: str  # stage column: the rowtime the rows are ordered by
    rows: bool  # a ROWS frame (else RANGE)
    preceding: int | None  # ROWS: rows before the current one; RANGE: microseconds; None: UNBOUNDED PRECEDING
    functions: list[tuple[str, str, str | None]]  # (output column, count|sum|avg|min|max, argument stage column)

    def frame(self) -> str:
        start = "UNBOUNDED" if self.preceding is None else \
            str(self.preceding) if self.rows else f"INTERVAL {self.preceding // 1000} ms"
        return f"{'ROWS' if self.rows else 'RANGE'} BETWEEN {start} PRECEDING AND CURRENT ROW"

    def calls(self) -> str:
        return ", ".join(f"{f.upper()}({a or '*'})" for _, f, a in self.functions)

    def describe(self, plan: "ChangelogPlan") -> list[str]:
        return [f"keyed stage: OVER aggregation; each row waits until the watermark passes its {self.time}, then"
                f" leaves with {self.calls()} over {self.frame()}"]  # fmt: skip

    def operator(self, plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
        return Node("OverAggregate", [f"partitionBy=[{', '.join(plan.inputs[0].key)}]", f"orderBy=[{self.time}]",
                                      self.frame(), f"select=[{self.calls()}]"], INSERT_ONLY, inputs)  # fmt: skip
