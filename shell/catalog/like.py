"""`CREATE TABLE t (...) WITH (...) LIKE source (...)`: a new table derived from an existing one, as in Flink.

Flink merges the source table's parts into the new one feature by feature (constraints, generated columns,
metadata columns, options, partitions, watermarks), each with a strategy: INCLUDING (take it, and fail on a
conflict), EXCLUDING (leave it out) or OVERWRITING (take it, the new table wins on a conflict). Without options
the default is INCLUDING ALL OVERWRITING OPTIONS. Physical columns always come along, first.
"""

from __future__ import annotations

from dataclasses import replace

from shell.catalog.model import Column, ColumnKind, TableDef
from shell.errors import CatalogError, UnsupportedFeatureError

FEATURES = ("CONSTRAINTS", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS")
STRATEGIES = ("INCLUDING", "EXCLUDING", "OVERWRITING")
DEFAULT = {feature: "INCLUDING" for feature in FEATURES} | {"OPTIONS": "OVERWRITING"}


def strategies(options: list[str]) -> dict[str, str]:
    """Each feature's strategy from the LIKE options ('INCLUDING ALL', 'EXCLUDING OPTIONS', ...)."""
    chosen = dict(DEFAULT)
    for option in options:
        strategy, _, feature = option.upper().partition(" ")
        feature = feature.strip()
        if strategy not in STRATEGIES or feature not in (*FEATURES, "ALL"):
            raise UnsupportedFeatureError(f"LIKE option '{option}' is not supported")
        if feature == "ALL":
            if strategy == "OVERWRITING":
                raise CatalogError("OVERWRITING ALL is not allowed in LIKE", hint="use INCLUDING ALL or EXCLUDING ALL")
            chosen = {f: strategy for f in FEATURES}
        else:
            chosen[feature] = strategy
    return chosen


def _take(strategy: str, name: str, mine, theirs):  # noqa: ANN001, ANN202 - any part of a table
    """One feature's merged value: EXCLUDING keeps only ours, OVERWRITING prefers ours, INCLUDING forbids both."""
    if strategy == "EXCLUDING" or not theirs:
        return mine
    if not mine:
        return theirs
    if strategy == "OVERWRITING":
        return mine
    raise CatalogError(
        f"both the new table and the LIKE source define {name}",
        hint=f"use OVERWRITING {name.split()[0].upper()} or EXCLUDING it in the LIKE options",
    )


def apply_like(table: TableDef, source: TableDef) -> TableDef:
    """The table that `table` (declared with LIKE `source`) really is."""
    assert table.like is not None
    how = strategies(table.like.options)
    keep_kind = {
        ColumnKind.PHYSICAL: True,
        ColumnKind.COMPUTED: how["GENERATED"] != "EXCLUDING",
        ColumnKind.METADATA: how["METADATA"] != "EXCLUDING",
    }
    inherited: list[Column] = [c for c in source.columns if keep_kind[c.kind]]
    own_names = {c.name.lower() for c in table.columns}
    columns = []
    for column in inherited:
        if column.name.lower() in own_names:
            feature = {ColumnKind.COMPUTED: "GENERATED", ColumnKind.METADATA: "METADATA"}.get(column.kind)
            if feature is None or how[feature] != "OVERWRITING":
                raise CatalogError(f"column '{column.name}' is declared in the new table and in '{source.name}'")
            continue
        columns.append(column)
    options = source.options if how["OPTIONS"] != "EXCLUDING" else {}
    if how["OPTIONS"] == "INCLUDING":
        clash = sorted(set(options) & set(table.options))
        if clash:
            raise CatalogError(
                f"option '{clash[0]}' is set in the new table and in '{source.name}'",
                hint="LIKE ... (OVERWRITING OPTIONS) lets the new table's value win",
            )
    return replace(
        table,
        columns=columns + list(table.columns),
        options={**options, **table.options},
        primary_key=_take(how["CONSTRAINTS"], "a primary key", table.primary_key, source.primary_key),
        watermark=_take(how["WATERMARKS"], "a watermark", table.watermark, source.watermark),
        partitioned_by=_take(how["PARTITIONS"], "partitions", table.partitioned_by, source.partitioned_by),
        like=None,
    )
