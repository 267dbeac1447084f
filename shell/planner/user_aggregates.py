"""Planning a query that calls user aggregate functions: the calls made visible to the planner as aggregates.

Why it exists: the planner (planner.py) decides between the native and the changelog path by the aggregates a
query holds, and it knows a call is an aggregate by its node. A user aggregate `f(x)` is a plain call until it
is rewritten as `f(collect_list(struct(x)))` (shell/functions/calls.py), so this step rewrites the query's own calls
before planning; the translator rewrites those in views the same way when it meets them.
"""

from __future__ import annotations

from sqlglot import exp

from shell.functions import calls
from shell.planner.planner import plan_query as _plan_query
from shell.planner.plan import Plan


def plan_query(query: exp.Expr, catalog, state_ttl: bool = False) -> Plan:  # noqa: ANN001 - a Catalog
    """shell.planner.planner.plan_query, after the query's user aggregate calls are rewritten."""
    calls.refuse_table_functions_as_scalars(query)
    names = calls.aggregate_names()
    if names and any(isinstance(n, exp.Anonymous) and n.name.lower() in names for n in query.find_all(exp.Anonymous)):
        query = query.copy()
        for node in list(query.find_all(exp.Anonymous)):
            if node.name.lower() in names:
                node.replace(calls.scalar_call(node.name, list(node.expressions), builtin=False))
    return _plan_query(query, catalog, state_ttl)
