"""What the catalog and database statements do: CREATE/DROP/ALTER/USE CATALOG, CREATE/DROP DATABASE, USE, SHOW
CATALOGS/DATABASES/CURRENT/TABLES/VIEWS/COLUMNS and DESCRIBE CATALOG, with Flink's messages and columns.

Why it exists: these statements only read and change the session's Catalogs (catalogs.py); keeping them here
keeps the session a dispatcher. Each takes the Catalogs and the statement and returns a Result.
"""

from __future__ import annotations

import re
from typing import Callable

from shell.catalog.model import TableDef, ViewDef
from shell.catalogs.catalogs import Catalogs
from shell.catalogs.kinds import CatalogDef, catalog_types
from shell.results import Message, Result, Rows
from shell.secrets import REDACTED, is_secret_key
from shell.sql import statements as st


def like(pattern: str | None, negated: bool) -> Callable[[str], bool]:
    """Flink's SHOW ... [NOT] LIKE: `%` any characters, `_` one, case-sensitive as in Flink."""
    if pattern is None:
        return lambda _: True
    regex = re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern), re.S)
    return (lambda name: not regex.fullmatch(name)) if negated else (lambda name: bool(regex.fullmatch(name)))


def create_catalog(catalogs: Catalogs, s: st.CreateCatalog) -> Result:
    created = catalogs.create_catalog(CatalogDef(s.name, dict(s.options), s.comment), s.if_not_exists)
    return Message("Catalog has been created." if created else f"Catalog '{s.name}' already exists; skipped.")


def drop_catalog(catalogs: Catalogs, s: st.DropCatalog) -> Result:
    dropped = catalogs.drop_catalog(s.name, s.if_exists)
    return Message("Catalog has been removed." if dropped else f"Catalog '{s.name}' does not exist; skipped.")


def alter_catalog(catalogs: Catalogs, s: st.AlterCatalog) -> Result:
    catalogs.alter_catalog(s.name, dict(s.options), s.comment)
    return Message("Catalog has been altered.")


def use_catalog(catalogs: Catalogs, s: st.UseCatalog) -> Result:
    catalogs.use_catalog(s.name)
    return Message(f"Catalog changed: {catalogs.current_catalog}.{catalogs.current_database}.")


def create_database(catalogs: Catalogs, s: st.CreateDatabase) -> Result:
    created = catalogs.create_database(s.name, s.comment, s.if_not_exists)
    return Message("Database has been created." if created else f"Database '{s.name}' already exists; skipped.")


def drop_database(catalogs: Catalogs, s: st.DropDatabase) -> Result:
    dropped = catalogs.drop_database(s.name, s.if_exists, s.cascade)
    return Message("Database has been removed." if dropped else f"Database '{s.name}' does not exist; skipped.")


def use(catalogs: Catalogs, s: st.Use) -> Result:
    catalogs.use_database(s.database)
    return Message(f"Database changed: {catalogs.current_catalog}.{catalogs.current_database}.")


def show(catalogs: Catalogs, s: st.Show) -> Result | None:
    """SHOW for catalogs, databases, tables, views and columns; None for the kinds the session answers."""
    keep = like(s.like, s.not_like)
    kind = s.kind.upper()
    if kind == "CATALOGS":
        return Rows(["catalog name"], [(n,) for n in catalogs.catalog_names() if keep(n)])
    if kind == "CURRENT CATALOG":
        return Rows(["current catalog name"], [(catalogs.current_catalog,)])
    if kind == "CURRENT DATABASE":
        return Rows(["current database name"], [(catalogs.current_database,)])
    if kind == "DATABASES":
        return Rows(["database name"], [(n,) for n in catalogs.databases(s.scope) if keep(n)])
    if kind in ("TABLES", "VIEWS"):
        model = TableDef if kind == "TABLES" else ViewDef
        names = catalogs.names(model, s.scope)
        return Rows([f"{kind[:-1].lower()} name"], [(n,) for n in names if keep(n)])
    if kind == "COLUMNS":
        table = catalogs.find(s.scope or "")
        if table is None:
            catalogs.table(s.scope or "")  # the unknown-table error, with a suggestion
        columns = table.columns if isinstance(table, TableDef) else []
        if isinstance(table, ViewDef):
            return Rows(["name"], [(n,) for n in table.columns or [] if keep(n)])
        return Rows(["name", "type", "null"], [(c.name, c.data_type or f"AS {c.expression}", "TRUE" if c.nullable else "FALSE")
                                               for c in columns if keep(c.name)])  # fmt: skip
    return None


def describe_catalog(catalogs: Catalogs, s: st.DescribeCatalog) -> Result:
    definition = catalogs.definition(s.name)
    kind = catalog_types().get(definition.type)
    rows = [("name", definition.name), ("type", definition.type), ("comment", definition.comment or "")]
    if s.extended:
        rows += [(f"option:{k}", REDACTED if is_secret_key(k) else v) for k, v in sorted(definition.options.items())
                 if k != "type"]  # fmt: skip
        rows.append(("kind", kind.description if kind else ""))
        opened = catalogs.catalog(s.name)
        rows.append(("databases", ", ".join(opened.databases())))
        rows.append(("default database", opened.default_database))
    return Rows(["info name", "info value"], rows)


HANDLERS: dict[type, Callable[[Catalogs, st.Statement], Result]] = {
    st.CreateCatalog: create_catalog,
    st.DropCatalog: drop_catalog,
    st.AlterCatalog: alter_catalog,
    st.UseCatalog: use_catalog,
    st.CreateDatabase: create_database,
    st.DropDatabase: drop_database,
    st.Use: use,
    st.DescribeCatalog: describe_catalog,
}
