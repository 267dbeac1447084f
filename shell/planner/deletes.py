"""The keys a `DELETE FROM t WHERE ...` deletes, checked against the table before anything is written.

Why it exists: on a topic, deleting a row is writing a tombstone (a NULL value) for its key, so DELETE is only
meaningful on an upsert table and only for keys named in full. This module turns the WHERE into those keys
(`k = lit`, `k IN (lits)`, ANDed over every primary key column; IN on several columns deletes every combination)
or refuses the statement with an error pointed at what is wrong. The engine writes the keys as `-D` rows through
the table's own upsert sink (engine/sinks.py, write_values), which encodes the key and sends the NULL value.
"""

from __future__ import annotations

from itertools import product

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.connectors.base import UPSERT
from shell.connectors.registry import connector_for
from shell.errors import OptionError, StreamshellError, UnsupportedFeatureError
from shell.sql import statements as st
from shell.sql.positions import at_name, name_position

TEXT_TYPES = ("STRING", "VARCHAR", "CHAR")


def deleted_keys(statement: st.Delete, table: TableDef) -> list[list[exp.Expr]]:
    """One list of literals per distinct key, in the order of `table.primary_key`."""
    connector = connector_for(table)
    if connector.changelog_mode != UPSERT or not table.primary_key:
        raise at_name(OptionError(
            f"DELETE FROM writes a tombstone, which only an upsert table (upsert-kafka, upsert-pulsar) has;"
            f" '{table.name}' is a '{connector.name}' table",
            hint="declare the table with a PRIMARY KEY and 'connector' = 'upsert-kafka' or 'upsert-pulsar'",
        ), statement.node.this if statement.node is not None else None)
    key = {name.lower(): name for name in table.primary_key}
    values: dict[str, list[exp.Expr]] = {}
    for condition in _conjuncts(statement.where):
        column, literals = _key_condition(condition, table)
        name = column.name.lower()
        if name not in key or name in values:
            why = f"is not in the primary key ({', '.join(table.primary_key)})" if name not in key else "is named twice"
            raise _pointed(UnsupportedFeatureError(
                f"DELETE FROM {table.name}: column '{column.name}' {why}",
                hint=_hint(table),
            ), column)
        values[name] = literals
    missing = [name for lower, name in key.items() if lower not in values]
    if missing:
        raise _pointed(UnsupportedFeatureError(
            f"DELETE FROM {table.name}: the WHERE does not name primary key column {', '.join(missing)}",
            hint=_hint(table),
        ), statement.where)
    keys: dict[tuple[str, ...], list[exp.Expr]] = {}
    for combination in product(*(values[lower] for lower in key)):
        keys.setdefault(tuple(v.sql() for v in combination), list(combination))
    return list(keys.values())


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    condition = condition.unnest()
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    return [condition]


def _key_condition(condition: exp.Expr, table: TableDef) -> tuple[exp.Column, list[exp.Expr]]:
    """`k = lit` or `k IN (lits)` (either side of '='): the column and its literals; anything else is refused."""
    column, literals = None, []
    if isinstance(condition, exp.EQ):
        column, other = condition.this.unnest(), condition.expression.unnest()
        if not isinstance(column, exp.Column):
            column, other = other, column
        literals = [other]
    elif isinstance(condition, exp.In) and not condition.args.get("query"):
        column, literals = condition.this.unnest(), [e.unnest() for e in condition.expressions]
    if not isinstance(column, exp.Column) or not literals:
        raise _pointed(UnsupportedFeatureError(
            f"DELETE FROM {table.name}: the WHERE can only compare the primary key with literals, with '=' or IN",
            hint=_hint(table),
        ), condition)
    for literal in literals:
        if not _is_literal(literal):
            raise _pointed(UnsupportedFeatureError(
                f"DELETE FROM {table.name}: '{column.name}' must be compared with a literal"
                + (" (a key is never NULL)" if isinstance(literal, exp.Null) else ""),
                hint=_hint(table),
            ), literal, condition)
    return column, literals


def _is_literal(node: exp.Expr) -> bool:
    """A constant: literals, signs, casts of them (TIMESTAMP '...'); no column, subquery, function or NULL."""
    for part in node.walk():
        if isinstance(part, (exp.Column, exp.Query, exp.Subquery, exp.Null, exp.Star)):
            return False
        if isinstance(part, exp.Func) and not isinstance(part, exp.Cast):
            return False
    return True


def _hint(table: TableDef) -> str:
    types = {c.name.lower(): (c.data_type or "").upper() for c in table.columns}
    named = [f"{k} = '...'" if types.get(k.lower(), "").startswith(TEXT_TYPES) else f"{k} = ..."
             for k in table.primary_key]
    return f"name the whole primary key: WHERE {' AND '.join(named)} (or IN (...) for several keys)"


def _pointed(error: StreamshellError, *nodes: exp.Expr) -> StreamshellError:
    """`error` at the first name or literal that carries a position, in `nodes` in turn (NULL has none)."""
    for node in nodes:
        for part in node.walk(bfs=False):
            if name_position(part) is not None:
                return at_name(error, part)
    return error
