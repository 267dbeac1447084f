"""`JOIN ... USING (k)` and `NATURAL JOIN` on the changelog path, as the `ON` they mean: the keyed stages read join
conditions from ON.

Why it exists: the changelog path's planner takes a join's keys from its ON clause, and refused USING and NATURAL
joins. Flink runs them as the equality of the named (or shared) columns, and, unlike standard SQL, does not merge
those columns: each side keeps its own `k`, an unqualified `k` is ambiguous ("Column 'k' is ambiguous", as here),
and `a.k`, `b.k` name them. So this module only writes the join with ON:

    SELECT a.k, b.y FROM a FULL JOIN b USING (k)   ->   SELECT a.k, b.y FROM a FULL JOIN b ON a.k = b.k

A USING after another on the same column joins on the one value the joined rows have for it: the left side's for
an inner or LEFT join, the right side's for a RIGHT join, the first not NULL for a FULL join.

`SELECT *` of such a join is refused (name the columns). The native path hands both joins to Spark.
"""

from __future__ import annotations

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.planner.sql_parts import unsupported
from shell.planner.stage_split import relations


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
    """Whether the join names its keys without ON: USING (..), or NATURAL."""
    return bool(join.args.get("using")) or (join.args.get("method") or "").upper() == "NATURAL"


def _rewrite(select: exp.Select, tables: dict[str, TableDef]) -> None:
    known = relations(select, tables)
    if not known:
        return  # a relation the planner names as unsupported
    if any(isinstance(e, exp.Star) or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
           for e in select.expressions):
        raise unsupported("SELECT * of a JOIN ... USING (or a NATURAL JOIN) over changelog inputs",
                          hint="name the columns, each side's key qualified (a.k, b.k)")
    merged: dict[str, exp.Expr] = {}  # a column an earlier USING joined on -> the one value a later USING reads
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
            side = (join.side or "").upper()  # the joined rows' value of the column, for a USING after this one
            merged[name.lower()] = (other if side == "RIGHT" else
                                    exp.Coalesce(this=left.copy(), expressions=[other.copy()]) if side == "FULL" else
                                    left)
        join.set("using", None)
        join.set("on", exp.and_(*conditions))

