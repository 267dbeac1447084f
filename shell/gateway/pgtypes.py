"""streamshell's column types as PostgreSQL type OIDs, and values in PostgreSQL's text and binary formats.

Why it exists: a driver turns each column into its language's type from the OID in RowDescription (JDBC's
getInt, psycopg's int, Grafana's time column), and parses each value as PostgreSQL writes it ('t' for true,
`2024-05-01 10:00:00.5` for a timestamp, `\\x..` for bytes). Results carry Spark's type names; SHOW-like results
carry none, so their column types are read from their values.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from typing import Any

from shell.values import format_value

BOOL, BYTEA, NAME, INT8, INT2, INT4, TEXT, OID, FLOAT4, FLOAT8 = 16, 17, 19, 20, 21, 23, 25, 26, 700, 701
VARCHAR, DATE, TIMESTAMP, TIMESTAMPTZ, NUMERIC, CHAR = 1043, 1082, 1114, 1184, 1700, 18
UNKNOWN = 705

TYPE_NAMES = {BOOL: "bool", BYTEA: "bytea", NAME: "name", INT8: "int8", INT2: "int2", INT4: "int4", TEXT: "text",
              OID: "oid", FLOAT4: "float4", FLOAT8: "float8", VARCHAR: "varchar", DATE: "date",
              TIMESTAMP: "timestamp", TIMESTAMPTZ: "timestamptz", NUMERIC: "numeric", CHAR: "char"}  # fmt: skip
SIZES = {BOOL: 1, INT2: 2, INT4: 4, INT8: 8, FLOAT4: 4, FLOAT8: 8, DATE: 4, TIMESTAMP: 8, TIMESTAMPTZ: 8, OID: 4,
         NAME: 64, CHAR: 1}  # fmt: skip

SPARK_TYPES = {
    "boolean": BOOL, "tinyint": INT2, "smallint": INT2, "int": INT4, "integer": INT4, "bigint": INT8,
    "float": FLOAT4, "double": FLOAT8, "string": TEXT, "binary": BYTEA, "date": DATE, "timestamp": TIMESTAMP,
    "timestamp_ntz": TIMESTAMP, "void": TEXT,
}  # fmt: skip

NUMERIC_PARAMETER_TYPES = {INT2, INT4, INT8, FLOAT4, FLOAT8, NUMERIC, OID}
EPOCH_2000 = dt.datetime(2000, 1, 1)


def oid_of_spark(type_name: str) -> int:
    """OID for a Spark type name (`decimal(10,2)` is numeric; arrays, maps and rows are shown as text)."""
    name = (type_name or "").lower()
    if name.startswith("decimal"):
        return NUMERIC
    if name.startswith(("varchar", "char")):
        return VARCHAR
    return SPARK_TYPES.get(name, TEXT)


def oid_of_values(values: list[Any]) -> int:
    """OID for a column known only by its values (SHOW JOBS, DESCRIBE): the narrowest that fits every value."""
    seen = [v for v in values if v is not None]
    if seen and all(isinstance(v, bool) for v in seen):
        return BOOL
    if seen and all(isinstance(v, int) and not isinstance(v, bool) for v in seen):
        return INT8
    if seen and all(isinstance(v, float) for v in seen):
        return FLOAT8
    if seen and all(isinstance(v, dt.datetime) for v in seen):
        return TIMESTAMP
    return TEXT


def text(value: Any) -> bytes | None:
    """A value in PostgreSQL's text format; None is SQL NULL."""
    if value is None:
        return None
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, float):
        if math.isnan(value):
            return b"NaN"
        if math.isinf(value):
            return b"Infinity" if value > 0 else b"-Infinity"
        return repr(value).encode()
    if isinstance(value, decimal.Decimal):
        return format(value, "f").encode()
    if isinstance(value, dt.datetime):
        shown = value.strftime("%Y-%m-%d %H:%M:%S")
        if value.microsecond:
            shown += f".{value.microsecond:06d}".rstrip("0")
        return shown.encode()
    if isinstance(value, dt.date):
        return value.isoformat().encode()
    if isinstance(value, (bytes, bytearray)):
        return b"\\x" + bytes(value).hex().encode()
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, int):
        return str(value).encode()
    return format_value(value).encode("utf-8")  # arrays, maps, rows: as the shell shows them


class BinaryUnsupported(Exception):
    """The client asked for a column in binary and the gateway has no binary form of its type."""


def binary(value: Any, oid: int) -> bytes | None:
    """A value in PostgreSQL's binary format for `oid` (what JDBC asks for its server-prepared statements)."""
    if value is None:
        return None
    if oid == BOOL:
        return b"\x01" if value else b"\x00"
    if oid == INT2:
        return struct.pack("!h", int(value))
    if oid == INT4:
        return struct.pack("!i", int(value))
    if oid in (INT8,):
        return struct.pack("!q", int(value))
    if oid == OID:
        return struct.pack("!I", int(value))
    if oid == FLOAT4:
        return struct.pack("!f", float(value))
    if oid == FLOAT8:
        return struct.pack("!d", float(value))
    if oid in (TEXT, VARCHAR, NAME, CHAR, UNKNOWN):
        return text(value)
    if oid == BYTEA:
        return bytes(value) if isinstance(value, (bytes, bytearray)) else text(value)
    if oid == DATE:
        day = value.date() if isinstance(value, dt.datetime) else value
        return struct.pack("!i", (day - EPOCH_2000.date()).days)
    if oid in (TIMESTAMP, TIMESTAMPTZ):
        delta = value.replace(tzinfo=None) - EPOCH_2000
        return struct.pack("!q", (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds)
    if oid == NUMERIC:
        return numeric_binary(decimal.Decimal(value))
    raise BinaryUnsupported(f"binary format of type {TYPE_NAMES.get(oid, oid)} is not supported")


def numeric_binary(value: decimal.Decimal) -> bytes:
    """numeric's binary form: base-10000 digits, a weight, a sign and the display scale."""
    if value.is_nan():
        return struct.pack("!hhHh", 0, 0, 0xC000, 0)
    sign, digits, exponent = value.as_tuple()
    scale = max(0, -int(exponent))
    text_digits = "".join(map(str, digits))
    exponent = int(exponent)
    if exponent > 0:
        text_digits += "0" * exponent
        exponent = 0
    whole = text_digits[: len(text_digits) + exponent] or "0"
    fraction = text_digits[len(text_digits) + exponent :] if exponent < 0 else ""
    whole = whole.rjust((len(whole) + 3) // 4 * 4, "0")
    fraction = fraction.ljust((len(fraction) + 3) // 4 * 4, "0")
    groups = [int(whole[i : i + 4]) for i in range(0, len(whole), 4)] + [int(fraction[i : i + 4]) for i in range(0, len(fraction), 4)]
    weight = len(whole) // 4 - 1
    while groups and groups[0] == 0:  # leading zero groups move the weight
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight = 0
    return struct.pack("!hhHh", len(groups), weight, 0x4000 if sign else 0, scale) + b"".join(struct.pack("!H", g) for g in groups)


def display_name(oid: int, typmod: int = -1) -> str:
    """`format_type`'s name of a type (psql's \\d shows it), with its modifier: `numeric(10,2)`,
    `character varying(20)`."""
    if typmod is not None and typmod >= 4 and oid == NUMERIC:
        return f"numeric({(typmod - 4) >> 16},{(typmod - 4) & 0xFFFF})"
    if typmod is not None and typmod >= 4 and oid == VARCHAR:
        return f"character varying({typmod - 4})"
    return {INT2: "smallint", INT4: "integer", INT8: "bigint", FLOAT4: "real", FLOAT8: "double precision",
            BOOL: "boolean", VARCHAR: "character varying", TIMESTAMP: "timestamp without time zone",
            TIMESTAMPTZ: "timestamp with time zone"}.get(oid, TYPE_NAMES.get(oid, "text"))  # fmt: skip


def oid_of_flink(type_text: str | None) -> int:
    """OID for a catalog column's Flink type (`STRING`, `DECIMAL(10, 2)`, `TIMESTAMP(3)`, `ARRAY<INT>`)."""
    name = (type_text or "STRING").strip().upper()
    if name.startswith(("ARRAY", "MAP", "ROW", "MULTISET")):
        return TEXT
    if name.startswith(("TIMESTAMP_LTZ", "TIMESTAMP WITH LOCAL")):
        return TIMESTAMPTZ
    head = re.split(r"[\s(<]", name, maxsplit=1)[0]
    return {"BOOLEAN": BOOL, "TINYINT": INT2, "SMALLINT": INT2, "INT": INT4, "INTEGER": INT4, "BIGINT": INT8,
            "FLOAT": FLOAT4, "REAL": FLOAT4, "DOUBLE": FLOAT8, "DECIMAL": NUMERIC, "NUMERIC": NUMERIC, "DEC": NUMERIC,
            "STRING": TEXT, "VARCHAR": VARCHAR, "CHAR": VARCHAR, "BYTES": BYTEA, "BINARY": BYTEA, "VARBINARY": BYTEA,
            "DATE": DATE, "TIMESTAMP": TIMESTAMP}.get(head, TEXT)  # fmt: skip


MAX_VARCHAR_LENGTH = 10_485_760  # PostgreSQL's longest varchar(n); a longer one (Flink's STRING) is text


def typmod_of_flink(type_text: str | None) -> int:
    """PostgreSQL's type modifier (atttypmod) of a catalog column's Flink type: DECIMAL(p, s) is ((p << 16) | s) + 4
    (DECIMAL alone is Flink's DECIMAL(10, 0)), VARCHAR(n) and CHAR(n) are n + 4; -1 for the rest."""
    name = (type_text or "").strip().upper()
    head = re.split(r"[\s(<]", name, maxsplit=1)[0]
    numbers = [int(n) for n in re.findall(r"\d+", name.split("<", 1)[0])]
    if head in ("DECIMAL", "NUMERIC", "DEC"):
        precision, scale = (numbers + [10, 0][len(numbers):])[:2] if numbers else (10, 0)
        return ((precision << 16) | scale) + 4
    if head in ("VARCHAR", "CHAR") and numbers and numbers[0] <= MAX_VARCHAR_LENGTH:
        return numbers[0] + 4
    return -1


def typmod_of_spark(type_name: str | None) -> int:
    """The type modifier of a result column of Spark's type `decimal(10,2)` (RowDescription's), -1 for the rest."""
    match = re.fullmatch(r"decimal\((\d+),\s*(\d+)\)", (type_name or "").strip().lower())
    return ((int(match.group(1)) << 16) | int(match.group(2))) + 4 if match else -1
