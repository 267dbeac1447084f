"""The rule that reads `ORDER BY .. LIMIT n` as the Top-N it is: Flink runs it over all rows as one, whose first
n rows are replaced as better ones arrive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from shell.planner.model import ROWNUM
from shell.planner.over_windows import over_calls
from shell.planner.sql_parts import unsupported

if TYPE_CHECKING:
    from shell.planner.rules import Context


def rule(query: exp.Expr, context: Context) -> exp.Expr | None:
    """The rule: a SELECT with ORDER BY and LIMIT (and no OVER aggregate, whose stage sorts by time) as a Top-N."""
    if not isinstance(query, exp.Select) or over_calls(query):
        return None
    return sorted_limit(query)


def sorted_limit(select: exp.Select) -> exp.Select | None:
    """`SELECT .. FROM t [WHERE ..] ORDER BY .. LIMIT n` as the Top-N it is (Flink runs it as one, over all rows):
    `SELECT .. FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY ..) AS __rownum FROM t [WHERE ..]) t WHERE __rownum <= n`,
    whose row number `*` does not show."""
    order, limit = select.args.get("order"), select.args.get("limit")
    relation = select.args["from_"].this if select.args.get("from_") else None
    if order is None or limit is None or select.args.get("offset") or relation is None:
        return None
    if select.args.get("distinct") or any(e.find(exp.Window) for e in select.expressions):
        return None
    count = limit.expression
    if not isinstance(count, exp.Literal) or count.is_string:
        raise unsupported(f"LIMIT {count.sql()}", hint="LIMIT takes a number")
    number = exp.Window(this=exp.RowNumber(), order=order.copy())
    if any(select.args.get(k) for k in ("joins", "group", "having")) or not isinstance(relation, exp.Table) or \
            any(e.find(exp.AggFunc) for e in select.expressions):
        # the rows of a join or an aggregate, ranked as a subquery of their own (`ranking_a_subquery`)
        items = [e.copy() if isinstance(e, exp.Alias) else exp.alias_(e.copy(), e.alias_or_name, quoted=True)
                 for e in select.expressions]
        inner = select.copy()
        inner.set("order", None)
        inner.set("limit", None)
        inner.set("expressions", [*items, exp.alias_(number, ROWNUM)])
        outer = exp.select(*(exp.column(i.alias, quoted=True) for i in items)).from_(inner.subquery("__sorted"))
        return outer.where(exp.LTE(this=exp.column(ROWNUM), expression=count.copy()))
    inner = exp.select(exp.Star(), exp.alias_(number, ROWNUM)).from_(relation.copy())
    if select.args.get("where"):
        inner.set("where", select.args["where"].copy())
    outer = exp.select(*(e.copy() for e in select.expressions)).from_(inner.subquery(relation.alias_or_name))
    return outer.where(exp.LTE(this=exp.column(ROWNUM), expression=count.copy()))
