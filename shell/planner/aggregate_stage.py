"""Aggregates computed in a keyed stage: MIN, MAX, COUNT DISTINCT and the rest over one input keyed by its GROUP
BY columns, each touched group's old and new row out (`Aggregation`, planner/stages.py).

Why it exists: COUNT, SUM and AVG of weighted rows are Spark's own aggregation over the weights; MIN, MAX and
DISTINCT need every row of a group, and an aggregate whose result is read again (a nested aggregate, a subquery
another stage reads) needs its old rows back. Both are planned here.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from shell.planner.model import RETRACT, UPSERT_INPUT, UPSERTS, WEIGHT, ChangelogPlan, Sources
from shell.planner.sql_parts import aggregate_argument, unsupported
from shell.planner.stage_columns import resolve_columns
from shell.planner.stage_inputs import stage_inputs, unqualified
from shell.planner.stages import Aggregation
from shell.planner.weighted_aggregates import as_upserts
from shell.sql.translate import to_spark_expression, to_spark_sql


STAGE_FUNCTIONS = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}


def plan_stage_aggregate(inner: exp.Select, outer: exp.Select | None, sources: Sources, stage_view: str) -> ChangelogPlan:
    inputs = stage_inputs(inner, sources, stage_view)
    if len(inputs) != 1:
        raise unsupported("MIN, MAX, COUNT DISTINCT or a nested aggregate over a join")
    query = inner.copy()
    where = query.args.get("where")
    query.set("where", None)
    (source,), columns = resolve_columns(query, inputs)
    groups = query.args["group"].expressions if query.args.get("group") else []
    if any(columns.of(g) is None for g in groups):
        raise unsupported("GROUP BY expressions in the stage", hint="group by columns of the table")
    key = [columns.of(g)[1] for g in groups]
    if source.kind == UPSERT_INPUT and not {k.lower() for k in key} <= {c.lower() for c in source.table.primary_key}:
        raise unsupported(f"MIN, MAX, COUNT DISTINCT or a nested aggregate over upsert table '{source.table.name}'"
                           " grouped by columns outside its primary key",
                           hint="read the changes as debezium-json, or use COUNT/SUM/AVG")
    functions: list[tuple[str, str, str | None, bool]] = []

    def stage_call(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.AggFunc):
            return node
        kind = STAGE_FUNCTIONS.get(type(node))
        if kind is None:
            raise unsupported(f"{node.sql_name().upper()} on the changelog path", hint="COUNT, SUM, AVG, MIN and MAX are")
        argument, distinct = aggregate_argument(node), isinstance(node.this, exp.Distinct)
        if argument is None or isinstance(argument, (exp.Star, exp.Literal)) and kind == "count":
            column = None
        elif columns.of(argument) is not None:
            column = argument.name
        else:
            raise unsupported(f"'{node.sql()}' in the stage", hint="aggregate plain columns")
        name = f"__agg{len(functions)}"
        functions.append((name, kind, column, distinct))
        return exp.column(name, quoted=True)

    items = [e.transform(stage_call) for e in query.expressions]
    having = query.args.get("having")
    rest = exp.select(*items, exp.column(WEIGHT)).from_(stage_view)
    if having is not None:
        rest = rest.where(having.this.transform(stage_call))
    staged = replace(source, key=key,
                     filter=to_spark_expression(unqualified(where.this)) if where is not None else None)
    aggregation = Aggregation([g.name for g in groups], functions)
    if outer is None:
        return ChangelogPlan([staged], aggregation, stage_view, to_spark_sql(rest), RETRACT)
    query = outer.copy()
    alias = outer.args["from_"].this.alias_or_name
    query.set("from_", exp.From(this=rest.subquery(alias or None)))
    if query.args.get("group") or any(e.find(exp.AggFunc) for e in query.expressions):
        output_key, hidden = as_upserts(query, True)
        return ChangelogPlan([staged], aggregation, stage_view, to_spark_sql(query), UPSERTS, output_key,
                             hidden_key=hidden)
    query.set("expressions", [*query.expressions, exp.column(WEIGHT)])
    return ChangelogPlan([staged], aggregation, stage_view, to_spark_sql(query), RETRACT)
