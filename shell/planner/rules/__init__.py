"""The changelog planner's rewrite rules, and the driver that applies them.

Why it exists: before the changelog planner groups a query into stages, it rewrites the query into the shapes it
has stages for: an INTERSECT into a GROUP BY over a UNION ALL, an IN or EXISTS subquery into a semi or anti join,
a scalar subquery into a LEFT JOIN of its aggregate, GROUPING SETS into a UNION ALL, `ORDER BY .. LIMIT` into a
Top-N, and so on. Each of those rewrites is a rule here, one per module: a pure function `rule(query, context)`
that gives the rewritten tree, or None where it does not apply (it never changes the tree it is given). The
driver, `normalized`, applies the rules in order and starts again from the first after any of them applied,
until none does: a rule may make what another rewrites, before or after it in the order, and no rule needs to
know which ran before it. What it gives, planner/changelog.py plans by
its shape.

Each module's tests show the tree before and after (tests/unit/rules/).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sqlglot import exp

from shell.planner.model import Sources


@dataclass(frozen=True)
class Context:
    """What a rule may ask besides the tree: the query's tables and their kinds."""

    sources: Sources


Rule = Callable[[exp.Expr, Context], "exp.Expr | None"]

MAX_STEPS = 1000  # a rule that keeps applying to its own output is a bug: say so rather than loop for ever


def normalized(query: exp.Expr, context: Context, rules: "list[Rule] | None" = None) -> exp.Expr:
    """`query` rewritten by `rules` (every rule, in order, when not given) until none applies."""
    rules = ORDER if rules is None else rules
    for _ in range(MAX_STEPS):
        for rule in rules:
            rewritten = rule(query, context)
            if rewritten is not None:
                query = rewritten
                break
        else:
            return query
    raise RuntimeError(f"the planner's rules did not settle on {query.sql()[:200]}")


def _order() -> list[Rule]:
    from shell.planner.rules import (
        grouping_sets, in_exists, intersect_except, named_windows, scalar_subqueries, sorted_limit, unnest_subqueries,
    )

    return [intersect_except.rule, in_exists.rule, scalar_subqueries.rule, unnest_subqueries.rule,
            grouping_sets.rule, named_windows.rule, sorted_limit.rule]


ORDER: list[Rule] = _order()
