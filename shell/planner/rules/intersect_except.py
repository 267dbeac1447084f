"""INTERSECT and EXCEPT as the grouped UNION ALL they are, so that they run over rows that arrive and change.

Why it exists: Spark's streaming queries refuse both ("Intersect of streaming DataFrames is not supported"), and
over a stream their result changes: a row of an EXCEPT leaves when the other side gets it, a row of an INTERSECT
leaves when one side loses it. Flink computes them as an aggregate over both sides' rows; so does this rewrite:

    SELECT a, b FROM l INTERSECT SELECT x, y FROM r
->  SELECT a, b FROM (SELECT a, b, 1 AS __in_left, 0 AS __in_right FROM (SELECT a, b FROM l) AS __set_l
                      UNION ALL
                      SELECT x, y, 0, 1 FROM (SELECT x, y FROM r) AS __set_r) AS __set
    GROUP BY a, b HAVING SUM(__in_left) > 0 AND SUM(__in_right) > 0        -- EXCEPT: ... AND SUM(__in_right) = 0

which the changelog path plans as any GROUP BY (the result: a row per distinct row of both sides, added and taken
back as the sides change; NULLs equal, as in a set operation). The ALL forms keep duplicates: the GROUP BY counts
each distinct row's copies (INTERSECT ALL: the fewer of the two sides'; EXCEPT ALL: the left's less the right's),
and an UNNEST of that many numbers gives the row that many times, as Flink replicates it:

    SELECT a, b FROM (SELECT a, b, LEAST(SUM(__in_left), SUM(__in_right)) AS __copies FROM .. GROUP BY a, b
                      HAVING LEAST(..) > 0) AS __set_counts CROSS JOIN UNNEST(SEQUENCE(1, __copies)) AS __copy (__n)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from shell.planner.sql_parts import unsupported

if TYPE_CHECKING:
    from shell.planner.rules import Context

LEFT, RIGHT = "__in_left", "__in_right"
COPIES, COUNTED = "__copies", "__set_counts"  # the ALL forms: each distinct row's number of copies


def rule(query: exp.Expr, context: Context) -> exp.Expr | None:
    """The rule: an INTERSECT or EXCEPT as the GROUP BY that computes it."""
    return as_grouped(query) if isinstance(query, (exp.Intersect, exp.Except)) else None


def as_grouped(operation: exp.Intersect | exp.Except) -> exp.Select:
    """The GROUP BY over a UNION ALL of both sides that computes `operation` (INTERSECT or EXCEPT, with or
    without ALL)."""
    name = operation.key.upper()
    if operation.args.get("order") or operation.args.get("limit"):
        raise unsupported(f"ORDER BY or LIMIT on an {name}",
                          hint=f"write the {name} as a subquery and rank its rows: SELECT .. FROM (..) ORDER BY .. LIMIT n")
    left, right = named(operation.this), named(operation.expression)
    names = left.named_selects
    if len(right.named_selects) != len(names):
        raise unsupported(f"the two sides of an {name} have different numbers of columns ({len(names)} and"
                          f" {len(right.named_selects)})", hint="give both sides the same columns")
    both = exp.union(side(left, "__set_l", names, 1), side(right, "__set_r", names, 0), distinct=False)
    in_left, in_right = exp.Sum(this=exp.column(LEFT)), exp.Sum(this=exp.column(RIGHT))
    columns = [exp.column(n, quoted=True) for n in names]
    grouped = exp.select(*columns).from_(both.subquery("__set")).group_by(*(c.copy() for c in columns))
    if operation.args.get("distinct"):
        right_test = exp.GT if isinstance(operation, exp.Intersect) else exp.EQ
        zero = exp.Literal.number(0)
        return grouped.having(exp.and_(exp.GT(this=in_left, expression=zero.copy()),
                                       right_test(this=in_right, expression=zero.copy())))
    return _replicated(grouped, names, in_left, in_right, isinstance(operation, exp.Intersect))


def _replicated(grouped: exp.Select, names: list[str], in_left: exp.Expr, in_right: exp.Expr,
                intersect: bool) -> exp.Select:
    """INTERSECT ALL or EXCEPT ALL: each distinct row with its number of copies (the fewer of the two sides' for
    INTERSECT ALL, the left side's less the right side's for EXCEPT ALL), unnested into that many rows."""
    copies = exp.Least(this=in_left, expressions=[in_right]) if intersect else exp.Sub(this=in_left, expression=in_right)
    counted = grouped.select(exp.alias_(copies, COPIES, quoted=True), copy=False)
    counted = counted.having(exp.GT(this=copies.copy(), expression=exp.Literal.number(0)))
    numbers = exp.GenerateSeries(start=exp.Literal.number(1), end=exp.column(COPIES, table=COUNTED, quoted=True))
    unnest = exp.Unnest(expressions=[numbers], alias=exp.TableAlias(this=exp.to_identifier("__copy"),
                                                                     columns=[exp.to_identifier("__n")]))
    shown = [exp.column(n, table=COUNTED, quoted=True) for n in names]
    return exp.select(*shown).from_(counted.subquery(COUNTED)).join(unnest, join_type="CROSS")


def named(query: exp.Expr) -> exp.Expr:
    """A side whose every column has a name: an expression without one is named EXPR$n, as Flink names it."""
    if not isinstance(query, exp.Select):
        if isinstance(query, exp.Subquery):
            return named(query.this)
        if "" in query.named_selects or "*" in query.named_selects:
            raise unsupported(f"a nested {query.key.upper()} whose columns are not all named",
                              hint="name every column of each side with AS")
        return query
    if any(isinstance(e, exp.Star) or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
           for e in query.expressions):
        raise unsupported("'*' in a side of an INTERSECT or EXCEPT", hint="name the columns of each side")
    copy = query.copy()
    copy.set("expressions", [e if e.alias_or_name else exp.alias_(e, f"EXPR${n}", quoted=True)
                             for n, e in enumerate(copy.expressions)])  # fmt: skip
    return copy


def side(query: exp.Expr, alias: str, names: list[str], in_left: int) -> exp.Select:
    """`query`'s rows under `names`, marked as the left side's (1, 0) or the right side's (0, 1)."""
    columns = [exp.alias_(exp.column(own, table=alias, quoted=True), name, quoted=True)
               for own, name in zip(query.named_selects, names)]  # fmt: skip
    marks = [exp.alias_(exp.Literal.number(in_left), LEFT), exp.alias_(exp.Literal.number(1 - in_left), RIGHT)]
    return exp.select(*columns, *marks).from_(query.subquery(alias))
