"""A keep-first deduplication on a time attribute, read as the append-only relation it is.

Why it exists: Flink runs `ROW_NUMBER() OVER (PARTITION BY k ORDER BY rowtime ASC) = 1` over an append-only table
as an insert-only operator: each key's row with the smallest time leaves once, when the watermark reaches it, and
every later row of the key is ignored (a row behind the watermark is late). Its result only grows, so a window
table function, an interval join or an append-only sink can read it. The changelog path would plan it as a Top-N,
whose rows are replaced as better ones arrive: right in the end, but updating, which none of those can read.

So on the native path such a SELECT (the query itself, a FROM subquery, or a view's body) reads a view of the
deduplicated rows instead, which the engine builds with jvm/stages' `FirstRowByTime` (engine/first_rows.py):

    SELECT id, url, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) AS rn FROM clicks) WHERE rn = 1
->  SELECT id, url, ts FROM __first0 AS clicks      (__first0: the rows of `SELECT * FROM clicks`, first per id by ts)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.errors import StreamshellError
from shell.planner.top_n import top_n_subquery


@dataclass(frozen=True)
class FirstRows:
    """A view of each key's first row by time: `rows_sql` (Spark SQL) deduplicated by `key`, ordered by `time`."""

    view: str
    rows_sql: str
    key: tuple[str, ...]
    time: str


def keep_first_by_time(select: exp.Expr, table_of: Callable[[str], TableDef | None]) -> tuple[exp.Select, list[str], str] | None:
    """(the rows it deduplicates, the key, the time column) when `select` is a keep-first deduplication on the time
    attribute of one append-only table with a watermark (`table_of` gives such a table by name, else None)."""
    if not isinstance(select, exp.Select):
        return None
    try:
        found = top_n_subquery(select)
    except StreamshellError:
        return None  # a ROW_NUMBER without rn <= N: the planner names it
    if found is None or found[3] != 1 or any(select.args.get(k) for k in ("joins", "group", "having", "distinct")):
        return None
    inner, window, number, _ = found
    relation = inner.args["from_"].this if inner.args.get("from_") else None
    if not isinstance(relation, exp.Table) or any(inner.args.get(k) for k in ("joins", "group", "having", "distinct")):
        return None
    table = table_of(relation.name)
    if table is None or table.watermark is None:
        return None
    order = window.args.get("order")
    ordered = order.expressions if order is not None else []
    if len(ordered) != 1 or ordered[0].args.get("desc") or not isinstance(ordered[0].this, exp.Column) \
            or ordered[0].this.name.lower() != table.watermark.column.lower():
        return None
    partition = window.args.get("partition_by") or []
    if not partition or not all(isinstance(p, exp.Column) for p in partition):
        return None
    if any(c.name.lower() == number.lower() for e in select.expressions for c in e.find_all(exp.Column)):
        return None  # the row number shown: Flink runs that as a Top-N too
    rows = inner.copy()
    rows.set("expressions", [e.copy() for e in inner.expressions
                             if not (isinstance(e, exp.Alias) and isinstance(e.this, exp.Window))])
    shown = {e.alias_or_name.lower() for e in rows.expressions}
    key = [p.name for p in partition]
    if not any(isinstance(e, exp.Star) for e in rows.expressions) and \
            not {k.lower() for k in key} | {table.watermark.column.lower()} <= shown:
        return None
    return rows, key, table.watermark.column


def lifted(query: exp.Expr, table_of: Callable[[str], TableDef | None], view_name: Callable[[int], str],
           spark_sql: Callable[[exp.Expr], str], first: int = 0) -> tuple[exp.Expr, list[FirstRows]]:
    """`query` (changed in place) with each keep-first deduplication on a time attribute, itself or a FROM
    subquery, reading a view of its first rows instead; and those views (named by `view_name(n)` from `first`, their
    rows' SQL made by `spark_sql`)."""
    found: list[FirstRows] = []
    for select in list(query.find_all(exp.Select)):
        shape = keep_first_by_time(select, table_of)
        if shape is None:
            continue
        rows, key, time = shape
        source = select.args["from_"].this
        view = view_name(first + len(found))
        found.append(FirstRows(view, spark_sql(rows), tuple(key), time))
        alias = source.alias_or_name or rows.args["from_"].this.alias_or_name
        select.set("from_", exp.From(this=exp.Table(this=exp.to_identifier(view, quoted=True),
                                                   alias=exp.TableAlias(this=exp.to_identifier(alias)))))
        select.set("where", None)
    return query, found
