"""Small helpers over sqlglot expressions that every planner rule uses.

Why it exists: the rules (planner/changelog.py, join_rewrites.py, top_n.py, weighted_aggregates.py) split
conditions, look through aliases and refuse what they cannot run in the same words; one copy of each.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from shell.errors import UnsupportedFeatureError


def subquery_join(join: exp.Join | None) -> str | None:
    """"semi" or "anti" for the join an IN / EXISTS subquery became (planner/rules/in_exists.py: a user cannot write a
    SEMI or ANTI JOIN), else None."""
    kind = (join.kind or "").upper() if join is not None else ""
    return kind.lower() if kind in ("SEMI", "ANTI") else None


def own_conditions(join: exp.Join) -> tuple[list[exp.Expr], list[exp.Expr]]:
    """(the conditions of a join's ON that tie it to the tables before it, those on its own table alone). For the
    semi or anti join of an IN / EXISTS subquery the second are the subquery's own WHERE: they filter its table's
    rows as they enter the stage, and the first are the stage's key."""
    alias = join.this.alias_or_name.lower()
    parts = conjuncts(join.args["on"]) if join.args.get("on") is not None else []
    own = [p for p in parts if all(c.table.lower() == alias for c in p.find_all(exp.Column))]
    return [p for p in parts if not any(p is o for o in own)], own


def conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The parts of a condition joined by AND (parentheses dropped)."""
    if isinstance(condition, exp.Paren):
        return conjuncts(condition.this)
    if isinstance(condition, exp.And):
        return conjuncts(condition.this) + conjuncts(condition.expression)
    return [condition]


def group_aggregates(node: exp.Expr) -> list[exp.AggFunc]:
    """The aggregates in `node` that group rows: not those of an OVER window (one result per row)."""
    return [a for a in node.find_all(exp.AggFunc) if not isinstance(a.parent, exp.Window)]


class NotAKeyJoin(Exception):
    """An ON conjunct that is not an equality of relation n's column with one earlier relation's column."""

    def __init__(self, conjunct: exp.Expr, equality: bool):
        super().__init__(conjunct.sql())
        self.conjunct = conjunct
        self.equality = equality  # an equality of two relations' columns (but not the joined one with an earlier one)


def join_keys(condition: exp.Expr, side_of: Callable[[exp.Expr], tuple[int, str] | None],
              n: int) -> tuple[int, list[str], list[str]]:
    """(the earlier relation, its columns, relation n's columns) that the ON clause of relation n's join equates,
    `side_of` telling the (relation, column) of a column node. Raises NotAKeyJoin naming the first conjunct that
    is not such an equality (all with one and the same earlier relation)."""
    other, theirs, mine = None, [], []
    for conjunct in conjuncts(condition):
        sides = [side_of(conjunct.this), side_of(conjunct.expression)] if isinstance(conjunct, exp.EQ) else [None]
        if None in sides or sides[0][0] == sides[1][0]:
            raise NotAKeyJoin(conjunct, equality=False)
        if sides[1][0] == n:
            sides.reverse()
        (a, col_a), (b, col_b) = sides
        if a != n or b >= n or (other is not None and b != other):
            raise NotAKeyJoin(conjunct, equality=True)
        other = b
        mine.append(col_a)
        theirs.append(col_b)
    if other is None:
        raise NotAKeyJoin(condition, equality=False)
    return other, theirs, mine


def unaliased(node: exp.Expr) -> exp.Expr:
    return node.this if isinstance(node, exp.Alias) else node


def unsupported(what: str, hint: str | None = None) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(f"{what} is not supported on the changelog path", hint=hint)


def filters_as_arguments(node: exp.Expr) -> exp.Expr:
    """`node` with every `AGG(x) FILTER (WHERE c)` written as `AGG(CASE WHEN c THEN x END)` (`COUNT(*)` counts
    `CASE WHEN c THEN 1 END`): the same result, since aggregates skip NULLs, in a form that aggregates over weighted
    rows and in a keyed stage can take (a count with no row passing is 0, not NULL)."""
    def unfiltered(found: exp.Expr) -> exp.Expr:
        if not isinstance(found, exp.Filter) or not isinstance(found.this, exp.AggFunc):
            return found
        condition = found.expression.this if isinstance(found.expression, exp.Where) else found.expression
        argument = aggregate_argument(found.this)
        value = exp.Literal.number(1) if argument is None or isinstance(argument, exp.Star) else argument.copy()
        return with_aggregate_argument(found.this, exp.Case(ifs=[exp.If(this=condition.copy(), true=value)]))

    return node.transform(unfiltered)


def aggregate_argument(call: exp.AggFunc) -> exp.Expr | None:
    """What an aggregate aggregates: `x` of `AGG(x)` and of `AGG(DISTINCT x)`; None for `COUNT()`."""
    argument = call.this
    if isinstance(argument, exp.Distinct):
        return argument.expressions[0] if argument.expressions else None
    return argument


def with_aggregate_argument(call: exp.AggFunc, argument: exp.Expr) -> exp.AggFunc:
    """A copy of `call` aggregating `argument` instead, DISTINCT kept."""
    copy = call.copy()
    if isinstance(copy.this, exp.Distinct):
        copy.this.set("expressions", [argument])
    else:
        copy.set("this", argument)
    return copy
