"""A view's query as it reads from where the view lives: names it leaves unqualified are looked up in the view's
own catalog and database, not in the one current where the view is used.

Why it exists: Flink expands a view's names when the view is created; here a view keeps the query as it was
written (SHOW CREATE VIEW prints it so), and `USE other_db` must not change what the view reads. Both places that
expand views (planner.resolve and inline_views) take the query from here.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from shell.catalog.model import ViewDef
from shell.sql.fragments import identifier
from shell.sql.parse import parse_query


def view_query(catalog: Any, name: str, view: ViewDef) -> exp.Expr:
    """`view`'s query (found under `name`), its unqualified tables given the view's catalog and database when those
    are not the current ones. A single Catalog store (no databases) gives the query as it is."""
    query = parse_query(view.query_sql)
    home_of = getattr(catalog, "home_of", None)
    if home_of is None:
        return query
    home = home_of(name)
    if home == (catalog.current_catalog, catalog.current_database):
        return query
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or not table.name:
            continue  # a table function call, not a name
        if not table.args.get("db") and table.name.lower() in ctes:
            continue
        if not table.args.get("db"):
            table.set("db", identifier(home[1]))
        if not table.args.get("catalog"):
            table.set("catalog", identifier(home[0]))
    return query
