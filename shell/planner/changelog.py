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
stage of its own whose weighted rows are an input of the stage above (`StageInput.plan`). IN and EXISTS subqueries
arrive as semi and anti joins (planner/subqueries.py), Top-N shapes are found by planner/top_n.py, and
aggregates over weighted rows are written by planner/weighted_aggregates.py. An event-time temporal join
(`JOIN v FOR SYSTEM_TIME AS OF t.ts ON t.k = v.pk`) is a stage waiting for event time (`Temporal`).
Anything else is named as unsupported, never run with wrong results.

Output. Without GROUP BY the result is a retract stream (`__w`). With it, the result is an upsert stream keyed
by the GROUP BY columns: each touched group's new row, with `__count` (its number of input rows; 0 means the
group is gone) and `__having` (false means HAVING removes it).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.errors import CatalogError
from shell.planner import grouping_sets, join_rewrites, stage_split
from shell.planner.over_windows import frame, over_calls, the_window, with_named_windows
from shell.planner.projected_aggregates import projected_arguments
from shell.planner.model import (
    ANTI, APPEND, CHANGELOG, RETRACT, ROWNUM, SUBQUERY_FILTER, SUBQUERY_JOIN, UPSERTS, UPSERT_INPUT, WEIGHT,
    ChangelogPlan, Sources, StageInput,
)
from shell.planner.stages import Aggregation, KeyedJoin, Over, Rank, Temporal, UnionAll, WeightedRows
from shell.planner.relations import derivable, output_types, referenced_names, renamed
from shell.planner.stage_columns import StageColumns, resolve_columns
from shell.planner.sql_parts import NotAKeyJoin, aggregate_argument, join_keys, unaliased, unsupported
from shell.planner.top_n import ranking_a_subquery, refuse_sorting, sorted_limit, top_n_subquery
from shell.planner.weighted_aggregates import (
    aggregate_calls, aggregate_subquery, aggregates, aggregates_in_stage, as_upserts, refuse_unweighable_calls,
)
from shell.sql.hints import suggest
from shell.sql.operand_types import ColumnTypes, declared_types
from shell.sql.translate import to_spark_expression, to_spark_sql
from shell.sql.windows import WINDOW_COLUMNS, WindowTvf, describe_tvf, find_window_tvfs, groups_by_window
from shell.sql.positions import at_name

STAGE_FUNCTIONS = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}


def plan_changelog(select: exp.Expr, sources: Sources, stage_view: str, retract: bool = False) -> ChangelogPlan:
    """The changelog plan of `select` over `sources`; the rest of the query reads the stage as `stage_view`.
    With `retract` (a FROM subquery whose rows another stage reads), the result is always weighted rows: an
    aggregate is computed in a keyed stage, which gives each group's old row back when it changes."""
    if isinstance(select, exp.Union) and not isinstance(select, (exp.Intersect, exp.Except)):
        return _plan_union(select, sources, stage_view, retract)
    if not isinstance(select, exp.Select):
        raise unsupported(f"{select.key.upper()} over changelog inputs")
    _refuse_scalar_subqueries(select)
    sets = grouping_sets.expanded(select)
    if sets is not None:
        return _plan_union(sets, sources, stage_view, retract)
    if over_calls(select):
        return _plan_over(with_named_windows(select), sources, stage_view)
    select = sorted_limit(select) or select
    refuse_sorting(select)
    if select.args.get("with_") or select.find(exp.CTE):
        raise unsupported("WITH over changelog inputs")
    nested = aggregate_subquery(select)
    if select.args.get("joins") and top_n_subquery(select) is not None:
        raise unsupported("a join (or IN/EXISTS) with the result of a Top-N subquery",
                           hint="INSERT that result into a table, and join the table")
    if top_n_subquery(select) is not None:
        return _plan_top_n(select, sources, stage_view)
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
        return _plan_stage_aggregate(nested, select, sources, stage_view)
    if aggregates_in_stage(select, sources) or (retract and aggregates(select)):
        projected = projected_arguments(select)
        if projected is not None:
            return plan_changelog(projected, sources, stage_view, retract)
        return _plan_stage_aggregate(select, None, sources, stage_view)
    inputs = _inputs(select, sources, stage_view)
    query = select.copy()
    inputs, columns = resolve_columns(query, inputs)
    _set_keys(query, inputs, columns)
    temporal = _temporal_join(select, inputs)
    if temporal is not None:
        inputs = _reading(inputs, {0: temporal[0], 1: temporal[1]})
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
    sql = to_spark_sql(query, _stage_types(inputs, stage_view))
    return ChangelogPlan(inputs, stage, stage_view, sql, output, key, hidden_key=hidden,
                         grows_only=output == RETRACT and not retractions)


def _distinct_as_group_by(select: exp.Select) -> exp.Select:
    """SELECT DISTINCT a, b .. as the GROUP BY a, b .. it is."""
    query = select.copy()
    query.set("distinct", None)
    query.set("group", exp.Group(expressions=[unaliased(e).copy() for e in query.expressions]))
    return query


def _plan_union(union: exp.Union, sources: Sources, stage_view: str, retract: bool) -> ChangelogPlan:
    """UNION ALL: the weighted rows of every branch, each a subquery of its own (a stage, or Spark's as written
    when it filters append-only rows), under the first branch's column names. UNION (distinct) is SELECT DISTINCT
    over the UNION ALL."""
    branches = _union_branches(union, bool(union.args.get("distinct")))
    first = branches[0]
    if not isinstance(first, exp.Select) or "*" in first.named_selects:
        raise unsupported("'*' in a UNION over changelog inputs", hint="name the columns of each branch")
    names = first.named_selects
    if union.args.get("distinct"):
        every = exp.union(*(b.copy() for b in branches), distinct=False)
        distinct = exp.select(*(exp.column(n, quoted=True) for n in names)).from_(every.subquery("__union"))
        distinct.set("distinct", exp.Distinct())
        return plan_changelog(distinct, sources, stage_view, retract)
    inputs = []
    for n, branch in enumerate(branches):
        if not isinstance(branch, exp.Select) or len(branch.expressions) != len(names):
            raise CatalogError(f"the branches of a UNION have different numbers of columns ({len(names)} and"
                               f" {len(branch.expressions)})", hint="give every branch the same columns")
        named = branch.copy()
        named.set("expressions", [exp.alias_(unaliased(e).copy(), name, quoted=True)
                                  for e, name in zip(branch.expressions, names)])
        relation = named.subquery("__union")
        if derivable(named, sources):
            source = _derived_input(relation, sources, None)
        else:
            source = _stage_input(relation, sources, None, f"{stage_view}_{n}")
        inputs.append(replace(source, columns=list(names)))
    items = [exp.alias_(exp.column(inputs[0].stage_column(n), quoted=True), n, quoted=True) for n in names]
    sql = to_spark_sql(exp.select(*items, exp.column(WEIGHT)).from_(stage_view))
    return ChangelogPlan(inputs, UnionAll(), stage_view, sql, RETRACT,
                         grows_only=all(i.kind == APPEND for i in inputs))


def _union_branches(union: exp.Expr, flatten_distinct: bool = False) -> list[exp.Expr]:
    """The branches of a chain of UNION ALLs, in order; under a UNION (distinct), every UNION below it too."""
    if type(union) is exp.Union and (flatten_distinct or not union.args.get("distinct")):
        every = flatten_distinct or bool(union.args.get("distinct"))
        return [*_union_branches(union.this, every), *_union_branches(union.expression, every)]
    if isinstance(union, exp.Union):
        raise unsupported(f"a {union.key.upper()} inside a UNION ALL over changelog inputs",
                           hint="write it as a subquery: SELECT .. FROM (..) AS t")
    return [union]


def _stage_types(inputs: list[StageInput], stage_view: str) -> ColumnTypes:
    """The declared types of the stage's output columns (a subquery's columns where `output_types` knows them)."""
    columns = {}
    for source in inputs:
        for name in source.columns:
            column = source.table.column(name)
            if column is not None and column.data_type:
                columns[source.stage_column(name).lower()] = column.data_type
    columns[WEIGHT] = "INT"
    return {stage_view.lower(): columns}


def _plan_stage_aggregate(inner: exp.Select, outer: exp.Select | None, sources: Sources, stage_view: str) -> ChangelogPlan:
    inputs = _inputs(inner, sources, stage_view)
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
                     filter=to_spark_expression(_unqualified(where.this)) if where is not None else None)
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


def _unqualified(condition: exp.Expr) -> exp.Expr:
    """A WHERE over one table with its columns' table names dropped (it runs on the table's own rows)."""
    def strip(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.table:
            return exp.column(node.name, quoted=True)
        return node

    return condition.copy().transform(strip)


def _plan_top_n(select: exp.Select, sources: Sources, stage_view: str) -> ChangelogPlan:
    inner, window, number, limit = top_n_subquery(select)
    if any(inner.args.get(clause) for clause in ("joins", "group", "having")):
        known = stage_split.relations(inner, sources.tables, SUBQUERY_JOIN)
        if known:  # `A.*` and unqualified columns named by their relation, before the rows move into a subquery
            inner = stage_split.qualified(inner, known)
            window = next(e.this for e in inner.expressions
                          if isinstance(e, exp.Alias) and e.alias.lower() == number.lower())
        inner, window = ranking_a_subquery(inner, window, number)
    (source,) = _inputs(inner, sources, stage_view)
    table = source.table
    where = inner.args.get("where")
    if where is not None:  # filters the table's rows before they are ranked (on an upsert table: as deletes)
        for column in where.find_all(exp.Column):
            if table.column(column.name) is None:
                raise at_name(CatalogError(f"unknown column '{column.name}'",
                                           hint=suggest(column.name, table.column_names())), column)
        source = replace(source, filter=to_spark_expression(_unqualified(where.this)))

    def column_of(node: exp.Expr) -> str:
        column = table.column(node.name) if isinstance(node, exp.Column) else None
        if column is None:
            raise unsupported(f"'{node.sql()}' in a Top-N window", hint="PARTITION BY and ORDER BY plain columns")
        return column.name

    names: dict[str, str] = {}  # the subquery's output names -> table columns ("" for the row number)
    shown: dict[str, str] = {}  # the subquery's output names, lower case -> as written (what `*` shows)
    for item in inner.expressions:
        if isinstance(item, exp.Star):
            names.update({c.name.lower(): c.name for c in table.columns})
            shown.update({c.name.lower(): c.name for c in table.columns})
        elif isinstance(item, exp.Alias) and item.this is window:
            names[number.lower()], shown[number.lower()] = "", number
        else:
            names[item.alias_or_name.lower()] = column_of(unaliased(item))
            shown[item.alias_or_name.lower()] = item.alias_or_name
    partition = [column_of(p) for p in window.args.get("partition_by") or []]
    order = [(column_of(o.this), bool(o.args.get("desc")), bool(o.args.get("nulls_first")))
             for o in (window.args.get("order").expressions if window.args.get("order") else [])]
    if source.kind == UPSERT_INPUT and not {c.lower() for c in partition} <= {c.lower() for c in table.primary_key}:
        raise unsupported(f"Top-N over upsert table '{table.name}' partitioned by columns outside its primary key",
                           hint="partition by (part of) the primary key, or read the changes as debezium-json")
    used = {c for c, _, _ in order}

    def resolve(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return node
        if node.name.lower() not in names:
            raise at_name(CatalogError(f"unknown column '{node.name}'", hint=suggest(node.name, list(names))), node)
        real = names[node.name.lower()]
        used.add(real)
        return exp.column(source.stage_column(real) if real else ROWNUM, quoted=True)

    outer = select.copy()
    items = []
    for item in outer.expressions:
        if isinstance(item, exp.Star):  # the table's columns, and the row number unless it is sorted_limit's own
            items += [exp.alias_(exp.column(n), shown[n], quoted=True) for n in names
                      if n != ROWNUM and not n.startswith("__rank_")]
        else:
            items.append(exp.alias_(item, item.name, quoted=True) if isinstance(item, exp.Column) else item)
    outer.set("expressions", [i.transform(resolve) for i in items] + [exp.column(WEIGHT)])
    outer.set("from_", exp.From(this=exp.to_table(stage_view)))
    outer.set("where", None)
    used.discard("")
    columns = [c.name for c in table.columns if c.name in used]
    staged = replace(source, columns=columns, key=partition)
    rank = Rank([(source.stage_column(c), d, n) for c, d, n in order], limit)
    closing = _window_closing(inner.args["from_"].this, partition)
    if closing is not None:  # a window Top-N: each window's first rows once, when it closes (insert-only)
        rank = replace(rank, window_end=source.stage_column(closing[0]), drop_late=closing[1])
    return ChangelogPlan([staged], rank, stage_view, to_spark_sql(outer), RETRACT, grows_only=closing is not None)


def _window_closing(relation: exp.Expr, partition: list[str]) -> tuple[str, bool] | None:
    """A window Top-N's window end column and whether late rows are dropped, or None for any other Top-N.

    As Flink, a Top-N is a window Top-N when it reads a window table function's rows or a window aggregation and
    is partitioned by window_start and window_end: over the rows a row of a closed window is late (dropped), over
    an aggregation each window's rows arrive once, as it closes."""
    by_name = {c.lower(): c for c in partition}
    if not {"window_start", "window_end"} <= set(by_name):
        return None
    if isinstance(relation, exp.TableFromRows) and describe_tvf(relation) is not None:
        return by_name["window_end"], True
    query = relation.this if isinstance(relation, exp.Subquery) else None
    if not isinstance(query, exp.Select) or not find_window_tvfs(query):
        return None
    return by_name["window_end"], not groups_by_window(query)


def _plan_over(select: exp.Select, sources: Sources, stage_view: str) -> ChangelogPlan:
    """OVER aggregations of one append-only input: a keyed stage by the PARTITION BY columns that releases each row
    with its frame's aggregates once the watermark passes it (engine/over_stage.py); WHERE filters the rows first."""
    window = the_window(over_calls(select))
    rows, preceding = frame(window)
    written = ", ".join(o.sql() for o in window.args["order"].expressions) if window.args.get("order") else "nothing"
    others = [e for e in select.expressions for a in e.find_all(exp.AggFunc) if a.find_ancestor(exp.Window) is None]
    if others or any(select.args.get(k) for k in ("joins", "group", "having", "distinct", "order", "limit")):
        raise unsupported("an OVER aggregation with a join, GROUP BY, DISTINCT, ORDER BY or other aggregates in"
                          " its SELECT", hint="compute those in a subquery, and the OVER aggregation over its rows")
    (source,) = _inputs(select, sources, stage_view)
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
        source = replace(source, filter=to_spark_expression(_unqualified(where.this)))
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
    return ChangelogPlan([staged], over, stage_view, to_spark_sql(query, _stage_types([staged], stage_view)),
                         RETRACT, grows_only=True)


def _refuse_scalar_subqueries(select: exp.Select) -> None:
    """A scalar subquery (`WHERE x > (SELECT COUNT(*) FROM u)`) is no input of a stage: its rows would never reach
    the result as they change. IN and EXISTS subqueries are joins (planner/subqueries.py), FROM subqueries inputs."""
    for part in ("expressions", "where", "having"):
        value = select.args.get(part)
        for node in value if isinstance(value, list) else [value] if value is not None else []:
            for found in node.find_all(exp.Subquery):
                if not isinstance(found.parent, (exp.In, exp.Exists)):
                    raise unsupported(f"the scalar subquery '{found.sql()[:60]}' in a query over changelog inputs",
                                      hint="join the subquery's result in FROM (a one-row subquery joined ON TRUE "
                                           "is not supported either: INSERT it into a table and join that)")


def _inputs(select: exp.Select, sources: Sources, stage_view: str) -> list[StageInput]:
    tables, kinds = sources.tables, sources.kinds
    relations = [(select.args["from_"].this, None)] + [(j.this, j) for j in select.args.get("joins") or []]
    inputs: list[StageInput] = []
    for n, (relation, join) in enumerate(relations):
        window = describe_tvf(relation) if isinstance(relation, exp.TableFromRows) else None
        if window is not None and window.table is not None and window.table.lower() in tables:
            relation = _window_rows(relation, window, tables[window.table.lower()])
        if isinstance(relation, exp.Subquery) and derivable(relation.this, sources):
            inputs.append(_derived_input(relation, sources, join))
            continue
        if isinstance(relation, exp.Subquery) and isinstance(relation.this, (exp.Select, exp.Union)):
            inputs.append(_stage_input(relation, sources, join, f"{stage_view}_{n}"))
            continue
        if not isinstance(relation, exp.Table) or relation.name.lower() not in tables:
            raise unsupported(f"reading '{relation.sql()}' in a query over changelog inputs",
                               hint="read tables, or subqueries that filter, project or UNION ALL append-only tables")
        table = tables[relation.name.lower()]
        alias = relation.alias_or_name
        if any(i.alias.lower() == alias.lower() for i in inputs):
            raise CatalogError(f"the name '{alias}' is used twice in FROM", hint="give each table its own alias")
        condition = join.args.get(SUBQUERY_FILTER) if join is not None else None
        inputs.append(StageInput(table, alias, kinds[table.name.lower()], [], join=_join_kind(join), filter=condition))
    return inputs


def _window_rows(relation: exp.TableFromRows, window: WindowTvf, table: TableDef) -> exp.Subquery:
    """`TABLE(TUMBLE(TABLE t, ..))` as the subquery of its rows, `SELECT <t's columns>, window_start, window_end,
    window_time FROM TABLE(TUMBLE(..))`, which Spark runs as written (a window Top-N reads it)."""
    columns = [exp.column(c.name, quoted=True) for c in table.columns]
    columns += [exp.column(c) for c in WINDOW_COLUMNS]
    tvf = relation.copy()
    tvf.set("alias", None)
    return exp.select(*columns).from_(tvf).subquery(window.alias or table.name)


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


def _reading(inputs: list[StageInput], extra: dict[int, str]) -> list[StageInput]:
    """The inputs, each also reading its column in `extra` (in table order)."""
    out = []
    for n, source in enumerate(inputs):
        wanted = {c.lower() for c in source.columns} | ({extra[n].lower()} if n in extra else set())
        out.append(replace(source, columns=[c.name for c in source.table.columns if c.name.lower() in wanted]))
    return out


def _join_kind(join: exp.Join | None) -> str:
    if join is None:
        return ""
    if join.args.get(SUBQUERY_JOIN):
        return join.args[SUBQUERY_JOIN]
    if join.args.get("using") or join.args.get("on") is None:
        raise unsupported("a join without ON t1.k = t2.k over changelog inputs")
    if (join.kind or "").upper() in ("CROSS", "SEMI", "ANTI"):
        raise unsupported(f"{join.kind.upper()} JOIN over changelog inputs")
    return (join.side or "inner").lower()


def _derived_input(relation: exp.Subquery, sources: Sources, join: exp.Join | None) -> StageInput:
    from shell.catalog.model import Column

    query = relation.this
    columns = query.named_selects
    if not columns or "*" in columns:
        raise unsupported(f"'*' in the subquery '{relation.alias_or_name}'", hint="name the subquery's columns")
    alias = relation.alias_or_name or "subquery"
    used = [sources.tables[n.lower()] for n in referenced_names(query)]
    views = {t.name.lower(): sources.views[t.name.lower()] for t in used}
    sql = to_spark_sql(renamed(query, views), declared_types((views[t.name.lower()], t) for t in used), consume=True)
    types = output_types(query, sources)
    table = TableDef(name=alias, columns=[Column(name=c, data_type=types.get(c)) for c in columns])
    derived = (sql, tuple((t, views[t.name.lower()]) for t in used))
    return StageInput(table, alias, APPEND, [], join=_join_kind(join), derived=derived)


def _stage_input(relation: exp.Subquery, sources: Sources, join: exp.Join | None, stage_view: str) -> StageInput:
    """A FROM subquery over changelogs: planned as a stage of its own, whose weighted rows this input reads (a
    changelog, or append-only rows when that plan never takes a row back)."""
    from shell.catalog.model import Column

    columns = relation.this.named_selects
    if not columns or "*" in columns:
        raise unsupported(f"'*' in the subquery '{relation.alias_or_name}'", hint="name the subquery's columns")
    plan = plan_changelog(relation.this, sources, stage_view, retract=True)
    alias = relation.alias_or_name or "subquery"
    types = output_types(relation.this, sources)
    table = TableDef(name=alias, columns=[Column(name=c, data_type=types.get(c)) for c in columns])
    kind = APPEND if plan.grows_only else CHANGELOG
    return StageInput(table, alias, kind, [], join=_join_kind(join), plan=plan)


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
