"""Scalar subqueries (`(SELECT SUM(x) FROM t WHERE t.k = o.k)` in a SELECT list or a WHERE), turned into the LEFT
JOINs the changelog path runs.

Why it exists: Spark refuses a streaming subquery inside an expression, and a scalar subquery over a stream is an
updating result anyway (Flink's too): the outer row's value changes whenever the subquery's does. Flink
decorrelates it into a join with the subquery's aggregate; so does this module, before the changelog planner sees
the query, the same way subqueries.py turns IN and EXISTS into semi and anti joins:

    (SELECT AGG(..) FROM t WHERE t.y = o.x AND c)  ->  LEFT JOIN (SELECT y AS __key0, AGG(..) AS __value FROM t
                                                       WHERE c GROUP BY y) AS __sq1 ON o.x = __sq1.__key0
    (SELECT AGG(..) FROM t WHERE c)                ->  the same on a constant key: every outer row is joined with
                                                       the one row of the aggregate (one key: all of the outer
                                                       rows in one place, as in Flink's plan of it)

and the subquery is replaced by `__sq1.__value`. A key with no rows in t has no row in the aggregate; the LEFT
JOIN gives NULL then, which is the aggregate of no rows except for COUNT, whose value is 0
(`COALESCE(__sq1.__value, 0)`). A scalar subquery must give one row per outer row: one that does not aggregate,
groups or reads more than one table is refused with a hint, as is one in a query that itself aggregates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.errors import StreamshellError, UnsupportedFeatureError
from shell.planner.model import CONSTANT_KEY, SCALAR_ALIAS
from shell.planner.rules.in_exists import correlation
from shell.sql.positions import at_first_name

if TYPE_CHECKING:
    from shell.planner.rules import Context

ALIAS = SCALAR_ALIAS  # + n: the alias of the n-th scalar subquery's rows (`*` does not show them)
CONSTANT = CONSTANT_KEY  # the constant key column of an uncorrelated scalar subquery and of the outer relation
FORM = "a scalar subquery"


def rule(query: exp.Expr, context: Context) -> exp.Expr | None:
    """The rule: a SELECT with scalar subqueries, with LEFT JOINs of their aggregates instead."""
    if not scalar_subqueries(query):
        return None
    return as_left_joins(query, context.sources.tables)


def scalar_subqueries(select: exp.Expr) -> list[exp.Subquery]:
    """The scalar subqueries of a SELECT's list and WHERE (not IN/EXISTS subqueries, not those of its FROM)."""
    if not isinstance(select, exp.Select):
        return []
    found = []
    for key in ("expressions", "where", "having"):
        value = select.args.get(key)
        for part in value if isinstance(value, list) else [value] if value is not None else []:
            found += [n for n in part.find_all(exp.Subquery)
                      if not isinstance(n.parent, (exp.In, exp.Exists)) and (n is part or _outermost(n, part))]
    return found


def _outermost(node: exp.Expr, top: exp.Expr, inside: tuple[type, ...] = (exp.Subquery,)) -> bool:
    """Whether no node of type `inside` is between `node` and `top` (`top` included)."""
    parent = node.parent
    while parent is not None and node is not top:
        if isinstance(parent, inside):
            return False
        node, parent = parent, parent.parent
    return True


def as_left_joins(select: exp.Select, tables: dict[str, TableDef]) -> exp.Select:
    """A copy of `select` whose scalar subqueries are LEFT JOINs of their aggregates (`tables`: the query's tables
    by lower-cased name); `select` itself when it has none."""
    if not scalar_subqueries(select):
        return select
    having = select.args.get("having")
    if having is not None and any(_outermost(n, having) for n in having.find_all(exp.Subquery)
                                  if not isinstance(n.parent, (exp.In, exp.Exists))):
        raise UnsupportedFeatureError(f"{FORM} in HAVING is not supported",
                                      hint="aggregate in a FROM subquery and compare in the outer query's WHERE")
    if select.args.get("group") or any(_aggregates(e) for e in select.expressions):
        raise UnsupportedFeatureError(f"{FORM} in a query that aggregates is not supported",
                                      hint="join the subquery's aggregate in FROM: LEFT JOIN (SELECT k, AGG(..) "
                                           "FROM t GROUP BY k) AS s ON s.k = x")
    query = select.copy()
    outer = query.args["from_"].this.alias_or_name
    joins, constant = [], False
    for n, found in enumerate(scalar_subqueries(query), 1):
        try:
            join, value, uncorrelated = _left_join(found.this, tables, f"{ALIAS}{n}", outer)
        except StreamshellError as exc:
            raise at_first_name(exc, found.this) from None  # at the subquery, not the statement's start
        constant = constant or uncorrelated
        found.replace(exp.alias_(value, found.alias, quoted=True) if found.alias else value)
        joins.append(join)
    if constant:
        padded = [j for j in query.args.get("joins") or [] if (j.side or "").upper() in ("RIGHT", "FULL")]
        if padded:
            raise UnsupportedFeatureError(
                f"{FORM} not tied to the outer row, in a query with a {padded[0].side.upper()} JOIN, is not supported",
                hint="tie it to the outer row (WHERE t.k = o.k), or join its aggregate in FROM")
        _with_constant_key(query, tables)
    query.set("joins", [*(query.args.get("joins") or []), *joins])
    return query


def _left_join(inner: exp.Expr, tables: dict[str, TableDef], alias: str,
               outer: str) -> tuple[exp.Join, exp.Expr, bool]:
    """The LEFT JOIN standing for the scalar subquery `inner`, the expression that replaces it, and whether it is
    uncorrelated (joined on the constant key of the outer query's first relation, named `outer`)."""
    if not isinstance(inner, exp.Select):
        raise UnsupportedFeatureError(f"{FORM} that is a {inner.key.upper()} is not supported",
                                      hint="a scalar subquery is one SELECT of an aggregate")
    if inner.args.get("group") or inner.args.get("having"):
        raise UnsupportedFeatureError(f"{FORM} with GROUP BY is not supported",
                                      hint="aggregate without GROUP BY, tied to the outer row by its WHERE "
                                           "(t.k = o.k), or join the grouped rows in FROM")
    if len(inner.expressions) != 1:
        raise UnsupportedFeatureError(f"{FORM} of {len(inner.expressions)} columns",
                                      hint="a scalar subquery selects one value")
    tie = correlation(inner, tables, FORM, alias)
    selected = inner.expressions[0]
    value = selected.this if isinstance(selected, exp.Alias) else selected
    if not value.find(exp.AggFunc) or value.find(exp.Window):
        raise UnsupportedFeatureError(
            f"{FORM} that does not aggregate ('{_short(inner)}') is not supported",
            hint="its rows could be many per outer row: LEFT JOIN the table ON its key instead")
    if any(isinstance(node, exp.Count) for node in value.find_all(exp.Count)) and not isinstance(value, exp.Count):
        raise UnsupportedFeatureError(
            f"COUNT inside an expression of {FORM} ('{_short(value)}') is not supported",
            hint="select COUNT(..) alone and compute with it in the outer query")
    read = next((c for c in value.find_all(exp.Column) if not tie.is_inner(c)), None)
    if read is not None:
        raise UnsupportedFeatureError(f"the value of {FORM} reading '{read.sql()}' of the outer row is not supported",
                                      hint="compute with the outer row's columns in the outer query")
    odd = _not_null_strict(value)
    if odd is not None:  # a key without rows has no row in the join: its value must be the aggregates' NULL
        raise UnsupportedFeatureError(
            f"'{_short(odd)}' around the aggregate of {FORM} is not supported",
            hint="select the aggregate alone and compute with it in the outer query (COALESCE(( .. ), 0))")
    keys, on = [], []
    for n, (outer_side, inner_side) in enumerate(tie.equalities):
        tie.inner_column(inner_side)  # a column of the table
        name = f"__key{n}"
        keys.append(exp.alias_(exp.column(inner_side.name), name))
        on.append(exp.EQ(this=outer_side.copy(), expression=exp.column(name, table=alias)))
    uncorrelated = not keys
    if uncorrelated:
        keys.append(exp.alias_(exp.Literal.number(1), "__key0"))
        on.append(exp.EQ(this=exp.column(CONSTANT, table=outer), expression=exp.column("__key0", table=alias)))
    rows = exp.select(*keys, exp.alias_(value.copy(), "__value")).from_(inner.args["from_"].this.copy())
    if tie.local:
        rows = rows.where(exp.and_(*(p.copy() for p in tie.local)))
    if not uncorrelated:
        rows = rows.group_by(*(exp.column(inner_side.name) for _, inner_side in tie.equalities))
    result = exp.column("__value", table=alias)
    if isinstance(value, exp.Count):  # COUNT of no rows is 0: a key without rows has no row to join
        result = exp.func("COALESCE", result, exp.Literal.number(0))
    return exp.Join(this=rows.subquery(alias), on=exp.and_(*on), side="LEFT"), result, uncorrelated


NULL_STRICT = (exp.AggFunc, exp.Literal, exp.Column, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg,
               exp.Paren, exp.Cast, exp.DataType, exp.Identifier, exp.Star, exp.Distinct)


def _not_null_strict(value: exp.Expr) -> exp.Expr | None:
    """The first part of `value` outside its aggregates that could give a value where they give NULL (COALESCE,
    CASE, a function): what a key without rows would get wrong, since the LEFT JOIN gives it NULL."""
    for node in value.walk():
        inside = node is not value and any(isinstance(p, exp.AggFunc) for p in _ancestors(node, value))
        if not inside and not isinstance(node, NULL_STRICT):
            return node
    return None


def _ancestors(node: exp.Expr, top: exp.Expr):  # noqa: ANN202 - the nodes above `node`, up to `top`
    parent = node.parent
    while parent is not None:
        yield parent
        if parent is top:
            return
        parent = parent.parent


def _with_constant_key(query: exp.Select, tables: dict[str, TableDef]) -> None:
    """Give the query's first relation a constant column to join an uncorrelated subquery's one row on: the table
    becomes `(SELECT its columns.., 1 AS __one FROM t) AS t`."""
    relation = query.args["from_"].this
    if not isinstance(relation, exp.Table) or relation.name.lower() not in tables:
        raise UnsupportedFeatureError(f"{FORM} not tied to the outer row, over '{_short(relation)}', is not supported",
                                      hint="tie it to the outer row (WHERE t.k = o.k), or read a table in the "
                                           "outer FROM")
    table = tables[relation.name.lower()]
    name = relation.alias_or_name
    columns = [exp.column(c, quoted=True) for c in table.column_names()]
    rows = exp.select(*columns, exp.alias_(exp.Literal.number(1), CONSTANT)).from_(
        exp.Table(this=exp.to_identifier(table.name)))
    relation.replace(rows.subquery(name))


def _aggregates(node: exp.Expr) -> bool:
    """Whether `node` aggregates outside its subqueries."""
    return any(_outermost(call, node, (exp.Subquery, exp.Window)) for call in node.find_all(exp.AggFunc))


def _short(node: exp.Expr) -> str:
    text = node.sql()
    return text if len(text) <= 60 else text[:57] + "..."
