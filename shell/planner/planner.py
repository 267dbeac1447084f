"""Planning a query: resolve its tables and views, decide the engine path and whether the input ends.

The native path runs a query as one Spark streaming query; it is right when every input is append-only and
the result never has to take a row back. Anything that needs retractions (upsert inputs, aggregation without a
window) belongs to the changelog path; until that path exists such a query is refused here with a message
that names the reason, instead of silently giving a wrong answer.
"""

from __future__ import annotations

from sqlglot import exp

from shell.catalog.model import TableDef, ViewDef
from shell.catalog.store import Catalog
from shell.connectors.base import APPEND
from shell.connectors.registry import connector_for
from shell.errors import UnsupportedFeatureError
from shell.planner.plan import APPEND_ONLY, CHANGELOG, NATIVE, Plan
from shell.sql.parse import parse_query
from shell.sql.translate import to_spark_sql


def referenced_names(query: exp.Expr) -> list[str]:
    """Names of the tables and views a query reads, in order of appearance, without its own CTE names."""
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    names: list[str] = []
    for table in query.find_all(exp.Table):
        name = table.name
        if name and name.lower() not in ctes and name.lower() not in (n.lower() for n in names):
            names.append(name)
    return names


def resolve(query: exp.Expr, catalog: Catalog) -> tuple[list[TableDef], list[tuple[str, str]]]:
    """The tables a query reads (through views too) and its views as (name, Spark SQL), dependencies first."""
    tables: dict[str, TableDef] = {}
    views: list[tuple[str, str]] = []
    seen_views: set[str] = set()

    def visit(node: exp.Expr) -> None:
        for name in referenced_names(node):
            obj = catalog.find(name)
            if isinstance(obj, ViewDef):
                if obj.name.lower() in seen_views:
                    continue
                seen_views.add(obj.name.lower())
                view_query = parse_query(obj.query_sql)
                visit(view_query)
                views.append((obj.name, to_spark_sql(view_query)))
            else:
                table = catalog.table(name)  # raises "unknown table" with a suggestion
                tables.setdefault(table.name.lower(), table)

    visit(query)
    return list(tables.values()), views


def plan_query(query: exp.Expr, catalog: Catalog) -> Plan:
    tables, views = resolve(query, catalog)
    connectors = {t.name: connector_for(t) for t in tables}
    updating_inputs = [t.name for t in tables if connectors[t.name].changelog_mode != APPEND]
    if updating_inputs:
        raise UnsupportedFeatureError(
            f"reading upsert tables ({', '.join(updating_inputs)}) needs the changelog path, which is not available yet"
        )
    return Plan(
        sources=tables,
        spark_sql=to_spark_sql(query),
        path=NATIVE,
        reason="every input is append-only",
        bounded=all(connectors[t.name].is_bounded(t) for t in tables),
        output=APPEND_ONLY,
        views=views,
    )


__all__ = ["plan_query", "resolve", "referenced_names", "CHANGELOG"]
