"""Object names with catalog and database parts: `t`, `db.t`, `cat.db.t`, as Flink resolves them.

Why it exists: statements carry names as dotted strings (statements.py), but a part may itself hold a dot (a
Postgres `schema.table` in a JDBC catalog) or a slash (a Pulsar `tenant/namespace` database), so splitting and
joining must agree: a part with a dot or a backquote is backquoted, and `name_parts` reads backquotes back.
"""

from __future__ import annotations

from dataclasses import dataclass

from shell.errors import CatalogError

DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"


def name_parts(name: str) -> list[str]:
    """The parts of a dotted name; backquoted parts may hold dots (a doubled backquote is one backquote)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    i = 0
    while i < len(name):
        char = name[i]
        if char == "`":
            if quoted and name[i + 1 : i + 2] == "`":
                current.append("`")
                i += 1
            else:
                quoted = not quoted
        elif char == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    parts.append("".join(current))
    return parts


def quoted_part(part: str) -> str:
    return f"`{part.replace('`', '``')}`" if "." in part or "`" in part else part


def dotted(parts: list[str]) -> str:
    """The dotted name of `parts` (see `name_parts`)."""
    return ".".join(quoted_part(p) for p in parts)


@dataclass(frozen=True)
class ObjectPath:
    """Where a name leads: catalog, database and object name (spelling kept)."""

    catalog: str
    database: str
    name: str

    def __str__(self) -> str:
        return dotted([self.catalog, self.database, self.name])


def object_path(name: str, current_catalog: str, current_database: str) -> ObjectPath:
    """`name` made whole with the current catalog and database, as Flink does: `t` is in the current database,
    `db.t` in the current catalog."""
    parts = name_parts(name)
    if len(parts) > 3 or any(not p for p in parts):
        raise CatalogError(
            f"'{name}' is not a table name: expected name, database.name or catalog.database.name",
            hint="backquote a part that holds a dot: db.`schema.table`",
        )
    if len(parts) == 1:
        return ObjectPath(current_catalog, current_database, parts[0])
    if len(parts) == 2:
        return ObjectPath(current_catalog, parts[0], parts[1])
    return ObjectPath(*parts)


def database_path(name: str, current_catalog: str) -> tuple[str, str]:
    """(catalog, database) of `db` or `cat.db`."""
    parts = name_parts(name)
    if len(parts) > 2 or any(not p for p in parts):
        raise CatalogError(f"'{name}' is not a database name: expected database or catalog.database")
    return (current_catalog, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
