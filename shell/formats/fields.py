"""A table's Flink column types as a small tree, and text <-> value conversions per type, as Spark expressions.

Why it exists: every text format (json, csv, debezium-json) turns a field's text into a typed value and back,
and must notice when the text does not fit the type. Doing that with Spark's own parsers (from_json with a typed
schema) loses the per-field error and silently rounds decimals, so the formats read every field as text first
and convert it here with `try_*` functions: a value that is present but converts to NULL is a type mismatch.
(json parses a good record's numbers, booleans and strings typed, and falls back to these conversions for a
record that parse refuses: see json.py.)
The tree (`FieldType`) is built from the catalog's Flink type text once; its `spark` member is always
`flink_type_to_spark` of the same type, so decoded columns have exactly the table's Spark types.

Timestamps follow Flink's `timestamp-format.standard`: 'SQL' reads `yyyy-MM-dd HH:mm:ss[.fraction]`, 'ISO-8601'
reads `yyyy-MM-ddTHH:mm:ss[.fraction]`, with 0 to 9 fraction digits; TIMESTAMP_LTZ values carry a zone suffix
(`Z`). Writing uses exactly the declared precision (TIMESTAMP(3) -> `.SSS`, default 6).

Nothing here imports pyspark at module load (the shell's prompt must not wait for it); functions that build
expressions import it when called.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

from sqlglot import exp

from shell.sql.fragments import parse_type, to_sql
from shell.sql.types import flink_type_to_spark

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn

# Flink type (sqlglot DType) -> the family of conversions it needs.
KINDS: dict[exp.DType, str] = {
    exp.DType.CHAR: "STRING",
    exp.DType.VARCHAR: "STRING",
    exp.DType.TEXT: "STRING",
    exp.DType.BOOLEAN: "BOOLEAN",
    exp.DType.TINYINT: "INTEGER",
    exp.DType.SMALLINT: "INTEGER",
    exp.DType.INT: "INTEGER",
    exp.DType.BIGINT: "INTEGER",
    exp.DType.FLOAT: "FLOAT",
    exp.DType.DOUBLE: "FLOAT",
    exp.DType.DECIMAL: "DECIMAL",
    exp.DType.DATE: "DATE",
    exp.DType.TIME: "TIME",
    exp.DType.TIMESTAMP: "TIMESTAMP",
    exp.DType.TIMESTAMPNTZ: "TIMESTAMP",
    exp.DType.TIMESTAMPLTZ: "TIMESTAMP_LTZ",
    exp.DType.TIMESTAMPTZ: "TIMESTAMP_LTZ",
    exp.DType.BINARY: "BINARY",
    exp.DType.VARBINARY: "BINARY",
    exp.DType.BLOB: "BINARY",
    exp.DType.STRUCT: "ROW",
    exp.DType.ARRAY: "ARRAY",
    exp.DType.MAP: "MAP",
    exp.DType.NULL: "NULL",
}
NESTED_KINDS = frozenset({"ROW", "ARRAY", "MAP"})
DEFAULT_TIMESTAMP_PRECISION = 6  # Flink's TIMESTAMP means TIMESTAMP(6)
SPARK_MAX_FRACTION = 9  # Spark formats up to 9 fraction digits (it keeps microseconds)
DATE_PATTERN = "yyyy-MM-dd"


@dataclass(frozen=True)
class FieldType:
    """One Flink type: its conversion family (`kind`), Spark type text, Flink text (for messages) and parts."""

    kind: str
    spark: str
    flink: str
    precision: int | None = None
    children: tuple[tuple[str, FieldType], ...] = ()  # ROW fields, in order
    element: FieldType | None = None  # ARRAY element
    key: FieldType | None = None  # MAP key
    value: FieldType | None = None  # MAP value

    @property
    def is_nested(self) -> bool:
        return self.kind in NESTED_KINDS

    def walk(self):
        """This type and every type inside it."""
        yield self
        for part in (*(c for _, c in self.children), self.element, self.key, self.value):
            if part is not None:
                yield from part.walk()


@lru_cache(maxsize=512)
def field_type(flink_text: str) -> FieldType:
    """The tree of a Flink type text such as 'ROW<a INT, b ARRAY<TIMESTAMP(3)>>'."""
    return _from_node(parse_type(flink_text))


def _from_node(node: exp.DataType) -> FieldType:
    kind = KINDS.get(node.this, "UNKNOWN")
    spark = flink_type_to_spark(node)  # raises UnsupportedFeatureError for types Spark cannot hold
    params = node.expressions
    common = {"kind": kind, "spark": spark, "flink": to_sql(node)}
    if kind == "ROW":
        children = tuple((f.name, _from_node(f.args["kind"])) for f in params)
        return FieldType(**common, children=children)
    if kind == "ARRAY":
        return FieldType(**common, element=_from_node(params[0]))
    if kind == "MAP":
        return FieldType(**common, key=_from_node(params[0]), value=_from_node(params[1]))
    if kind in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        precision = int(params[0].name) if params else DEFAULT_TIMESTAMP_PRECISION
        return FieldType(**common, precision=precision)
    return FieldType(**common)


@dataclass(frozen=True)
class TimestampStyle:
    """Flink's `timestamp-format.standard`: how timestamps look as text."""

    name: str
    separator: str  # between date and time, as a Spark datetime pattern piece

    def parse_pattern(self, t: FieldType) -> str:
        zone = "X" if t.kind == "TIMESTAMP_LTZ" else ""
        return f"{DATE_PATTERN}{self.separator}HH:mm:ss[.SSSSSSSSS]{zone}"

    def plain_shape(self) -> str:
        """A regular expression for exactly the TIMESTAMP texts of `parse_pattern` with ASCII digits everywhere, no
        zone and nothing around: texts that Spark's cast to TIMESTAMP reads to the same value as the pattern
        (tests/spark/test_formats.py holds both side by side). `\\z`, not `$`, which allows a final newline."""
        separator = self.separator.strip("'")
        return rf"^\d{{4}}-\d\d-\d\d{separator}\d\d:\d\d:\d\d(\.\d{{1,9}})?\z"

    def format_pattern(self, t: FieldType) -> str:
        digits = min(t.precision if t.precision is not None else DEFAULT_TIMESTAMP_PRECISION, SPARK_MAX_FRACTION)
        fraction = "." + "S" * digits if digits else ""
        zone = "'Z'" if t.kind == "TIMESTAMP_LTZ" else ""
        return f"{DATE_PATTERN}{self.separator}HH:mm:ss{fraction}{zone}"

    def example(self, t: FieldType) -> str:
        """The shape of a value, for error messages: 'yyyy-MM-dd HH:mm:ss.SSS'."""
        return self.format_pattern(t).replace("'", "")


STYLES: dict[str, TimestampStyle] = {
    "SQL": TimestampStyle("SQL", " "),
    "ISO-8601": TimestampStyle("ISO-8601", "'T'"),
}
SQL_STYLE = STYLES["SQL"]


def style_for(name: str | None) -> TimestampStyle:
    return STYLES.get((name or "SQL").upper(), SQL_STYLE)


# ---- text -> value ---------------------------------------------------------------------------------------------


def _keep(raw: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    return raw


def _try_cast(raw: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    return raw.try_cast(t.spark)


def _float(raw: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    """A number; also a JSON number beyond DOUBLE's range, whose text Spark writes as the quoted '"Infinity"'
    (Flink reads it as Infinity, as does Spark's typed parse)."""
    from pyspark.sql import functions as F

    overflow = raw.isin('"Infinity"', '"-Infinity"')
    return F.when(overflow, F.translate(raw, '"', "")).otherwise(raw).try_cast(t.spark)


def _boolean(raw: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    """'true' or 'false' in any case; anything else (Spark's cast would take 'yes', 'y', '1') is a mismatch."""
    from pyspark.sql import functions as F

    word = F.lower(F.trim(raw))
    return F.when(word.isin("true", "false"), word == F.lit("true"))


def _date(raw: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.try_to_date(raw, DATE_PATTERN)


def _timestamp(raw: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    from pyspark.sql import functions as F

    parsed = F.try_to_timestamp(raw, F.lit(style.parse_pattern(t)))
    if t.kind == "TIMESTAMP":  # the usual text: a regular expression and a cast cost a third of the pattern
        parsed = F.when(raw.rlike(style.plain_shape()), raw.try_cast("timestamp")).otherwise(parsed)
    return parsed.cast(t.spark)


def _base64(raw: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.try_to_binary(raw, F.lit("base64"))


FROM_TEXT: dict[str, Callable[[SparkColumn, FieldType, TimestampStyle], SparkColumn]] = {
    "STRING": _keep,
    "TIME": _keep,  # Spark has no TIME type: the text is kept (Flink's 'HH:mm:ss[.fraction]')
    "BOOLEAN": _boolean,
    "INTEGER": _try_cast,
    "FLOAT": _float,
    "DECIMAL": _try_cast,
    "DATE": _date,
    "TIMESTAMP": _timestamp,
    "TIMESTAMP_LTZ": _timestamp,
    "BINARY": _base64,
}
SCALAR_KINDS = frozenset(FROM_TEXT)


def from_text(raw: SparkColumn, t: FieldType, style: TimestampStyle = SQL_STYLE) -> SparkColumn:
    """The value of a scalar's text, NULL when the text does not fit the type."""
    return FROM_TEXT[t.kind](raw, t, style)


def expectation(t: FieldType, style: TimestampStyle = SQL_STYLE) -> str:
    """What a value of `t` must look like, for error messages."""
    if t.kind in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return f"{t.flink} as '{style.example(t)}'"
    if t.kind == "DATE":
        return f"DATE as '{DATE_PATTERN}'"
    if t.kind == "BINARY":
        return f"{t.flink} as base64"
    return t.flink


# ---- value -> text ---------------------------------------------------------------------------------------------


def _format_timestamp(col: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    from pyspark.sql import functions as F

    if t.kind == "TIMESTAMP_LTZ":  # an instant: written as UTC wall-clock time with a 'Z'
        col = F.to_utc_timestamp(col, F.current_timezone())
    return F.date_format(col, style.format_pattern(t))


def _format_date(col: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.date_format(col, DATE_PATTERN)


def _format_base64(col: SparkColumn, t: FieldType, style: TimestampStyle) -> SparkColumn:
    from pyspark.sql import functions as F

    # Spark's base64() may break long output into MIME lines; Flink writes one line.
    return F.regexp_replace(F.base64(col), "[\\r\\n]", "")


TO_TEXT: dict[str, Callable[[SparkColumn, FieldType, TimestampStyle], SparkColumn]] = {
    "DATE": _format_date,
    "TIMESTAMP": _format_timestamp,
    "TIMESTAMP_LTZ": _format_timestamp,
    "BINARY": _format_base64,
}


def needs_text(t: FieldType) -> bool:
    """Whether a value of `t` (or something inside it) is written as text rather than as itself in JSON."""
    return any(part.kind in TO_TEXT for part in t.walk())


def to_text(col: SparkColumn, t: FieldType, style: TimestampStyle = SQL_STYLE) -> SparkColumn:
    """A scalar as the text a format writes (STRING); inverse of `from_text`."""
    converter = TO_TEXT.get(t.kind)
    return converter(col, t, style) if converter else col.cast("string")


def to_json_value(col: SparkColumn, t: FieldType, style: TimestampStyle = SQL_STYLE) -> SparkColumn:
    """`col` with every timestamp, date and binary inside it turned into its text, ready for to_json."""
    from pyspark.sql import functions as F

    if not needs_text(t):
        return col
    if t.kind == "ROW":
        parts = [to_json_value(col.getField(name), child, style).alias(name) for name, child in t.children]
        return F.when(col.isNotNull(), F.struct(*parts))
    if t.kind == "ARRAY":
        element = t.element
        return F.transform(col, lambda x: to_json_value(x, element, style))
    if t.kind == "MAP":
        key, value = t.key, t.value
        if needs_text(key):
            col = F.transform_keys(col, lambda k, v: to_json_value(k, key, style))
        if needs_text(value):
            col = F.transform_values(col, lambda k, v: to_json_value(v, value, style))
        return col
    return TO_TEXT[t.kind](col, t, style)


# ---- small helpers shared by the formats -----------------------------------------------------------------------


def quoted(name: str) -> str:
    """A column name as Spark's column resolver needs it (dots and backquotes taken literally)."""
    return "`" + name.replace("`", "``") + "`"


def column(name: str) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.col(quoted(name))


def first_error(errors: list[SparkColumn]) -> SparkColumn:
    """The first non-NULL reason among `errors` (NULL when all are NULL)."""
    from pyspark.sql import functions as F

    if not errors:
        return F.lit(None).cast("string")
    return errors[0] if len(errors) == 1 else F.coalesce(*errors)


def first_in_array(errors: SparkColumn) -> SparkColumn:
    """The first non-NULL element of an array of reasons (NULL when none)."""
    from pyspark.sql import functions as F

    return F.try_element_at(F.filter(errors, lambda e: e.isNotNull()), F.lit(1))


def field_path(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def mismatch(path: str, t: FieldType, style: TimestampStyle = SQL_STYLE) -> str:
    return f"field '{path}': expected {expectation(t, style)}"
