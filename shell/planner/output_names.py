"""The names of a query's result columns, as Flink gives them.

Why it exists: a result's column names are what a user sees in the header, what `--result-mode json` writes as
keys, and what a sink's columns are matched against. Left to Spark, an expression without an alias is named by its
text (`upper(name)`), and two columns of one name (`u.name, i.name` over a join) are two `name`s: one is lost in
a JSON object, and a changelog query cannot even select them apart. Flink (Calcite) names them otherwise, and this
rewrite gives every item of the outermost SELECT an alias the way Flink does:

    SELECT u.name, i.name, UPPER(u.email), o.qty AS qty FROM ...
->
    SELECT u.name AS name, i.name AS name0, UPPER(u.email) AS EXPR$2, o.qty AS qty FROM ...

A column keeps its name, an expression is `EXPR$<its position>`, and a name already taken gets the first free
number appended (`name0`, `name1`, ...), compared without case. `*` is left as it is.
"""

from __future__ import annotations

from sqlglot import exp


def flink_names(query: exp.Expr) -> exp.Expr:
    """A copy of `query` whose outermost SELECT names each of its items explicitly (for a UNION, the first SELECT,
    whose names are the result's); any other query, and one whose items are all named so already, is returned as
    it is."""
    unique = item_names(query)
    if unique is None:
        return query
    return named(query.copy(), unique)


def named(copy: exp.Expr, unique: list[str]) -> exp.Expr:
    """`copy` (the caller's own) with the items of its outermost SELECT named `unique` (item_names), in place."""
    select = copy
    while isinstance(select, exp.Union):
        select = select.this
    items = []
    for item, name in zip(select.expressions, unique):
        value = item.this if isinstance(item, exp.Alias) else item
        items.append(exp.alias_(value, name, quoted=True, copy=False))  # `value` is already the copy's
    select.set("expressions", items)
    return copy


def item_names(query: exp.Expr) -> list[str] | None:
    """The names flink_names gives the items of the outermost SELECT, or None when it leaves the query as it is."""
    target = query
    while isinstance(target, exp.Union):
        target = target.this
    if not isinstance(target, exp.Select):
        return None
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
           for e in target.expressions):
        return None
    names = [_name(e, n) for n, e in enumerate(target.expressions)]
    unique = _uniquified(names)
    if all(isinstance(e, exp.Alias) for e in target.expressions) and unique == names:
        return None
    return unique


def _name(item: exp.Expr, position: int) -> str:
    if isinstance(item, exp.Alias):
        return item.alias
    if isinstance(item, exp.Column):
        return item.name
    return f"EXPR${position}"


def _uniquified(names: list[str]) -> list[str]:
    taken = {n.lower() for n in names}
    seen: set[str] = set()
    out = []
    for name in names:
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
            continue
        n = 0
        while f"{name}{n}".lower() in taken or f"{name}{n}".lower() in seen:
            n += 1
        seen.add(f"{name}{n}".lower())
        out.append(f"{name}{n}")
    return out
