"""Flink's 'avro' format on Spark: each record is one Avro datum in Avro's binary encoding, no header.

Why it exists: Avro is the usual compact format of Kafka and Pulsar topics (Pulsar's AVRO schema sends exactly
this: the datum's binary encoding, no header), and Spark reads and writes it itself (spark-avro's from_avro and
to_avro, in the JVM), so no record passes through Python.

The schema is the one Flink derives from the table's columns (avro_schema.py holds the type mapping), or the one
given with 'avro.schema' (an addition of ours, like Flink's 'avro-confluent.schema': plain 'avro' in Flink always
derives it); the columns are then read by name from that schema's fields. Timestamps follow Flink's
'avro.timestamp_mapping.legacy' (default true): a TIMESTAMP is written as a timestamp-millis/micros holding its
wall-clock time as if in UTC; with false, as local-timestamp-millis/micros.

A record that does not decode (truncated, not Avro, or written with another schema that does not fit) gets the
error "malformed Avro" and goes where the table sends bad records (dead letters by default): from_avro runs in
PERMISSIVE mode, which gives a struct of NULLs instead of failing, and the record is read with a reader schema
that adds one field with a default (`__streamshell_decoded`, true): Avro fills that field only when the rest
decoded, so a NULL there tells a bad record from a good one whose fields are all NULL. Like Flink, bytes after
the end of the datum are not checked.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from shell.catalog.model import Column
from shell.formats import avro_schema
from shell.formats.avro_schema import AvroSchemaError
from shell.formats.base import Format, check_types, computed_once, error_column, replace_source, temp_column
from shell.formats.fields import FieldType, column, field_type
from shell.options import OptionSpec

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame

DECODED = "__streamshell_decoded"  # the reader schema's extra field: true when the datum decoded
MALFORMED = "malformed Avro"
KEYWORDS = frozenset({"record", "enum", "array", "map", "fixed", "null", *avro_schema.PRIMITIVES})

AVRO_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "schema",
        description="the Avro record schema (JSON) the records are written with, instead of the one derived from the "
        "columns; every column must be one of its fields (an addition: Flink's 'avro' always derives it)",
    ),
    OptionSpec(
        "encoding", "enum", default="binary", allowed=("binary",),
        description="Avro's binary encoding (Flink's 'json' encoding is not supported)",
    ),
    OptionSpec(
        "timestamp_mapping.legacy", "bool", default="true",
        description="TIMESTAMP as timestamp-millis/micros (Flink before 1.19); false: as local-timestamp-millis/micros",
    ),
)  # fmt: skip


class AvroFormat(Format):
    """One Avro datum per record (binary encoding, no header), its schema derived from the columns or given."""

    name: ClassVar[str] = "avro"
    options: ClassVar[tuple[OptionSpec, ...]] = AVRO_OPTIONS

    def check(self, fields: list[Column], options: dict[str, str] | None = None) -> None:
        check_types(self, fields)
        self.schema(fields, options or {})

    def check_options(self, options: dict[str, str]) -> None:
        if "schema" in options:
            try:
                avro_schema.record_fields(avro_schema.parse(options["schema"]))
            except AvroSchemaError as exc:
                raise avro_schema.option_error(exc) from None

    def legacy(self, options: dict[str, str]) -> bool:
        return self.flag(options, "timestamp_mapping.legacy")

    def schema(self, fields: list[Column], options: dict[str, str]) -> dict[str, Any]:
        """The writer schema of the records: given, and checked against the columns, or derived from them."""
        try:
            if "schema" in options:
                given = avro_schema.parse(options["schema"])
                avro_schema.check_matches(given, fields, self.legacy(options))
                return given
            return avro_schema.table_schema(fields, self.legacy(options))
        except AvroSchemaError as exc:
            raise avro_schema.option_error(exc) from None

    # ---- run time ----

    def decode(
        self, frame: DataFrame, source: str, fields: list[Column], options: dict[str, str], prefix: str = ""
    ) -> DataFrame:
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import from_avro

        writer = self.schema(fields, options)
        reader = {**writer, "fields": [*writer["fields"], {"name": DECODED, "type": "boolean", "default": True}]}
        spark_options = {"mode": "PERMISSIVE", "avroSchema": json.dumps(reader)}
        parsed = from_avro(column(source), json.dumps(writer), spark_options)
        staged_name = temp_column(prefix, "avro")
        frame = frame.withColumn(staged_name, computed_once(parsed.alias("row")))
        record = column(staged_name).getField("row")
        by_name = {f["name"]: f["type"] for f in writer["fields"]}
        named = avro_schema.named_types(writer)
        values = F.struct(
            *[
                from_avro_value(record.getField(f.name), field_type(f.data_type), by_name[f.name], named).alias(f.name)
                for f in fields
            ]
        )
        error = F.when(column(source).isNotNull() & record.getField(DECODED).isNull(), F.lit(MALFORMED))
        return replace_source(frame, source, fields, values, error, error_column(prefix), prefix)

    def encode(self, frame: DataFrame, fields: list[Column], options: dict[str, str]) -> SparkColumn:
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import to_avro

        writer = self.schema(fields, options)
        named = avro_schema.named_types(writer)
        given = {f.name: f for f in fields}
        parts = []
        for avro_field in writer["fields"]:
            name = avro_field["name"]
            if name in given:
                value = to_avro_value(column(name), field_type(given[name].data_type), avro_field["type"], named)
            else:  # a field of a given schema that the table does not have: its default must be null
                value = F.lit(None)
            parts.append(value.alias(name))
        return to_avro(F.struct(*parts), json.dumps(writer))


# ---- values between the table's types and what Spark reads and writes for an Avro type ---------------------------


def _resolved(avro: Any, named: dict[str, Any]) -> Any:
    """The non-null type of `avro` (a ["null", T] union is T), named types looked up; other unions as they are."""
    if isinstance(avro, list):
        members = [m for m in avro if m != "null"]
        avro = members[0] if len(members) == 1 else avro
    if isinstance(avro, str) and avro in named:
        return named[avro]
    if isinstance(avro, dict) and isinstance(avro.get("type"), (list, dict)):
        return _resolved(avro["type"], named)
    if isinstance(avro, dict) and avro.get("type") not in KEYWORDS and avro.get("type") in named:
        return named[avro["type"]]  # {"type": "SomeRecord"}: a reference by name
    return avro


def _logical(avro: Any) -> str | None:
    return avro.get("logicalType") if isinstance(avro, dict) else None


def _record_types(avro: dict[str, Any]) -> dict[str, Any]:
    return {f["name"]: f["type"] for f in avro.get("fields") or []}


def from_avro_value(value: SparkColumn, t: FieldType, avro: Any, named: dict[str, Any]) -> SparkColumn:
    """The value of the table's type `t` from what Spark decoded for the Avro type `avro`."""
    from pyspark.sql import functions as F

    avro = _resolved(avro, named)
    kind = avro.get("type") if isinstance(avro, dict) else avro
    if t.kind == "ROW" and kind == "record":
        types = _record_types(avro)
        children = [from_avro_value(value.getField(n), c, types[n], named).alias(n) for n, c in t.children]
        return F.when(value.isNotNull(), F.struct(*children))
    if t.kind == "ARRAY" and kind == "array":
        return F.transform(value, lambda x: from_avro_value(x, t.element, avro["items"], named))
    if t.kind == "MAP" and kind == "map":
        return F.transform_values(value, lambda k, v: from_avro_value(v, t.value, avro["values"], named))
    logical = _logical(avro)
    if logical in ("timestamp-millis", "timestamp-micros") and t.kind == "TIMESTAMP":
        # an instant holding a wall-clock time as if in UTC (Flink's legacy mapping): that wall-clock time
        return F.convert_timezone(F.current_timezone(), F.lit("UTC"), value.cast("timestamp_ntz")).cast(t.spark)
    return value.cast(t.spark)


def to_avro_value(value: SparkColumn, t: FieldType, avro: Any, named: dict[str, Any]) -> SparkColumn:
    """What Spark writes as the Avro type `avro` from a value of the table's type `t`."""
    from pyspark.sql import functions as F

    avro = _resolved(avro, named)
    kind = avro.get("type") if isinstance(avro, dict) else avro
    if t.kind == "ROW" and kind == "record":
        present = dict(t.children)
        parts = []
        for name, child_avro in _record_types(avro).items():
            child = present.get(name)
            part = to_avro_value(value.getField(name), child, child_avro, named) if child else F.lit(None)
            parts.append(part.alias(name))
        return F.when(value.isNotNull(), F.struct(*parts))
    if t.kind == "ARRAY" and kind == "array":
        return F.transform(value, lambda x: to_avro_value(x, t.element, avro["items"], named))
    if t.kind == "MAP" and kind == "map":
        return F.transform_values(value, lambda k, v: to_avro_value(v, t.value, avro["values"], named))
    logical = _logical(avro)
    if logical in ("timestamp-millis", "timestamp-micros"):
        if t.kind == "TIMESTAMP":  # the wall-clock time as if in UTC (Flink's legacy mapping)
            return F.convert_timezone(F.lit("UTC"), F.current_timezone(), value).cast("timestamp")
        return value.cast("timestamp")
    if logical in ("local-timestamp-millis", "local-timestamp-micros"):
        return value.cast("timestamp_ntz")
    if logical == "date":
        return value.cast("date")
    if logical == "decimal":
        return value.cast(f"decimal({int(avro.get('precision', 10))}, {int(avro.get('scale', 0))})")
    spark = {"int": "int", "long": "bigint", "float": "float", "double": "double", "boolean": "boolean",
             "string": "string", "enum": "string", "bytes": "binary", "fixed": "binary"}.get(kind)  # fmt: skip
    return value.cast(spark) if spark else value
