"""A Top-N as a stage: `ROW_NUMBER() OVER (PARTITION BY k ORDER BY o) <= n` over one input, numbered in a keyed
stage by its PARTITION BY columns (a window Top-N emits each window's first rows once, when it closes).

Why it exists: planner/top_n.py recognises the shapes and rewrites them into one ranked subquery; this module
plans that subquery's stage (`Rank`, planner/stages.py) and the query over its numbered rows.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from shell.errors import CatalogError
from shell.planner import stage_split
from shell.planner.model import RETRACT, ROWNUM, UPSERT_INPUT, WEIGHT, ChangelogPlan, Sources
from shell.planner.sql_parts import unaliased, unsupported
from shell.planner.stage_inputs import stage_inputs, unqualified
from shell.planner.stages import Rank
from shell.planner.top_n import ranking_a_subquery, top_n_subquery
from shell.sql.hints import suggest
from shell.sql.positions import at_name
from shell.sql.translate import to_spark_expression, to_spark_sql
from shell.sql.windows import describe_tvf, find_window_tvfs, groups_by_window


def plan_top_n(select: exp.Select, sources: Sources, stage_view: str) -> ChangelogPlan:
    inner, window, number, limit = top_n_subquery(select)
    if any(inner.args.get(clause) for clause in ("joins", "group", "having")):
        known = stage_split.relations(inner, sources.tables)
        if known:  # `A.*` and unqualified columns named by their relation, before the rows move into a subquery
            inner = stage_split.qualified(inner, known)
            window = next(e.this for e in inner.expressions
                          if isinstance(e, exp.Alias) and e.alias.lower() == number.lower())
        inner, window = ranking_a_subquery(inner, window, number)
    (source,) = stage_inputs(inner, sources, stage_view)
    table = source.table
    where = inner.args.get("where")
    if where is not None:  # filters the table's rows before they are ranked (on an upsert table: as deletes)
        for column in where.find_all(exp.Column):
            if table.column(column.name) is None:
                raise at_name(CatalogError(f"unknown column '{column.name}'",
                                           hint=suggest(column.name, table.column_names())), column)
        source = replace(source, filter=to_spark_expression(unqualified(where.this)))

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
    closing = window_closing(inner.args["from_"].this, partition)
    if closing is not None:  # a window Top-N: each window's first rows once, when it closes (insert-only)
        rank = replace(rank, window_end=source.stage_column(closing[0]), drop_late=closing[1])
    return ChangelogPlan([staged], rank, stage_view, to_spark_sql(outer), RETRACT, grows_only=closing is not None)


def window_closing(relation: exp.Expr, partition: list[str]) -> tuple[str, bool] | None:
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
