"""ALTER TABLE's schema changes applied to a table's definition, with Flink's rules.

Why it exists: ADD, MODIFY, DROP and RENAME of columns, keys and watermarks are pure changes of a TableDef; kept
apart from the session they are checked the way Flink checks them (a column added twice, a key column dropped,
a column renamed that a computed column reads) and tested without Spark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from shell.catalog.model import Column, TableDef, Watermark
from shell.errors import CatalogError


@dataclass(frozen=True)
class Placed:
    """A column as ADD or MODIFY gives it: where it goes (`first`, or `after` a column; else at the end, or where
    it was for MODIFY)."""

    column: Column
    first: bool = False
    after: str | None = None


@dataclass(frozen=True)
class SchemaChange:
    """What one ALTER TABLE asks: `action` is ADD, MODIFY, DROP, DROP PRIMARY KEY, DROP WATERMARK, RENAME COLUMN
    or RESET."""

    action: str
    columns: tuple[Placed, ...] = ()
    primary_key: tuple[str, ...] | None = None
    watermark: Watermark | None = None
    names: tuple[str, ...] = field(default=())  # DROP: columns; RENAME COLUMN: old, new; RESET: option keys


def altered(table: TableDef, change: SchemaChange) -> TableDef:
    """`table` with `change` applied; CatalogError with Flink's reason when it cannot be."""
    action = change.action
    if action == "RESET":
        return replace(table, options={k: v for k, v in table.options.items() if k not in change.names})
    if action == "ADD":
        return _add(table, change)
    if action == "MODIFY":
        return _modify(table, change)
    if action == "DROP":
        return _drop_columns(table, change.names)
    if action == "DROP PRIMARY KEY":
        if not table.primary_key:
            raise CatalogError(f"table '{table.name}' has no primary key to drop")
        return replace(table, primary_key=[])
    if action == "DROP WATERMARK":
        if table.watermark is None:
            raise CatalogError(f"table '{table.name}' has no watermark to drop")
        return replace(table, watermark=None)
    if action == "RENAME COLUMN":
        return _rename_column(table, *change.names)
    raise CatalogError(f"ALTER TABLE ... {action} is not known")


def _index(columns: list[Column], name: str) -> int | None:
    return next((i for i, c in enumerate(columns) if c.name.lower() == name.lower()), None)


def _place(columns: list[Column], placed: Placed, table: str) -> None:
    if placed.first:
        columns.insert(0, placed.column)
    elif placed.after is not None:
        at = _index(columns, placed.after)
        if at is None:
            raise CatalogError(f"AFTER {placed.after}: table '{table}' has no column '{placed.after}'")
        columns.insert(at + 1, placed.column)
    else:
        columns.append(placed.column)


def _add(table: TableDef, change: SchemaChange) -> TableDef:
    columns = list(table.columns)
    for placed in change.columns:
        if _index(columns, placed.column.name) is not None:
            raise CatalogError(f"table '{table.name}' already has a column '{placed.column.name}'",
                               hint="ALTER TABLE ... MODIFY changes an existing column")  # fmt: skip
        _place(columns, placed, table.name)
    primary_key = list(table.primary_key)
    if change.primary_key is not None:
        if primary_key:
            raise CatalogError(f"table '{table.name}' already has a primary key ({', '.join(primary_key)})",
                               hint="ALTER TABLE ... MODIFY PRIMARY KEY replaces it")  # fmt: skip
        primary_key = list(change.primary_key)
    watermark = table.watermark
    if change.watermark is not None:
        if watermark is not None:
            raise CatalogError(f"table '{table.name}' already has a watermark",
                               hint="ALTER TABLE ... MODIFY WATERMARK replaces it")  # fmt: skip
        watermark = change.watermark
    return _checked(replace(table, columns=columns, primary_key=primary_key, watermark=watermark))


def _modify(table: TableDef, change: SchemaChange) -> TableDef:
    columns = list(table.columns)
    for placed in change.columns:
        at = _index(columns, placed.column.name)
        if at is None:
            raise CatalogError(f"table '{table.name}' has no column '{placed.column.name}' to modify",
                               hint="ALTER TABLE ... ADD adds one")  # fmt: skip
        if placed.first or placed.after is not None:
            del columns[at]
            _place(columns, placed, table.name)
        else:
            columns[at] = placed.column
    primary_key = list(table.primary_key)
    if change.primary_key is not None:
        if not primary_key:
            raise CatalogError(f"table '{table.name}' has no primary key to modify", hint="ALTER TABLE ... ADD PRIMARY KEY")
        primary_key = list(change.primary_key)
    watermark = table.watermark
    if change.watermark is not None:
        if watermark is None:
            raise CatalogError(f"table '{table.name}' has no watermark to modify", hint="ALTER TABLE ... ADD WATERMARK")
        watermark = change.watermark
    return _checked(replace(table, columns=columns, primary_key=primary_key, watermark=watermark))


def _reads(expression: str | None, column: str) -> bool:
    return bool(expression) and re.search(rf"(?<![\w`]){re.escape(column)}(?![\w`])|`{re.escape(column)}`",
                                          expression or "", re.I) is not None  # fmt: skip


def _users(table: TableDef, column: str) -> list[str]:
    """What else in the table needs `column`: the key, the watermark, computed columns, partitions."""
    users = []
    if any(k.lower() == column.lower() for k in table.primary_key):
        users.append("the primary key")
    if table.watermark is not None and (table.watermark.column.lower() == column.lower()
                                        or _reads(table.watermark.expression, column)):  # fmt: skip
        users.append("the watermark")
    users += [f"computed column '{c.name}'" for c in table.columns if c.name.lower() != column.lower() and _reads(c.expression, column)]
    if any(p.lower() == column.lower() for p in table.partitioned_by):
        users.append("PARTITIONED BY")
    return users


def _drop_columns(table: TableDef, names: tuple[str, ...]) -> TableDef:
    columns = list(table.columns)
    for name in names:
        at = _index(columns, name)
        if at is None:
            raise CatalogError(f"table '{table.name}' has no column '{name}' to drop")
        users = _users(table, name)
        if users:
            raise CatalogError(f"column '{name}' cannot be dropped: {' and '.join(users)} use it",
                               hint="drop or change those first")  # fmt: skip
        del columns[at]
    if not columns:
        raise CatalogError(f"table '{table.name}' would have no columns left")
    return replace(table, columns=columns)


def _rename_column(table: TableDef, old: str, new: str) -> TableDef:
    at = _index(table.columns, old)
    if at is None:
        raise CatalogError(f"table '{table.name}' has no column '{old}' to rename")
    if _index(table.columns, new) is not None:
        raise CatalogError(f"table '{table.name}' already has a column '{new}'")
    readers = [f"computed column '{c.name}'" for c in table.columns if _reads(c.expression, old)]
    if table.watermark is not None and _reads(table.watermark.expression, old):
        readers.append("the watermark")
    if readers:
        raise CatalogError(f"column '{old}' cannot be renamed: {' and '.join(readers)} read it",
                           hint="change those first")  # fmt: skip
    columns = list(table.columns)
    columns[at] = replace(columns[at], name=new)

    def renamed(name: str) -> str:
        return new if name.lower() == old.lower() else name

    watermark = table.watermark and replace(table.watermark, column=renamed(table.watermark.column))
    return replace(table, columns=columns, primary_key=[renamed(k) for k in table.primary_key],
                   partitioned_by=[renamed(p) for p in table.partitioned_by], watermark=watermark)  # fmt: skip


def _checked(table: TableDef) -> TableDef:
    names = {c.name.lower() for c in table.columns}
    for key in table.primary_key:
        if key.lower() not in names:
            raise CatalogError(f"PRIMARY KEY column '{key}' is not a column of table '{table.name}'")
    if table.watermark is not None and table.watermark.column.lower() not in names:
        raise CatalogError(f"WATERMARK FOR {table.watermark.column}: table '{table.name}' has no such column")
    return table
