"""`JOIN ... USING (k)` and `NATURAL JOIN` on the changelog path, as the `ON` they mean: the keyed stages read join
conditions from ON.

Why it exists: the changelog path's planner takes a join's keys from its ON clause, and read `k` of a USING join as
a column of both sides ("column 'k' is ambiguous"). SQL gives a USING join one column `k`: the left side's for an
inner or LEFT join, the right side's for a RIGHT join, and the first that is not NULL for a FULL join. This module
writes each such join with ON and each unqualified `k` of the SELECT as that one column:

    SELECT k, l.x, r.y FROM l FULL JOIN r USING (k)
->  SELECT COALESCE(l.k, r.k) AS k, l.x, r.y FROM l FULL JOIN r ON l.k = r.k

A NATURAL join is a USING join on the columns both sides have. `SELECT *` of a USING or NATURAL join is refused
(name the columns): which columns it shows, and in which order, is easy to get wrong. The native path hands both to
Spark, which has them.
"""

from __future__ import annotations

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.planner.model import SUBQUERY_JOIN
from shell.planner.sql_parts import unsupported
from shell.planner.stage_split import relations

CLAUSES = ("expressions", "where", "group", "having", "order")


def as_on(query: exp.Expr, tables: dict[str, TableDef]) -> exp.Expr:
    """`query` with every USING or NATURAL join of its SELECTs (subqueries too) written as an ON join; unchanged
    without one."""
    if not any(_merging(join) for join in query.find_all(exp.Join)):
        return query
    query = query.copy()
    for select in list(query.find_all(exp.Select)):
        if any(_merging(join) for join in select.args.get("joins") or []):
            _rewrite(select, tables)
    return query


def _merging(join: exp.Join) -> bool:
    """Whether the join gives its key columns once: USING (..), or NATURAL."""
    return bool(join.args.get("using")) or (join.args.get("method") or "").upper() == "NATURAL"


def _rewrite(select: exp.Select, tables: dict[str, TableDef]) -> None:
    known = relations(select, tables, SUBQUERY_JOIN)
    if not known:
        return  # a relation the planner names as unsupported
    if any(isinstance(e, exp.Star) or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
           for e in select.expressions):
        raise unsupported("SELECT * of a JOIN ... USING (or a NATURAL JOIN) over changelog inputs",
                          hint="name the columns (the USING column once, unqualified)")
    merged: dict[str, exp.Expr] = {}  # a USING column (lower-cased) -> the one column it is in the result
    for index, join in enumerate(select.args.get("joins") or [], start=1):
        right = known[index]
        using = join.args.get("using")
        if (join.args.get("method") or "").upper() == "NATURAL":
            before = {c.lower() for r in known[:index] for c in r.columns}
            using = [exp.to_identifier(c) for c in right.columns if c.lower() in before]
            join.set("method", None)
            if not using:
                raise unsupported(f"a NATURAL JOIN with '{right.alias}', which has no column of the tables before it",
                                  hint="write the join with ON, or CROSS JOIN")
        if not using:
            continue
        conditions = []
        for identifier in using:
            name = identifier.name
            left = merged.get(name.lower())
            if left is None:
                owners = [r for r in known[:index] if any(c.lower() == name.lower() for c in r.columns)]
                if len(owners) != 1:
                    raise unsupported(f"USING ({name}): {'no' if not owners else 'more than one'} table before the "
                                      f"join has '{name}'", hint="write the join with ON a.k = b.k")
                left = exp.column(name, table=owners[0].alias, quoted=True)
            if not any(c.lower() == name.lower() for c in right.columns):
                raise unsupported(f"USING ({name}): '{right.alias}' has no column '{name}'",
                                  hint="write the join with ON a.k = b.k")
            other = exp.column(name, table=right.alias, quoted=True)
            conditions.append(exp.EQ(this=left.copy(), expression=other))
            side = (join.side or "").upper()
            merged[name.lower()] = (other if side == "RIGHT" else
                                    exp.Coalesce(this=left.copy(), expressions=[other.copy()]) if side == "FULL" else
                                    left)
        join.set("using", None)
        join.set("on", exp.and_(*conditions))
    _replace_columns(select, merged)


def _replace_columns(select: exp.Select, merged: dict[str, exp.Expr]) -> None:
    """Each unqualified column named by a USING clause, in the SELECT's own clauses, as its one column."""

    def replace(node: exp.Expr) -> exp.Expr:  # a subquery's own columns are its own
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in merged \
                and node.find_ancestor(exp.Select) is select:
            return merged[node.name.lower()].copy()
        return node

    items = []
    for item in select.expressions:
        if isinstance(item, exp.Column) and not item.table and item.name.lower() in merged:
            items.append(exp.alias_(merged[item.name.lower()].copy(), item.name, quoted=True))
        else:
            items.append(item.transform(replace, copy=False))
    select.set("expressions", items)
    for key in CLAUSES[1:]:
        value = select.args.get(key)
        if value is not None:
            select.set(key, value.transform(replace, copy=False))
