"""Flink data types to Spark SQL data types, by table.

Why it exists: connectors build Spark schemas from the catalog's Flink type text and the
translator rewrites CAST targets; both need one mapping. Flink's TIMESTAMP(p) and
TIMESTAMP_LTZ(p) both become Spark TIMESTAMP (precision is dropped: Spark keeps microseconds);
CHAR/VARCHAR/STRING become STRING; BINARY/VARBINARY/BYTES become BINARY; ROW becomes STRUCT.
"""

from __future__ import annotations

from sqlglot import exp

from shell.errors import SqlSyntaxError, UnsupportedFeatureError

# Flink type (sqlglot DType) -> Spark type name, for types without nested parts.
SIMPLE_TYPES: dict[exp.DType, str] = {
    exp.DType.CHAR: "STRING",
    exp.DType.VARCHAR: "STRING",
    exp.DType.TEXT: "STRING",
    exp.DType.BOOLEAN: "BOOLEAN",
    exp.DType.BINARY: "BINARY",
    exp.DType.VARBINARY: "BINARY",
    exp.DType.BLOB: "BINARY",
    exp.DType.TINYINT: "TINYINT",
    exp.DType.SMALLINT: "SMALLINT",
    exp.DType.INT: "INT",
    exp.DType.BIGINT: "BIGINT",
    exp.DType.FLOAT: "FLOAT",
    exp.DType.DOUBLE: "DOUBLE",
    exp.DType.DATE: "DATE",
    exp.DType.TIME: "STRING",  # Spark has no TIME type for streaming schemas
    exp.DType.TIMESTAMP: "TIMESTAMP",
    exp.DType.TIMESTAMPLTZ: "TIMESTAMP",
    exp.DType.TIMESTAMPTZ: "TIMESTAMP",
    exp.DType.TIMESTAMPNTZ: "TIMESTAMP_NTZ",
    exp.DType.NULL: "VOID",
}
DEFAULT_DECIMAL = (10, 0)  # Flink's DECIMAL without precision is DECIMAL(10, 0)


def flink_type_to_spark(type_text_or_expr: str | exp.DataType) -> str:
    """Spark SQL type text for a Flink type ('ROW<a INT>' -> 'STRUCT<a: INT>')."""
    if isinstance(type_text_or_expr, str):
        from shell.sql.fragments import parse_type

        data_type = parse_type(type_text_or_expr)
    else:
        data_type = type_text_or_expr
    return _spark(data_type)


def _spark(data_type: exp.DataType) -> str:
    kind = data_type.this
    if kind in SIMPLE_TYPES:
        return SIMPLE_TYPES[kind]
    params = data_type.expressions
    if kind == exp.DType.DECIMAL:
        values = [p.name for p in params] or [str(v) for v in DEFAULT_DECIMAL]
        return f"DECIMAL({', '.join(values)})"
    if kind == exp.DType.ARRAY:
        _require(params, 1, "ARRAY<INT>")
        return f"ARRAY<{_spark(params[0])}>"
    if kind == exp.DType.MAP:
        _require(params, 2, "MAP<STRING, INT>")
        return f"MAP<{_spark(params[0])}, {_spark(params[1])}>"
    if kind == exp.DType.STRUCT:
        fields = [f"{_field_name(f.name)}: {_spark(f.args['kind'])}" for f in params]
        return f"STRUCT<{', '.join(fields)}>"
    name = kind.value if isinstance(kind, exp.DType) else str(kind)
    raise UnsupportedFeatureError(f"type {name} has no Spark equivalent")


def _require(params: list, count: int, example: str) -> None:
    if len(params) != count:
        kind = example.split("<")[0]
        raise SqlSyntaxError(f"{kind} needs {'an element type' if count == 1 else 'a key and a value type'}", hint=f"e.g. {example}")


def _field_name(name: str) -> str:
    if exp.SAFE_IDENTIFIER_RE.match(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def spark_type_node(data_type: exp.DataType) -> exp.DataType:
    """The Spark DataType node for a Flink one (used to rewrite CAST targets)."""
    return exp.DataType.build(_spark(data_type), dialect="spark")
