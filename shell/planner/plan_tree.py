"""The changelog plan as a tree of operators with their changelog modes, in the shape of Flink's
`EXPLAIN CHANGELOG_MODE` (for EXPLAIN).

Why it exists: a user who knows Flink reads a plan as a tree whose every operator says which kinds of row it emits:
`[I]` insert-only, `[I,UB,UA,D]` retract, `[UA,D]` upserts by key. The changelog path's plan is such a tree (keyed
stages whose inputs may be stages of their own), and this module draws it; planner/changelog.py stays free of
presentation.

    Calc(changelogMode=[I,D])
    +- Join(joinType=[LeftOuterJoin], key=[o__item = id], changelogMode=[I,D])
       :- Subquery(alias=[__s1], fields=[o__oid, u__name, o__qty], changelogMode=[I,D])
       :  +- Calc(changelogMode=[I,D])
       :     +- Join(joinType=[InnerJoin], key=[uid = uid], changelogMode=[I,D])
       :        :- TableSourceScan(table=[orders], fields=[oid, item, qty], changelogMode=[I,UB,UA,D])
       :        +- TableSourceScan(table=[users], fields=[name], changelogMode=[I,UB,UA,D])
       +- TableSourceScan(table=[items], fields=[title], changelogMode=[I,UB,UA,D])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shell.changes import InputKind, ResultKind

if TYPE_CHECKING:
    from shell.planner.model import ChangelogPlan, StageInput

INSERT_ONLY, RETRACT_ROWS, UPSERTS, FULL = "[I]", "[I,D]", "[I,UA,D]", "[I,UB,UA,D]"
SCAN_MODES = {InputKind.APPEND: INSERT_ONLY, InputKind.CHANGELOG: FULL, InputKind.UPSERT: "[UA,D]"}
JOIN_TYPES = {"inner": "InnerJoin", "left": "LeftOuterJoin", "right": "RightOuterJoin", "full": "FullOuterJoin",
              "semi": "LeftSemiJoin", "anti": "LeftAntiJoin"}


@dataclass
class Node:
    name: str
    details: list[str]
    mode: str
    children: list["Node"] = field(default_factory=list)

    def line(self) -> str:
        return f"{self.name}({', '.join([*self.details, f'changelogMode={self.mode}'])})"


def tree_lines(plan: "ChangelogPlan") -> list[str]:
    """The plan's operators, one a line, children below their parent with Flink's `+-` and `:-` branches."""
    lines: list[str] = []
    _draw(_result(plan), "", "", lines)
    return lines


def _draw(node: Node, first: str, rest: str, lines: list[str]) -> None:
    lines.append(first + node.line())
    for n, child in enumerate(node.children):
        last = n == len(node.children) - 1
        _draw(child, rest + ("+- " if last else ":- "), rest + ("   " if last else ":  "), lines)


def _result(plan: "ChangelogPlan") -> Node:
    stage = _stage(plan)
    if plan.output == ResultKind.UPSERTS:
        key = ", ".join(plan.key) or ("<hidden group key>" if plan.hidden_key else "<one row>")
        return Node("GroupAggregate", [f"upsertKey=[{key}]"], UPSERTS, [stage])
    return Node("Calc", [], INSERT_ONLY if plan.grows_only else RETRACT_ROWS, [stage])


def _stage(plan: "ChangelogPlan") -> Node:
    inputs = [_input(plan, i) for i in plan.inputs]
    return plan.stage.operator(plan, inputs, INSERT_ONLY if plan.grows_only else RETRACT_ROWS)


def join_node(plan: "ChangelogPlan", inputs: list[Node], mode: str) -> Node:
    """The inputs joined in order, each with the earlier input whose key it equates (a left-deep tree)."""
    node = inputs[0]
    for source, child in zip(plan.inputs[1:], inputs[1:]):
        key = f"key=[{', '.join(plan.inputs[source.joins_with].key)} = {', '.join(source.key)}]"
        node = Node("Join", [f"joinType=[{JOIN_TYPES.get(source.join, source.join)}]", key], mode, [node, child])
    return node


def _input(plan: "ChangelogPlan", source: "StageInput") -> Node:
    fields = f"fields=[{', '.join(source.columns)}]"
    if source.plan is not None:
        return Node("Subquery", [f"alias=[{source.alias}]", fields], INSERT_ONLY if source.plan.grows_only else
                    RETRACT_ROWS, [_result(source.plan)])
    if source.derived is not None:
        return Node("Calc", [f"alias=[{source.alias}]", fields], INSERT_ONLY)
    return Node("TableSourceScan", [f"table=[{source.table.name}]", fields], SCAN_MODES[source.kind])
