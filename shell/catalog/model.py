"""The catalog's data model: tables (columns, watermark, key, options) and views.

Why it exists: a parsed CREATE TABLE is kept as plain dataclasses, never as SQL to re-run, so
connectors, planner and catalog store read one typed structure. Types and expressions are kept
as Flink SQL text (normalized by our dialect's printer, e.g. "TIMESTAMP(3)"), and everything is
JSON-serializable through to_dict()/from_dict(). Names keep their spelling; lookups ignore case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from shell.secrets import remember_secret_options


class ColumnKind(str, Enum):
    """Physical columns are read/written; computed ones are `AS expr`; metadata ones map to
    connector metadata (`METADATA [FROM 'key'] [VIRTUAL]`)."""

    PHYSICAL = "PHYSICAL"
    COMPUTED = "COMPUTED"
    METADATA = "METADATA"


@dataclass
class Column:
    """One column. `data_type` is None for computed columns (their type comes from `expression`)."""

    name: str
    data_type: str | None
    kind: ColumnKind = ColumnKind.PHYSICAL
    expression: str | None = None
    metadata_key: str | None = None
    virtual: bool = False
    nullable: bool = True
    comment: str | None = None

    @property
    def is_processing_time(self) -> bool:
        """A computed column `c AS PROCTIME()`: the time a row is processed, not an event time."""
        return (self.expression or "").replace(" ", "").upper() == "PROCTIME()"

    @property
    def is_physical(self) -> bool:
        return self.kind is ColumnKind.PHYSICAL

    @property
    def is_persisted(self) -> bool:
        """Written by a sink: physical columns and non-virtual metadata columns."""
        return self.kind is ColumnKind.PHYSICAL or (
            self.kind is ColumnKind.METADATA and not self.virtual
        )

    @property
    def metadata_name(self) -> str:
        """The metadata key this column reads (the column name when no FROM 'key' was given)."""
        return self.metadata_key or self.name

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "data_type": self.data_type,
            "kind": self.kind.value,
            "expression": self.expression,
            "metadata_key": self.metadata_key,
            "virtual": self.virtual,
            "nullable": self.nullable,
            "comment": self.comment,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Column:
        return cls(
            name=data["name"],
            data_type=data.get("data_type"),
            kind=ColumnKind(data.get("kind", "PHYSICAL")),
            expression=data.get("expression"),
            metadata_key=data.get("metadata_key"),
            virtual=bool(data.get("virtual", False)),
            nullable=bool(data.get("nullable", True)),
            comment=data.get("comment"),
        )


@dataclass
class Watermark:
    """`WATERMARK FOR column AS expression` (expression as Flink SQL text)."""

    column: str
    expression: str

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.column, "expression": self.expression}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Watermark:
        return cls(column=data["column"], expression=data["expression"])


@dataclass
class LikeClause:
    """`LIKE source (INCLUDING ALL, ...)`: options as upper-case 'STRATEGY WHAT' strings."""

    source: str
    options: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "options": list(self.options)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LikeClause:
        return cls(source=data["source"], options=list(data.get("options", [])))


@dataclass
class TableDef:
    """A table as declared by CREATE TABLE."""

    name: str
    columns: list[Column] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    primary_key: list[str] = field(default_factory=list)
    watermark: Watermark | None = None
    comment: str | None = None
    partitioned_by: list[str] = field(default_factory=list)
    like: LikeClause | None = None

    def __post_init__(self) -> None:
        remember_secret_options(self.options)  # hidden wherever they show up in this process (shell/secrets.py)

    @property
    def connector(self) -> str | None:
        return self.options.get("connector")

    def column(self, name: str) -> Column | None:
        """The column called `name`, ignoring case, or None."""
        lowered = name.lower()
        return next((c for c in self.columns if c.name.lower() == lowered), None)

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def physical_columns(self) -> list[Column]:
        return [c for c in self.columns if c.kind is ColumnKind.PHYSICAL]

    def computed_columns(self) -> list[Column]:
        return [c for c in self.columns if c.kind is ColumnKind.COMPUTED]

    def metadata_columns(self) -> list[Column]:
        return [c for c in self.columns if c.kind is ColumnKind.METADATA]

    def persisted_columns(self) -> list[Column]:
        """Columns a sink writes: physical and non-virtual metadata columns."""
        return [c for c in self.columns if c.is_persisted]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "columns": [c.to_dict() for c in self.columns],
            "options": dict(self.options),
            "primary_key": list(self.primary_key),
            "watermark": self.watermark.to_dict() if self.watermark else None,
            "comment": self.comment,
            "partitioned_by": list(self.partitioned_by),
            "like": self.like.to_dict() if self.like else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableDef:
        return cls(
            name=data["name"],
            columns=[Column.from_dict(c) for c in data.get("columns", [])],
            options={str(k): str(v) for k, v in data.get("options", {}).items()},
            primary_key=list(data.get("primary_key", [])),
            watermark=Watermark.from_dict(data["watermark"]) if data.get("watermark") else None,
            comment=data.get("comment"),
            partitioned_by=list(data.get("partitioned_by", [])),
            like=LikeClause.from_dict(data["like"]) if data.get("like") else None,
        )


@dataclass
class ViewDef:
    """A view: its query as Flink SQL text (printed by our dialect), optional column names."""

    name: str
    query_sql: str
    columns: list[str] | None = None
    comment: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "query_sql": self.query_sql,
            "columns": list(self.columns) if self.columns is not None else None,
            "comment": self.comment,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ViewDef:
        columns = data.get("columns")
        return cls(
            name=data["name"],
            query_sql=data["query_sql"],
            columns=list(columns) if columns is not None else None,
            comment=data.get("comment"),
        )
