"""The rule that reads a relation and its UNNESTs as a FROM subquery when the query does more with the unnested
rows than project and filter them (aggregates, DISTINCT, OVER, joins): that subquery is then a stage's input like
any other (planner/unnest_joins.py has the rewrite and the stage that unnests rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from shell.planner.unnest_joins import in_subqueries, unnest_joins

if TYPE_CHECKING:
    from shell.planner.rules import Context


def rule(query: exp.Expr, context: Context) -> exp.Expr | None:
    """The rule: a SELECT over UNNESTs that aggregates, deduplicates or joins, with the unnested rows a subquery."""
    if not isinstance(query, exp.Select) or not unnest_joins(query):
        return None
    return in_subqueries(query, context.sources)
