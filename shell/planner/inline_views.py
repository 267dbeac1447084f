"""Views and common table expressions written into the query that reads them, as FROM subqueries.

Why it exists: the changelog path plans a query as a tree of keyed stages, and a view or a CTE is a part of that
tree like any other (Flink expands them the same way). A view over an upsert table, a CTE that aggregates, a view
of a view: each becomes the subquery it stands for, under the name the query reads it by, and the changelog
planner makes it a stage of its own or, when it only filters and projects append-only rows, runs it in Spark as
written.

    CREATE VIEW big AS SELECT uid, total FROM orders WHERE total > 100;
    WITH per_user AS (SELECT uid, SUM(total) AS s FROM big GROUP BY uid) SELECT * FROM per_user AS p
->
    SELECT * FROM (SELECT uid, SUM(total) AS s FROM (SELECT uid, total FROM orders WHERE total > 100) AS big
                   GROUP BY uid) AS p

A view read through `TABLE(...)` (a window table function's argument) stays as it is: the native path registers
it as a Spark view.
"""

from __future__ import annotations

from sqlglot import exp

from shell.catalog.model import ViewDef
from shell.catalog.store import Catalog
from shell.errors import UnsupportedFeatureError
from shell.planner.relations import written_name
from shell.planner.view_bodies import view_query
from shell.sql.census import Census
from shell.sql.nodes import TableArg

MAX_DEPTH = 32  # views of views: deeper than this is a cycle, or nothing a person wrote by hand


def inlined(query: exp.Expr, catalog: Catalog) -> exp.Expr:
    """A copy of `query` with every CTE and catalog view it reads replaced by its query, as a FROM subquery."""
    return _inline(query.copy(), catalog, {}, 0)


def reads_views(query: exp.Expr, catalog: Catalog, census: Census | None = None) -> bool:
    """Whether `query` has a WITH clause or reads a catalog view anywhere. `census`: the query's own (sql/census.py)."""
    if census.has(exp.CTE) if census is not None else query.find(exp.CTE):
        return True
    tables = census.tables if census is not None else query.find_all(exp.Table)
    return any(isinstance(catalog.find(written_name(t)), ViewDef) for t in tables if t.name)


def _inline(query: exp.Expr, catalog: Catalog, ctes: dict[str, exp.Expr], depth: int) -> exp.Expr:
    if depth > MAX_DEPTH:
        raise UnsupportedFeatureError(f"views nested more than {MAX_DEPTH} deep", hint="a view may read itself")
    scope = dict(ctes)
    with_ = query.args.get("with_")
    if with_ is not None:
        if with_.args.get("recursive"):
            raise UnsupportedFeatureError("WITH RECURSIVE over a stream is not supported")
        for cte in with_.expressions:  # each may read the ones before it
            scope[cte.alias_or_name.lower()] = _inline(cte.this.copy(), catalog, scope, depth + 1)
        query.set("with_", None)

    def replace(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Table) or not node.name or isinstance(node.parent, TableArg):
            return node
        name = written_name(node).lower()
        if name in scope:
            body = scope[name].copy()
        else:
            found = catalog.find(written_name(node))
            if not isinstance(found, ViewDef):
                return node
            body = _inline(view_query(catalog, written_name(node), found), catalog, {}, depth + 1)
        if node.args.get("version") is not None:
            raise UnsupportedFeatureError(f"FOR SYSTEM_TIME AS OF the view '{node.name}'",
                                          hint="a temporal join reads a table with a PRIMARY KEY and a WATERMARK")
        return exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(node.alias_or_name)))

    return query.transform(replace)
