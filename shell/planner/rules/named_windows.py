"""The rule that writes each `OVER w` as the WINDOW clause's definition of `w`, so the OVER stage reads every
window's PARTITION BY, ORDER BY and frame from the call itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from shell.planner.over_windows import over_calls
from shell.planner.sql_parts import unsupported

if TYPE_CHECKING:
    from shell.planner.rules import Context


def rule(query: exp.Expr, context: Context) -> exp.Expr | None:
    """The rule: a SELECT of OVER aggregates with a WINDOW clause or a named window, with each written out."""
    calls = over_calls(query)
    if not calls or not (query.args.get("windows") or any(_named(w) for w in calls)):
        return None
    return with_named_windows(query)


def _named(window: exp.Window) -> bool:
    return window.args.get("alias") is not None and not window.args.get("partition_by") and not window.args.get("order")


def with_named_windows(select: exp.Select) -> exp.Select:
    """A copy with every `OVER w` written as the WINDOW clause's `w`, and no WINDOW clause."""
    named = {w.name.lower(): w for w in select.args.get("windows") or []}
    query = select.copy()
    for window in over_calls(query):
        reference = window.args.get("alias")
        if reference is None or window.args.get("partition_by") or window.args.get("order"):
            continue
        definition = named.get(reference.name.lower())
        if definition is None:
            raise unsupported(f"OVER {reference.name}, a window the WINDOW clause does not define",
                              hint="define it: WINDOW w AS (PARTITION BY .. ORDER BY ..)")
        for part in ("partition_by", "order", "spec"):
            value = definition.args.get(part)
            window.set(part, [v.copy() for v in value] if isinstance(value, list) else value.copy() if value else None)
        window.set("alias", None)
    query.set("windows", None)
    return query
