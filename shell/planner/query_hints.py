"""Flink's query hints that are not carried out, refused where they are written: `/*+ STATE_TTL(...) */` (the
session's `table.exec.state.ttl` is), `/*+ LOOKUP(...) */` and the join strategy hints after SELECT, and an OPTIONS
hint after the name of a WITH query.

Why it exists: a hint changes what a query does or how (the state it keeps, how a lookup retries). The parser
accepts them, so without this module a query with one ran as if the hint were not there: silently not what its
author asked for. Each is refused, positioned, with what to do instead. The dynamic table options
`/*+ OPTIONS(...) */` after a table are carried out (table_options.py).
"""

from __future__ import annotations


from sqlglot import exp

from shell.errors import UnsupportedFeatureError
from shell.planner.table_options import has_hint
from shell.sql.positions import at_name

JOIN_STRATEGIES = {"BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "NEST_LOOP"}

WHY = {
    "STATE_TTL": ("the STATE_TTL hint is not carried out: a TTL per table of the query is not offered",
                  "remove the hint; SET 'table.exec.state.ttl' = '..' gives the job's joins a state TTL, and a "
                  "window (TUMBLE, an interval join) bounds the state of any aggregation or join"),
    "LOOKUP": ("lookup hints (retries, asynchronous lookups) are not carried out",
               "remove the hint: a lookup join reads its table once per micro-batch (docs/semantics.md)"),
}


def refuse_hints(query: exp.Expr) -> None:
    """Raise for the first query hint in `query` that is not carried out, pointed at it."""
    for hint in query.find_all(exp.Hint):
        first = hint.expressions[0] if hint.expressions else None
        name = (first.name if isinstance(first, (exp.Anonymous, exp.Func)) and first.name else
                first.sql() if first is not None else "").upper()
        if name in JOIN_STRATEGIES:
            why = (f"the join hint {name} is not carried out: Spark chooses how a streaming query joins",
                   "remove the hint")
        else:
            why = WHY.get(name, (f"the query hint {name or '/*+ */'} is not supported", "remove the hint"))
        # sqlglot parses a hint's text on its own: its nodes' positions are within the hint, so the error keeps
        # the statement's position
        raise UnsupportedFeatureError(why[0], hint=why[1])
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        if table.name.lower() in ctes and has_hint(table):
            raise at_name(UnsupportedFeatureError(
                f"an OPTIONS hint applies to a table, and '{table.name}' is a WITH query",
                hint="write the hint after the table inside the WITH query"), table)
