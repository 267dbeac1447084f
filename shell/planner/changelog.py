"""The changelog path's planner: a query over rows that change, as a tree of keyed stages and a native rest.

Why it exists: Spark's streaming operators never take a row back, but a query over an upsert topic must (the
seed's user count would count an updated user twice). The changelog path turns every input into a *retract
stream*: rows with a weight, +1 for a row that arrives and -1 for a row that goes. Projections, filters and
linear aggregates (COUNT = SUM of weights, SUM = SUM of weight * value) are then plain Spark SQL over the
weighted rows. What needs the old version of a row is the *keyed stage* (engine/keyed_stage.py): it keeps each
input's current rows in Spark's state store, partitioned by a key, and emits the weighted difference of the
join of its inputs for every key a micro-batch touched. An upsert table needs it (the old row of a key is only
in state); so does a join of changelogs (left-join rows come with NULLs, then update as the right side arrives).

One stage runs this shape:

    SELECT ... FROM t [[LEFT|RIGHT|FULL] JOIN t2 ON t.k = t2.k ...] [WHERE ...] [GROUP BY ...] [HAVING ...]

Every join of a stage equates the same key, and an upsert table is joined on (part of) its primary key, so that
all versions of a row meet in one keyed partition. A query past that is rewritten first
(planner/join_rewrites.py, stage_split.py): the part one stage runs becomes a FROM subquery, planned here as a
stage of its own whose weighted rows are an input of the stage above (`StageInput.plan`, planner/stage_inputs.py).
IN and EXISTS subqueries arrive as semi and anti joins (planner/rules/in_exists.py), and aggregates over weighted rows
are written by planner/weighted_aggregates.py. The other kinds of stage are planned in modules of their own, which
`plan_changelog` hands a query to: a UNION (planner/union_stage.py), an OVER aggregation (over_stage.py), a
Top-N (top_n_stage.py, shapes found by top_n.py) and aggregates that need every row of a group
(aggregate_stage.py). An event-time temporal join (`JOIN v FOR SYSTEM_TIME AS OF t.ts ON t.k = v.pk`) is a
stage waiting for event time (`Temporal`). Anything else is named as unsupported, never run with wrong results.

Output. Without GROUP BY the result is a retract stream (`__w`). With it, the result is an upsert stream keyed
by the GROUP BY columns: each touched group's new row, with `__count` (its number of input rows; 0 means the
group is gone) and `__having` (false means HAVING removes it).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from shell.planner import join_rewrites, rules, unnest_joins
from shell.planner.aggregate_stage import plan_stage_aggregate
from shell.planner.model import ANTI, APPEND, RETRACT, UPSERTS, UPSERT_INPUT, WEIGHT, ChangelogPlan, Sources, StageInput
from shell.planner.over_stage import plan_over
from shell.planner.over_windows import over_calls
from shell.planner.projected_aggregates import projected_arguments
from shell.planner.relations import derivable
from shell.planner.sql_parts import NotAKeyJoin, join_keys, unaliased, unsupported
from shell.planner.stage_columns import StageColumns, resolve_columns
from shell.planner.stage_inputs import keys_only, reading, stage_inputs, stage_types
from shell.planner.stages import KeyedJoin, Temporal, WeightedRows
from shell.planner.top_n import refuse_sorting, top_n_subquery
from shell.planner.top_n_stage import plan_top_n
from shell.planner.union_stage import plan_union
from shell.planner.weighted_aggregates import (
    aggregate_calls, aggregate_subquery, aggregates, aggregates_in_stage, as_upserts, refuse_unweighable_calls,
)
from shell.sql.translate import to_spark_sql


def plan_changelog(select: exp.Expr, sources: Sources, stage_view: str, retract: bool = False) -> ChangelogPlan:
    """The changelog plan of `select` over `sources`; the rest of the query reads the stage as `stage_view`.
    With `retract` (a FROM subquery whose rows another stage reads), the result is always weighted rows: an
    aggregate is computed in a keyed stage, which gives each group's old row back when it changes."""
    select = rules.normalized(select, rules.Context(sources))  # a branch of a UNION, a FROM subquery: theirs too
    if isinstance(select, exp.Union):
        return plan_union(select, sources, stage_view, retract)
    if not isinstance(select, exp.Select):
        raise unsupported(f"{select.key.upper()} over changelog inputs")
    if over_calls(select):
        return plan_over(select, sources, stage_view)
    refuse_sorting(select)
    if select.args.get("with_") or select.find(exp.CTE):
        raise unsupported("WITH over changelog inputs")
    if unnest_joins.unnest_joins(select):
        return unnest_joins.plan_unnest(select, sources, stage_view, plan_changelog)
    nested = aggregate_subquery(select)
    if nested is not None and derivable(nested, sources):
        nested = None  # a window aggregation of append-only rows: Spark runs it as written, its rows only arrive
    if select.args.get("joins") and top_n_subquery(select) is not None:
        raise unsupported("a join (or IN/EXISTS) with the result of a Top-N subquery",
                           hint="INSERT that result into a table, and join the table")
    if top_n_subquery(select) is not None:
        return plan_top_n(select, sources, stage_view)
    if retract and select.args.get("distinct") and not select.args.get("group") and not aggregate_calls(select):
        select = _distinct_as_group_by(select)  # its old rows are needed: the stage's GROUP BY gives them
    split = join_rewrites.split_for_stages(select, sources, stage_view, retract)
    if split is not None:
        return plan_changelog(split, sources, stage_view, retract)
    if nested is not None and not select.args.get("joins") and not nested.args.get("joins"):
        projected = projected_arguments(nested)
        if projected is not None:  # the nested aggregate's expressions first: plan the query again around it
            query = select.copy()
            query.args["from_"].this.set("this", projected)
            return plan_changelog(query, sources, stage_view, retract)
        return plan_stage_aggregate(nested, select, sources, stage_view)
    if aggregates_in_stage(select, sources) or (retract and aggregates(select)):
        projected = projected_arguments(select)
        if projected is not None:
            return plan_changelog(projected, sources, stage_view, retract)
        return plan_stage_aggregate(select, None, sources, stage_view)
    inputs = stage_inputs(select, sources, stage_view)
    query = keys_only(select.copy())
    inputs, columns = resolve_columns(query, inputs)
    _set_keys(query, inputs, columns)
    temporal = _temporal_join(select, inputs)
    if temporal is not None:
        inputs = reading(inputs, {0: temporal[0], 1: temporal[1]})
    # rows are taken back when an input has them taken back, or a join pads with NULLs or keeps rows without a match
    retractions = any(i.kind != APPEND or i.join in ("left", "right", "full", ANTI) for i in inputs)
    if retractions:
        refuse_unweighable_calls(query)
    query.set("from_", exp.From(this=exp.to_table(stage_view)))
    query.set("joins", None)
    if query.args.get("distinct") and not query.args.get("group"):
        query = _distinct_as_group_by(query)
    if query.args.get("group") or any(e.find(exp.AggFunc) for e in query.expressions):
        key, hidden = as_upserts(query, retractions)
        output = UPSERTS
    else:
        if query.args.get("having"):
            raise unsupported("HAVING without GROUP BY or aggregates")
        query.set("expressions", [*query.expressions, exp.column(WEIGHT)])
        output, key, hidden = RETRACT, [], []
    stage = KeyedJoin() if len(inputs) > 1 or inputs[0].kind == UPSERT_INPUT else WeightedRows()
    if temporal is not None:
        if output != RETRACT:
            raise unsupported("GROUP BY over an event-time temporal join",
                               hint="INSERT the joined rows into a table, and aggregate that table")
        stage = Temporal(inputs[0].stage_column(temporal[0]), inputs[1].stage_column(temporal[1]),
                         inputs[1].join == "left")
    if retract and output != RETRACT:
        raise unsupported("SELECT DISTINCT of expressions in a subquery over changelog inputs",
                           hint="select the expressions in a subquery first, then SELECT DISTINCT its columns")
    passed = None
    if output == RETRACT and query.args.get("where") is None:
        passed = tuple((e.alias_or_name, unaliased(e).name if isinstance(unaliased(e), exp.Column) else None)
                       for e in query.expressions[:-1])  # the last is the weight
    sql = to_spark_sql(query, stage_types(inputs, stage_view))
    return ChangelogPlan(inputs, stage, stage_view, sql, output, key, hidden_key=hidden,
                         grows_only=output == RETRACT and not retractions, passed_through=passed)


def _distinct_as_group_by(select: exp.Select) -> exp.Select:
    """SELECT DISTINCT a, b .. as the GROUP BY a, b .. it is."""
    query = select.copy()
    query.set("distinct", None)
    query.set("group", exp.Group(expressions=[unaliased(e).copy() for e in query.expressions]))
    return query


def _temporal_join(select: exp.Select, inputs: list[StageInput]) -> tuple[str, str] | None:
    """(left time column, right time column) of `t JOIN v FOR SYSTEM_TIME AS OF t.time ON t.k = v.pk`, or None.

    Checks what Flink requires of an event-time temporal join: the versioned table has a primary key, a watermark
    and is joined on its whole key; the left side is append-only and the time is its watermarked column."""
    joins = select.args.get("joins") or []
    versioned = [j for j in joins if isinstance(j.this, exp.Table) and j.this.args.get("version") is not None]
    if not versioned:
        return None
    if len(joins) != 1 or len(inputs) != 2:
        raise unsupported("an event-time temporal join with other joins", hint="join one table FOR SYSTEM_TIME AS OF")
    left, right = inputs
    time = versioned[0].this.args["version"].expression
    column = left.table.column(time.name) if isinstance(time, exp.Column) else None
    if column is not None and column.is_processing_time:
        return None  # a processing-time join: with the table's current rows, a regular join over its changelog
    if right.join not in ("inner", "left"):
        raise unsupported(f"a {right.join.upper()} temporal join", hint="use JOIN or LEFT JOIN")
    if left.kind != APPEND or left.table.watermark is None:
        raise unsupported(f"a temporal join of '{left.table.name}', which is not append-only with a watermark",
                           hint="the left side of FOR SYSTEM_TIME AS OF must be an append-only table with a WATERMARK")
    if not right.table.primary_key or right.table.watermark is None or right.kind == APPEND:
        raise unsupported(
            f"FOR SYSTEM_TIME AS OF over '{right.table.name}', which is not a versioned table",
            hint="a versioned table is an upsert or changelog table with a PRIMARY KEY and a WATERMARK")
    if not isinstance(time, exp.Column) or time.name.lower() != left.table.watermark.column.lower():
        raise unsupported(f"FOR SYSTEM_TIME AS OF {time.sql()}",
                           hint=f"use the left table's event time: {left.alias}.{left.table.watermark.column}")
    if sorted(c.lower() for c in right.key) != sorted(c.lower() for c in right.table.primary_key):
        raise unsupported(f"a temporal join on {', '.join(right.key)}",
                           hint=f"join '{right.table.name}' on its primary key ({', '.join(right.table.primary_key)})")
    return left.table.watermark.column, right.table.watermark.column


def _set_keys(select: exp.Select, inputs: list[StageInput], columns: StageColumns) -> None:
    """Each input's key from the ON clauses (or an upsert input's primary key); check they form one key."""
    keys: dict[int, list[str]] = {}
    partner: dict[int, int] = {}
    for n, join in enumerate(select.args.get("joins") or [], start=1):
        try:
            other, theirs, mine = join_keys(join.args["on"], columns.of, n)
        except NotAKeyJoin as bad:
            if bad.equality:
                raise unsupported(f"the join condition '{columns.as_written(bad.conjunct)}'",
                                  hint="each ON must equate the joined table's key with one earlier table's key") from None
            raise unsupported(f"the join condition '{columns.as_written(bad.conjunct)}' ({inputs[n].join.upper()}"
                              " JOIN) over changelog inputs",
                              hint="an outer join's ON takes equalities between two tables (t1.k = t2.k) and"
                                   " conditions on the joined table alone; move the rest to WHERE") from None
        if other in keys and [c.lower() for c in keys[other]] != [c.lower() for c in theirs]:
            raise unsupported(
                f"joining on {', '.join(theirs)} of '{inputs[other].alias}', which is already joined on "
                f"{', '.join(keys[other])}", hint="every join of a changelog query must use the same key")
        keys[other], keys[n], partner[n] = theirs, mine, other
    if len(inputs) == 1 and inputs[0].kind == UPSERT_INPUT:
        keys[0] = list(inputs[0].table.primary_key)
    for n, source in enumerate(inputs):
        key = keys.get(n, [])
        if source.kind == UPSERT_INPUT and len(inputs) > 1:
            primary = {c.lower() for c in source.table.primary_key}
            if not {c.lower() for c in key} <= primary:
                raise unsupported(
                    f"joining upsert table '{source.table.name}' on {', '.join(key)}, which is not part of its"
                    f" primary key ({', '.join(source.table.primary_key)})",
                    hint="join upsert tables on their primary key, or read the changes as debezium-json")
        inputs[n] = replace(source, key=key, joins_with=partner.get(n, 0))
