"""Top-N and ORDER BY .. LIMIT: recognising them, and the rewrites that make them one ranked stage.

Why it exists: Flink runs `ROW_NUMBER() OVER (..)` with `WHERE rn <= N`, and `ORDER BY .. LIMIT n`, as a Top-N;
a stream has no end to sort up to otherwise. These rules find the shapes, turn ORDER BY .. LIMIT into the Top-N it
is, and move the rows a Top-N ranks into a subquery when they are a join or an aggregate
(planner/changelog.py plans the ranked stage itself).
"""

from __future__ import annotations

from sqlglot import exp

from shell.errors import UnsupportedFeatureError
from shell.planner.sql_parts import unsupported
from shell.sql.positions import at_first_name


def refuse_order_without_limit(select: exp.Select) -> None:
    """ORDER BY without LIMIT, on either path: a stream has no end to sort up to (Flink sorts only by time)."""
    if select.args.get("order") is not None and select.args.get("limit") is None:
        raise at_first_name(UnsupportedFeatureError("ORDER BY without LIMIT over a stream is not supported",
                                                    hint="add LIMIT n: the first n rows in that order (a Top-N)"),
                            select.args["order"])


def refuse_sorting(select: exp.Select) -> None:
    """ORDER BY, LIMIT, OFFSET and QUALIFY that `sorted_limit` could not turn into a Top-N, named with a way out."""
    order, limit = select.args.get("order"), select.args.get("limit")
    if order is not None and limit is not None:
        raise unsupported("ORDER BY .. LIMIT over a join, an aggregate or with OFFSET",
                           hint="ORDER BY .. LIMIT n ranks the rows of one table; INSERT the result into a table first")
    refuse_order_without_limit(select)
    if limit is not None:
        raise unsupported("LIMIT without ORDER BY over changelog inputs",
                           hint="add ORDER BY: it says which rows are first")
    for arg in ("offset", "qualify"):
        if select.args.get(arg):
            raise unsupported(f"{arg.upper()} over changelog inputs")


def top_n_subquery(select: exp.Select) -> tuple[exp.Select, exp.Window, str, int] | None:
    """`SELECT .. FROM (SELECT .., ROW_NUMBER() OVER (..) AS rn FROM t) WHERE rn <= N`: (inner, window, rn, N)."""
    source = select.args.get("from_")
    if source is None or not isinstance(source.this, exp.Subquery) or not isinstance(source.this.this, exp.Select):
        return None
    inner = source.this.this
    numbered = [e for e in inner.expressions if isinstance(e, exp.Alias) and isinstance(e.this, exp.Window)
                and isinstance(e.this.this, exp.RowNumber)]
    if len(numbered) != 1:
        return None
    name = numbered[0].alias
    where = select.args.get("where")
    condition = where.this if where is not None else None
    limits = {exp.LTE: 0, exp.LT: -1, exp.EQ: 0}
    if (type(condition) in limits and isinstance(condition.this, exp.Column) and condition.this.name.lower() == name.lower()
            and isinstance(condition.expression, exp.Literal) and not condition.expression.is_string):
        limit = int(condition.expression.this) + limits[type(condition)]
        if type(condition) is exp.EQ and limit != 1:
            return None
        return inner, numbered[0].this, name, limit
    raise unsupported("ROW_NUMBER() without an outer WHERE rn <= N",
                       hint="Top-N is SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rn FROM t) WHERE rn <= N")


def ranking_a_subquery(inner: exp.Select, window: exp.Window, number: str) -> tuple[exp.Select, exp.Window]:
    """A Top-N over a join or an aggregate: the rows it ranks become a FROM subquery of their own (a stage of their
    own), and the window ranks that subquery's columns.

        SELECT a.k, COUNT(*) AS n, ROW_NUMBER() OVER (PARTITION BY a.k ORDER BY COUNT(*) DESC) AS rn FROM a JOIN b ..
    ->  SELECT k, n, ROW_NUMBER() OVER (PARTITION BY k ORDER BY n DESC) AS rn
        FROM (SELECT a.k AS k, COUNT(*) AS n FROM a JOIN b ..) AS __ranked
    """
    items = [e for e in inner.expressions if not (isinstance(e, exp.Alias) and e.this is window)]
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)) for e in items):
        raise unsupported("'*' in a Top-N over a join or an aggregate", hint="name the columns it ranks")
    named = [e if isinstance(e, exp.Alias) else exp.alias_(e, e.alias_or_name, quoted=True) for e in items]
    extra: list[exp.Alias] = []

    def output_of(node: exp.Expr) -> exp.Expr:
        text = node.sql()
        for item in [*named, *extra]:
            if item.this.sql() == text or (isinstance(node, exp.Column) and not node.table
                                           and item.alias.lower() == node.name.lower()):
                return exp.column(item.alias, quoted=True)
        extra.append(exp.alias_(node.copy(), f"__rank_{len(extra)}", quoted=True))
        return exp.column(extra[-1].alias, quoted=True)

    ranked = window.copy()
    ranked.set("partition_by", [output_of(p) for p in window.args.get("partition_by") or []])
    if window.args.get("order") is not None:
        order = window.args["order"].copy()
        for ordered in order.expressions:
            ordered.set("this", output_of(ordered.this))
        ranked.set("order", order)
    rows = inner.copy()
    rows.set("expressions", [e.copy() for e in [*named, *extra]])
    outer = exp.select(*(exp.column(e.alias, quoted=True) for e in named),
                       exp.alias_(ranked, number, quoted=True, copy=False))
    outer = outer.from_(rows.subquery("__ranked"))
    return outer, next(e.this for e in outer.expressions if isinstance(e, exp.Alias) and isinstance(e.this, exp.Window))
