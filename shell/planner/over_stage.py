"""An OVER aggregation as a stage: each row of one append-only input leaves once the watermark passes it, with
its frame's aggregates over the rows of its PARTITION BY key (`Over`, planner/stages.py; engine/over_stage.py).

Why it exists: planner/over_windows.py reads the SQL (the calls, named windows, the frame); this module checks
what Flink requires of an OVER aggregation and plans its stage.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from shell.errors import CatalogError
from shell.planner.aggregate_stage import STAGE_FUNCTIONS
from shell.planner.model import APPEND, RETRACT, WEIGHT, ChangelogPlan, Sources
from shell.planner.over_windows import frame, over_calls, the_window
from shell.planner.sql_parts import aggregate_argument, unsupported
from shell.planner.stage_columns import resolve_columns
from shell.planner.stage_inputs import stage_inputs, stage_types, unqualified
from shell.planner.stages import Over
from shell.sql.hints import suggest
from shell.sql.translate import to_spark_expression, to_spark_sql


def plan_over(select: exp.Select, sources: Sources, stage_view: str) -> ChangelogPlan:
    """OVER aggregations of one append-only input: a keyed stage by the PARTITION BY columns that releases each row
    with its frame's aggregates once the watermark passes it (engine/over_stage.py); WHERE filters the rows first."""
    window = the_window(over_calls(select))
    rows, preceding = frame(window)
    written = ", ".join(o.sql() for o in window.args["order"].expressions) if window.args.get("order") else "nothing"
    others = [e for e in select.expressions for a in e.find_all(exp.AggFunc) if a.find_ancestor(exp.Window) is None]
    if others or any(select.args.get(k) for k in ("joins", "group", "having", "distinct", "order", "limit")):
        raise unsupported("an OVER aggregation with a join, GROUP BY, DISTINCT, ORDER BY or other aggregates in"
                          " its SELECT", hint="compute those in a subquery, and the OVER aggregation over its rows")
    (source,) = stage_inputs(select, sources, stage_view)
    if source.kind != APPEND:
        raise unsupported(f"an OVER aggregation over '{source.alias}', whose rows change",
                          hint="OVER aggregations read append-only rows (in Flink too)")
    where = select.args.get("where")
    query = select.copy()
    query.set("where", None)
    (source,), columns = resolve_columns(query, [source])
    if where is not None:
        for column in where.find_all(exp.Column):
            if source.table.column(column.name) is None:
                raise CatalogError(f"unknown column '{column.name}'",
                                   hint=suggest(column.name, source.table.column_names()))
        source = replace(source, filter=to_spark_expression(unqualified(where.this)))
    window = the_window(over_calls(query))
    order = window.args.get("order").expressions if window.args.get("order") else []
    time = order[0].this if len(order) == 1 and not order[0].args.get("desc") else None
    column = source.table.column(columns.of(time)[1]) if columns.of(time) is not None else None
    if column is None or column.is_processing_time or not (column.data_type or "").upper().startswith("TIMESTAMP") \
            or (source.table.watermark is not None and source.table.watermark.column.lower() != column.name.lower()):
        raise unsupported(f"an OVER window ordered by {written}",
                          hint="order an OVER window by the table's event time (its WATERMARK column), ascending")
    partition = []
    for part in window.args.get("partition_by") or []:
        if columns.of(part) is None:
            raise unsupported(f"PARTITION BY {part.sql()} in an OVER window", hint="partition by columns")
        partition.append(columns.of(part)[1])
    functions = []
    for n, (call, as_written) in enumerate(zip(over_calls(query), over_calls(select))):
        kind, argument = STAGE_FUNCTIONS.get(type(call.this)), aggregate_argument(call.this)
        if kind is None or isinstance(call.this.this, exp.Distinct):
            raise unsupported(f"{as_written.this.sql()} in an OVER aggregation", hint="COUNT, SUM, AVG, MIN and MAX are")
        if argument is None or kind == "count" and isinstance(argument, (exp.Star, exp.Literal)):
            argument_column = None
        elif columns.of(argument) is not None:
            argument_column = argument.name
        else:
            raise unsupported(f"'{as_written.this.sql()}' in an OVER aggregation",
                              hint="aggregate columns: compute the expression in a subquery first")
        name = f"__over{n}"
        functions.append((name, kind, argument_column))
        call.replace(exp.column(name, quoted=True))
    wanted = {c.lower() for c in source.columns} | {column.name.lower()}
    staged = replace(source, key=partition, columns=[c.name for c in source.table.columns if c.name.lower() in wanted])
    query.set("expressions", [*query.expressions, exp.column(WEIGHT)])
    query.set("from_", exp.From(this=exp.to_table(stage_view)))
    over = Over(staged.stage_column(column.name), rows, preceding, functions)
    return ChangelogPlan([staged], over, stage_view, to_spark_sql(query, stage_types([staged], stage_view)),
                         RETRACT, grows_only=True)
