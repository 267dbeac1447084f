"""GROUPING SETS, ROLLUP and CUBE over changelogs, as the UNION ALL of one GROUP BY per grouping set.

Why it exists: a GROUP BY with several grouping sets is, by definition, the union of one aggregation per set, the
columns a set does not group by shown as NULL. The changelog path runs UNION ALL (each branch a stage of its own),
so that is how it runs grouping sets:

    SELECT a, b, COUNT(*) AS n FROM t GROUP BY ROLLUP (a, b)
->
    SELECT a, b, COUNT(*) AS n FROM t GROUP BY a, b
    UNION ALL SELECT a, NULL AS b, COUNT(*) AS n FROM t GROUP BY a
    UNION ALL SELECT NULL AS a, NULL AS b, COUNT(*) AS n FROM t

ROLLUP (a, b) is the sets (a, b), (a), (); CUBE (a, b) is (a, b), (a), (b), (); several of them, and plain GROUP BY
expressions beside them, combine as their cross product. `GROUPING(x)` is 1 in a set without x, else 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from itertools import combinations, product

from sqlglot import exp

from shell.planner.sql_parts import unaliased

if TYPE_CHECKING:
    from shell.planner.rules import Context

SET_NODES = (exp.GroupingSets, exp.Rollup, exp.Cube)


def rule(query: exp.Expr, context: Context) -> exp.Expr | None:
    """The rule: a SELECT with GROUPING SETS, ROLLUP or CUBE as the UNION ALL of one GROUP BY per set."""
    return expanded(query) if isinstance(query, exp.Select) else None


def expanded(select: exp.Select) -> exp.Expr | None:
    """The UNION ALL that `select`'s grouping sets stand for, or None when it has none."""
    group = select.args.get("group")
    if group is None or not any(isinstance(e, SET_NODES) for e in group.expressions):
        return None
    sets = [sum(parts, []) for parts in product(*(_sets_of(e) for e in group.expressions))]
    every = {e.sql(): e for s in sets for e in s}
    branches = [_branch(select, grouped, every) for grouped in sets]
    union = branches[0]
    for branch in branches[1:]:
        union = exp.union(union, branch, distinct=False)
    return union


def _sets_of(element: exp.Expr) -> list[list[exp.Expr]]:
    """The grouping sets one element of a GROUP BY stands for (a plain expression: the one set of itself)."""
    if isinstance(element, exp.Rollup):
        items = list(element.expressions)
        return [items[:n] for n in range(len(items), -1, -1)]
    if isinstance(element, exp.Cube):
        items = list(element.expressions)
        return [list(c) for n in range(len(items), -1, -1) for c in combinations(items, n)]
    if isinstance(element, exp.GroupingSets):
        return [_members(e) for e in element.expressions]
    return [[element]]


def _members(item: exp.Expr) -> list[exp.Expr]:
    if isinstance(item, exp.Paren):
        return [item.this]
    if isinstance(item, exp.Tuple):
        return list(item.expressions)
    return [item]


def _branch(select: exp.Select, grouped: list[exp.Expr], every: dict[str, exp.Expr]) -> exp.Select:
    """One set's GROUP BY: what it does not group by is NULL, GROUPING(x) is a constant."""
    kept = {e.sql() for e in grouped}
    missing = set(every) - kept

    def nulled(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Anonymous) and node.name.upper() == "GROUPING":
            return exp.Literal.number(int(any(a.sql() in missing for a in node.expressions)))
        if isinstance(node, exp.AggFunc):
            return node.copy()  # an aggregate of a column reads its rows, grouped or not
        if node.sql() in missing:
            return exp.Null()
        return node

    branch = select.copy()
    branch.set("expressions", [exp.alias_(unaliased(item).copy().transform(nulled), item.alias_or_name, quoted=True)
                               for item in select.expressions])
    unique = list({e.sql(): e for e in grouped}.values())
    branch.set("group", exp.Group(expressions=[e.copy() for e in unique]) if unique else None)
    if select.args.get("having") is not None:
        branch.set("having", exp.Having(this=select.args["having"].this.copy().transform(nulled)))
    return branch
