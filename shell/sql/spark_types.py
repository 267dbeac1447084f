"""Spark data types back to Flink SQL type text: the columns of a table made from a query's result.

Why it exists: CREATE TABLE ... AS SELECT declares its table with the types the query produces, and only Spark
knows them once it has analysed the query. This is the inverse of types.py, for the types Spark's results have:
Spark's TIMESTAMP is an instant (Flink's TIMESTAMP_LTZ(3)), TIMESTAMP_NTZ a wall-clock time (TIMESTAMP(3)).
"""

from __future__ import annotations

from typing import Any

SIMPLE = {
    "string": "STRING", "boolean": "BOOLEAN", "binary": "BYTES", "byte": "TINYINT", "short": "SMALLINT",
    "integer": "INT", "long": "BIGINT", "float": "FLOAT", "double": "DOUBLE", "date": "DATE",
    "timestamp": "TIMESTAMP_LTZ(3)", "timestamp_ntz": "TIMESTAMP(3)", "void": "STRING",
}


def flink_type(data_type: Any) -> str:
    """Flink type text of a pyspark DataType (`StructType` -> `ROW<...>`)."""
    name = data_type.typeName()
    if name in SIMPLE:
        return SIMPLE[name]
    if name == "decimal":
        return f"DECIMAL({data_type.precision}, {data_type.scale})"
    if name == "array":
        return f"ARRAY<{flink_type(data_type.elementType)}>"
    if name == "map":
        return f"MAP<{flink_type(data_type.keyType)}, {flink_type(data_type.valueType)}>"
    if name == "struct":
        fields = ", ".join(f"{_quoted(f.name)} {flink_type(f.dataType)}" for f in data_type.fields)
        return f"ROW<{fields}>"
    if name.startswith("varchar") or name.startswith("char"):
        return "STRING"
    return "STRING"


def _quoted(name: str) -> str:
    import re

    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else "`" + name.replace("`", "``") + "`"
