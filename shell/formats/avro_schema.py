"""Avro schemas and Flink SQL types, both ways: the schema a table's columns stand for, and the columns of a schema.

Why it exists: the `avro` format needs the Avro schema of a table's columns (derived as Flink's
AvroSchemaConverter.convertToSchema does, or given with 'avro.schema' and checked against the columns), and a
catalog over a schema registry (Pulsar's) needs the other direction: the Flink SQL columns of an Avro record
schema. Both are plain data (schemas as the dicts of their JSON), no Spark, so they are tested without it.

Flink SQL -> Avro (derived schemas), as Flink writes them:

| Flink SQL type | Avro type |
| --- | --- |
| CHAR, VARCHAR, STRING | string |
| BOOLEAN | boolean |
| BINARY, VARBINARY, BYTES | bytes |
| DECIMAL(p, s) | bytes, logical type decimal(p, s) |
| TINYINT, SMALLINT, INT | int |
| BIGINT | long |
| FLOAT / DOUBLE | float / double |
| DATE | int, logical type date |
| TIMESTAMP(p), p <= 3 / p <= 6 | long, timestamp-millis / timestamp-micros (local-timestamp-* when legacy mapping is off) |
| TIMESTAMP_LTZ(p), p <= 3 / p <= 6 | long, timestamp-millis / timestamp-micros |
| ARRAY<T> | array of T |
| MAP<STRING, T> | map of T (Avro map keys are strings) |
| ROW<...> | record |

A nullable type is the union ["null", T] with default null; a NOT NULL column is T alone. The top-level record is
`org.apache.flink.avro.generated.record`, a nested one `<parent name>_<field name>` (Flink's names). TIME and
timestamps of more than 6 fraction digits are refused (Spark has no TIME type; Avro no finer timestamps).

Avro -> Flink SQL (schemas from a registry): the same table read backwards, plus enum -> STRING, fixed -> BYTES
(DECIMAL with a decimal logical type), string with any logical type (uuid) -> STRING, time-millis -> INT and
time-micros -> BIGINT (Flink: TIME(3) and TIME(6)), ["null", T] -> T nullable, and a union of several non-null
types -> ROW<member0 T0, member1 T1, ...> (one member set, the others NULL: Spark's reading of such a union;
Flink has no SQL type for it).
"""

from __future__ import annotations

import json
import re
from typing import Any

from shell.catalog.model import Column
from shell.errors import OptionError
from shell.formats.fields import FieldType, field_type

RECORD_NAME = "org.apache.flink.avro.generated.record"
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_TIMESTAMP_PRECISION = 6
# Flink SQL type text (upper-cased, parameters dropped) of each Avro primitive without a logical type.
PRIMITIVES = {"string": "STRING", "boolean": "BOOLEAN", "bytes": "BYTES", "int": "INT", "long": "BIGINT",
              "float": "FLOAT", "double": "DOUBLE"}  # fmt: skip
SPARK_TO_AVRO = {"BOOLEAN": "boolean", "TINYINT": "int", "SMALLINT": "int", "INT": "int", "BIGINT": "long",
                 "FLOAT": "float", "DOUBLE": "double"}  # fmt: skip


class AvroSchemaError(ValueError):
    """A schema that is not valid Avro, or that cannot stand for the table's columns; one line."""


# ---- Flink SQL -> Avro -------------------------------------------------------------------------------------------


def table_schema(fields: list[Column], legacy_timestamps: bool = True) -> dict[str, Any]:
    """The Avro record schema of a table's (physical) columns, as Flink derives it."""
    record: dict[str, Any] = {"type": "record", "name": "record", "namespace": RECORD_NAME.rsplit(".", 1)[0]}
    record["fields"] = [
        _field(f.name, field_type(f.data_type), f.nullable, RECORD_NAME, legacy_timestamps) for f in fields
    ]
    return record


def _field(name: str, t: FieldType, nullable: bool, row_name: str, legacy: bool) -> dict[str, Any]:
    if not NAME.match(name):
        raise AvroSchemaError(f"column '{name}' is not a valid Avro field name (letters, digits and '_', not first a digit)")
    schema = avro_type(t, f"{row_name}_{name}", legacy)
    if nullable:
        return {"name": name, "type": _nullable(schema), "default": None}
    return {"name": name, "type": schema}


def _nullable(schema: Any) -> list[Any]:
    return ["null", *schema] if isinstance(schema, list) else ["null", schema]


def avro_type(t: FieldType, row_name: str, legacy: bool = True) -> Any:
    """The Avro schema of one Flink type (without the null union of its nullability)."""
    if t.kind == "STRING":
        return "string"
    if t.kind == "BINARY":
        return "bytes"
    if t.kind == "DECIMAL":
        precision, scale = _decimal(t)
        return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
    if t.kind == "DATE":
        return {"type": "int", "logicalType": "date"}
    if t.kind in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        precision = t.precision if t.precision is not None else MAX_TIMESTAMP_PRECISION
        if precision > MAX_TIMESTAMP_PRECISION:
            raise AvroSchemaError(f"{t.flink} has more fraction digits than Avro holds (6 at most)")
        unit = "millis" if precision <= 3 else "micros"
        local = t.kind == "TIMESTAMP" and not legacy
        return {"type": "long", "logicalType": f"{'local-' if local else ''}timestamp-{unit}"}
    if t.kind == "ARRAY":
        return {"type": "array", "items": _nullable(avro_type(t.element, row_name, legacy))}
    if t.kind == "MAP":
        if t.key.kind != "STRING":
            raise AvroSchemaError(f"{t.flink}: Avro map keys are strings, so the key type must be STRING")
        return {"type": "map", "values": _nullable(avro_type(t.value, row_name, legacy))}
    if t.kind == "ROW":
        fields = [_field(name, child, True, row_name, legacy) for name, child in t.children]
        return {"type": "record", "name": row_name, "fields": fields}
    if t.spark.upper() in SPARK_TO_AVRO:
        return SPARK_TO_AVRO[t.spark.upper()]
    raise AvroSchemaError(f"type {t.flink} has no Avro counterpart here")


def _decimal(t: FieldType) -> tuple[int, int]:
    match = re.match(r"DECIMAL\((\d+),\s*(\d+)\)", t.spark.upper())
    return (int(match.group(1)), int(match.group(2))) if match else (10, 0)


# ---- Avro -> Flink SQL -------------------------------------------------------------------------------------------


def parse(text: str) -> Any:
    """The JSON of a schema; AvroSchemaError when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise AvroSchemaError(f"not a JSON Avro schema: {exc}") from None


def record_fields(schema: Any) -> list[dict[str, Any]]:
    """The fields of a record schema; AvroSchemaError for anything else."""
    if not isinstance(schema, dict) or schema.get("type") != "record" or not isinstance(schema.get("fields"), list):
        raise AvroSchemaError("the schema must be an Avro record ({\"type\": \"record\", \"fields\": [...]})")
    for field in schema["fields"]:
        if not isinstance(field, dict) or not isinstance(field.get("name"), str) or "type" not in field:
            raise AvroSchemaError(f"record field {json.dumps(field)[:80]} has no name or type")
    return schema["fields"]


def columns_of(schema: Any, legacy_timestamps: bool = True) -> list[Column]:
    """The table columns an Avro record schema stands for (nullable unless the field's type has no null)."""
    named = named_types(schema)
    columns = []
    for field in record_fields(schema):
        flink, nullable = flink_type(field["type"], named, legacy_timestamps)
        columns.append(Column(field["name"], flink, nullable=nullable))
    return columns


def flink_type(schema: Any, named: dict[str, Any] | None = None, legacy: bool = True) -> tuple[str, bool]:
    """(Flink SQL type text, nullable) of an Avro schema."""
    named = named if named is not None else named_types(schema)
    if isinstance(schema, list):
        members = [m for m in schema if m != "null"]
        nullable = len(members) < len(schema)
        if len(members) == 1:
            return flink_type(members[0], named, legacy)[0], nullable
        parts = ", ".join(f"member{i} {flink_type(m, named, legacy)[0]}" for i, m in enumerate(members))
        return f"ROW<{parts}>", True  # Spark reads such a union as a struct of its members
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            return PRIMITIVES[schema], False
        if schema in named:
            return flink_type(named[schema], named, legacy)[0], False
        raise AvroSchemaError(f"unknown Avro type '{schema}'")
    if not isinstance(schema, dict):
        raise AvroSchemaError(f"not an Avro schema: {json.dumps(schema)[:80]}")
    kind, logical = schema.get("type"), schema.get("logicalType")
    if kind == "record":
        parts = ", ".join(f"`{f['name']}` {_nested(f['type'], named, legacy)}" for f in record_fields(schema))
        return f"ROW<{parts}>", False
    if kind == "enum":
        return "STRING", False
    if kind == "array":
        return f"ARRAY<{_nested(schema.get('items'), named, legacy)}>", False
    if kind == "map":
        return f"MAP<STRING, {_nested(schema.get('values'), named, legacy)}>", False
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return f"DECIMAL({int(schema.get('precision', 10))}, {int(schema.get('scale', 0))})", False
    if kind == "fixed":
        return "BYTES", False
    if kind == "int" and logical == "date":
        return "DATE", False
    if kind == "long" and logical in ("timestamp-millis", "timestamp-micros"):
        digits = 3 if logical.endswith("millis") else 6
        return (f"TIMESTAMP({digits})" if legacy else f"TIMESTAMP_LTZ({digits})"), False
    if kind == "long" and logical in ("local-timestamp-millis", "local-timestamp-micros"):
        return f"TIMESTAMP({3 if logical.endswith('millis') else 6})", False
    if isinstance(kind, (str, list, dict)) and kind not in ("record", "enum", "array", "map", "fixed"):
        return flink_type(kind, named, legacy)  # {"type": "int"}, {"type": "string", "logicalType": "uuid"}, ...
    raise AvroSchemaError(f"not an Avro schema: {json.dumps(schema)[:80]}")


def _nested(schema: Any, named: dict[str, Any], legacy: bool) -> str:
    """The type of a ROW field, ARRAY element or MAP value: nullable, as the shell's types inside others all are."""
    return flink_type(schema, named, legacy)[0]


def named_types(schema: Any, found: dict[str, Any] | None = None, namespace: str = "") -> dict[str, Any]:
    """Named types (records, enums, fixed) by their short and full names, for references by name."""
    found = {} if found is None else found
    if isinstance(schema, list):
        for member in schema:
            named_types(member, found, namespace)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed") and isinstance(schema.get("name"), str):
            name = schema["name"]
            space = schema.get("namespace", namespace) if "." not in name else name.rsplit(".", 1)[0]
            found.setdefault(name.rsplit(".", 1)[-1], schema)
            found.setdefault(f"{space}.{name.rsplit('.', 1)[-1]}" if space else name, schema)
            namespace = space or namespace
        for field in schema.get("fields") or []:
            if isinstance(field, dict):
                named_types(field.get("type"), found, namespace)
        for key in ("items", "values"):
            if key in schema:
                named_types(schema[key], found, namespace)
        if isinstance(schema.get("type"), (dict, list)):
            named_types(schema["type"], found, namespace)
    return found


# ---- a given schema against the table's columns ------------------------------------------------------------------

NUMERIC = {"INTEGER", "FLOAT", "DECIMAL"}


def check_matches(schema: Any, fields: list[Column], legacy: bool = True) -> None:
    """Every column is a field of the record `schema` whose values convert to the column's type."""
    by_name = {f["name"]: f for f in record_fields(schema)}
    named = named_types(schema)
    for column in fields:
        if column.name not in by_name:
            listed = ", ".join(by_name) or "none"
            raise AvroSchemaError(f"column '{column.name}' is not a field of the Avro schema (fields: {listed})")
        given = field_type(flink_type(by_name[column.name]["type"], named, legacy)[0])
        problem = _mismatch(given, field_type(column.data_type), column.name)
        if problem:
            raise AvroSchemaError(problem)


def _mismatch(given: FieldType, wanted: FieldType, path: str) -> str | None:
    if given.kind == "ROW" and wanted.kind == "ROW":
        if [n for n, _ in given.children] != [n for n, _ in wanted.children]:
            names = ", ".join(n for n, _ in given.children)
            return f"column '{path}': the schema's record has the fields ({names}), in that order"
        for (name, g), (_, w) in zip(given.children, wanted.children):
            problem = _mismatch(g, w, f"{path}.{name}")
            if problem:
                return problem
        return None
    if given.kind == "ARRAY" and wanted.kind == "ARRAY":
        return _mismatch(given.element, wanted.element, f"{path}[]")
    if given.kind == "MAP" and wanted.kind == "MAP":
        return _mismatch(given.value, wanted.value, f"{path}[]")
    same = given.kind == wanted.kind or {given.kind, wanted.kind} <= NUMERIC
    same = same or {given.kind, wanted.kind} <= {"TIMESTAMP", "TIMESTAMP_LTZ"}
    return None if same else f"column '{path}' is {wanted.flink}, but the schema's field is {given.flink}"


def option_error(exc: AvroSchemaError, fmt_name: str = "avro") -> OptionError:
    return OptionError(f"format '{fmt_name}': {exc}", hint="docs/avro.md lists the type mapping")
