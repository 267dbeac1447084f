"""Planning a query: resolve its tables and views, decide the engine path and whether the input ends.

The native path runs a query as one Spark streaming query; it is right when every input is append-only and
the result never has to take a row back. Anything that needs retractions (upsert inputs, aggregation without a
window) belongs to the changelog path; until that path exists such a query is refused here with a message
that names the reason, instead of silently giving a wrong answer.
"""

from __future__ import annotations

import uuid

from sqlglot import exp

from shell.catalog.model import TableDef, ViewDef
from shell.catalog.store import Catalog
from shell.connectors.base import APPEND
from shell.connectors.registry import connector_for
from shell.errors import UnsupportedFeatureError
from shell.formats.registry import format_options
from shell.planner.plan import APPEND_ONLY, CHANGELOG, NATIVE, Plan
from shell.sql.nodes import TableArg
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


def spark_name(name: str, tag: str) -> str:
    """The temporary view a relation is registered as for one query: unique, so queries never collide."""
    return f"__{tag}_" + "".join(c if c.isalnum() else "_" for c in name.lower())


def renamed(query: exp.Expr, names: dict[str, str]) -> exp.Expr:
    """A copy of `query` reading each relation from its view in `names`, still answering to its own name."""
    copy = query.copy()
    ctes = {cte.alias_or_name.lower() for cte in copy.find_all(exp.CTE)}
    for table in list(copy.find_all(exp.Table)):
        key = table.name.lower()
        if key not in names or key in ctes:
            continue
        if not table.alias and not isinstance(table.parent, TableArg):
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
        table.set("this", exp.to_identifier(names[key]))
        table.set("db", None)
        table.set("catalog", None)
    return copy


def resolve(query: exp.Expr, catalog: Catalog, tag: str) -> tuple[list[TableDef], list[tuple[str, str]], dict[str, str]]:
    """The tables a query reads (through views too), its views as (view name, Spark SQL) in dependency order,
    and the temporary view name of every relation."""
    tables: dict[str, TableDef] = {}
    view_defs: list[tuple[ViewDef, exp.Expr]] = []
    names: dict[str, str] = {}

    def visit(node: exp.Expr) -> None:
        for name in referenced_names(node):
            if name.lower() in names:
                continue
            obj = catalog.find(name)
            if isinstance(obj, ViewDef):
                names[obj.name.lower()] = spark_name(obj.name, tag)
                view_query = parse_query(obj.query_sql)
                visit(view_query)
                view_defs.append((obj, view_query))
            else:
                table = catalog.table(name)  # raises "unknown table" with a suggestion
                names[table.name.lower()] = spark_name(table.name, tag)
                tables.setdefault(table.name.lower(), table)

    visit(query)
    views = [(names[v.name.lower()], to_spark_sql(renamed(q, names))) for v, q in view_defs]
    return list(tables.values()), views, names


def is_changelog(table: TableDef, connector) -> bool:  # noqa: ANN001 - a Connector
    """Whether a table's rows can be updated or deleted: an upsert connector, or a changelog format."""
    if connector.changelog_mode != APPEND:
        return True
    value = format_options(table.options, "value") if connector.has_formats else None
    return value is not None and value[0].produces_changelog


def plan_query(query: exp.Expr, catalog: Catalog) -> Plan:
    tag = uuid.uuid4().hex[:8]
    tables, views, names = resolve(query, catalog, tag)
    connectors = {t.name: connector_for(t) for t in tables}
    updating_inputs = [t.name for t in tables if is_changelog(t, connectors[t.name])]
    if updating_inputs:
        raise UnsupportedFeatureError(
            f"reading changelog tables ({', '.join(updating_inputs)}) needs the changelog path, which is not available yet",
            hint="upsert connectors and changelog formats (debezium-json) carry updates and deletes",
        )
    return Plan(
        sources=tables,
        spark_sql=to_spark_sql(renamed(query, names)),
        path=NATIVE,
        reason="every input is append-only",
        bounded=all(connectors[t.name].is_bounded(t) for t in tables),
        output=APPEND_ONLY,
        views=views,
        source_views={t.name.lower(): names[t.name.lower()] for t in tables},
    )


__all__ = ["plan_query", "resolve", "referenced_names", "renamed", "CHANGELOG"]
