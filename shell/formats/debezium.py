"""Flink's 'debezium-json' format: change events of a database table, turned into a changelog.

Why it exists: CDC topics written by Debezium carry `{"before": {...}, "after": {...}, "op": "c|r|u|d", ...}`
(or, with Kafka Connect's schemas enabled, `{"schema": {...}, "payload": {...}}`, read with
`debezium-json.schema-include` = true). Decoding explodes each event into changelog rows, as Flink's
DebeziumJsonDeserializationSchema does:

    op 'c' (create) or 'r' (snapshot read)  ->  +I after
    op 'u' (update)                         ->  -U before, then +U after
    op 'd' (delete)                         ->  -D before

The row kind is in `OP_COLUMN` ('__op'). The rows of one event come from `explode` of an array built in that
order, and explode emits an array's elements one after the other in the same task, so -U always directly
precedes its +U. before/after are read with the json format's reader (same types, same error reasons, with
paths such as "field 'after.id': expected INT"). An event that cannot be used -- malformed JSON, no or an unknown
op, a missing before/after where the op needs it, a field of the wrong type -- gives one row with the error set,
every field NULL and a NULL op.

A NULL (or empty) record produces no row at all: it is the Kafka tombstone Debezium writes after a delete, and
Flink skips it too.

Encoding follows Flink's DebeziumJsonSerializationSchema (flink-formats/flink-json, `serialize`):
+I and +U become {"before": null, "after": row, "op": "c"}; -U and -D become {"before": row, "after": null,
"op": "d"}. A frame without OP_COLUMN is written as inserts. Like Flink, writing with schema-include = true is
refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from shell.catalog.model import Column
from shell.formats.base import (
    DELETE,
    INSERT,
    OP_COLUMN,
    TEMP_PREFIX,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    Format,
    error_column,
    temp_column,
)
from shell.formats.fields import FieldType, column, field_type, first_error, style_for
from shell.formats.json import (
    DECIMAL_AS_PLAIN,
    IGNORE_NULL_FIELDS,
    IGNORE_PARSE_ERRORS,
    MAP_NULL_KEY_LITERAL,
    MAP_NULL_KEY_MODE,
    TIMESTAMP_STANDARD,
    JsonReader,
    check_json_types,
    encode_row,
    json_write_options,
    row_of,
    row_type,
    stage_object,
    stage_row,
)
from shell.options import OptionSpec

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame

DEBEZIUM_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("schema-include", "bool", default="false", description="records are wrapped in {schema, payload}"),
    IGNORE_PARSE_ERRORS,
    TIMESTAMP_STANDARD,
    MAP_NULL_KEY_MODE,
    MAP_NULL_KEY_LITERAL,
    DECIMAL_AS_PLAIN,
    IGNORE_NULL_FIELDS,
)

# Debezium op -> the row kinds it becomes, taking (before, after) from the event in that order.
EVENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "c": ((INSERT, "after"),),
    "r": ((INSERT, "after"),),
    "u": ((UPDATE_BEFORE, "before"), (UPDATE_AFTER, "after")),
    "d": ((DELETE, "before"),),
}
# Row kind -> (Debezium op, the side the row is written to), as in Flink's DebeziumJsonSerializationSchema.
WRITES: dict[str, tuple[str, str]] = {
    INSERT: ("c", "after"),
    UPDATE_AFTER: ("c", "after"),
    UPDATE_BEFORE: ("d", "before"),
    DELETE: ("d", "before"),
}
# Side -> the ops that need it.
NEEDS = {side: [op for op, kinds in EVENTS.items() if any(s == side for _, s in kinds)] for side in ("before", "after")}
MISSING_BEFORE_HINT = " (a PostgreSQL source table needs REPLICA IDENTITY FULL)"


def envelope_type(row: FieldType) -> FieldType:
    return row_of((("before", row), ("after", row), ("op", field_type("STRING"))))


class DebeziumJsonFormat(Format):
    """Debezium change events (`before`, `after`, `op`) read as a changelog of inserts, updates and deletes."""

    name: ClassVar[str] = "debezium-json"
    options: ClassVar[tuple[OptionSpec, ...]] = DEBEZIUM_OPTIONS
    produces_changelog: ClassVar[bool] = True

    def check(self, fields: list[Column], options: dict[str, str] | None = None) -> None:
        check_json_types(self, fields)

    # ---- decode ----

    def decode(
        self, frame: DataFrame, source: str, fields: list[Column], options: dict[str, str], prefix: str = ""
    ) -> DataFrame:
        from pyspark.sql import functions as F

        row = row_type(fields)
        raw = column(source)
        staged, envelope, error, sides = self._read_envelope(frame, raw, row, options, prefix)
        conv = temp_column(prefix, "cdc")
        parts = [sides[side].alias(side) for side in sides] + [error.alias("error"), envelope.text("op").alias("op")]
        staged = staged.withColumn(conv, F.struct(*parts))
        events = self._events(column(conv), raw, row)
        return self._explode(staged, source, fields, events, prefix)

    def _read_envelope(
        self, frame: DataFrame, raw: SparkColumn, row: FieldType, options: dict[str, str], prefix: str
    ):
        """Stage the event's parts; return the frame, the parts, the event's error and its before/after ROWs."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType, StructField, StructType

        text = raw.cast("string")
        t = envelope_type(row)
        # a malformed envelope is told by its own parse (stage_object below); a schema wrapper by listing its keys
        checks = []
        payload, parse_exact = text, None
        if self.flag(options, "schema-include"):
            checks.append(F.when(F.json_object_keys(text).isNull(), F.lit("malformed JSON")))
            wrapped = F.from_json(text, StructType([StructField("payload", StringType())])).getField("payload")
            checks.append(F.when(wrapped.isNull(), F.lit("missing field 'payload'")))
            payload = wrapped

            def parse_exact(schema):
                return F.from_json(text, StructType([StructField("payload", schema)])).getField("payload")

        staged, envelope = stage_object(frame, payload, t, temp_column(prefix, "json"), parse_exact, keys=False)
        reader = JsonReader(style_for(self.option(options, "timestamp-format.standard")))
        converted = {}
        for side in NEEDS:
            text, exact = envelope.text(side), envelope.exact_of(side, row)
            staged, _, converted[side] = stage_row(staged, reader, text, row, side, exact, temp_column(prefix, side))
        op = envelope.text("op")
        checks += [
            F.when(envelope.malformed, F.lit("malformed JSON")),
            F.when(op.isNull(), F.lit("missing field 'op'")),
            F.when(~op.isin(*EVENTS), F.concat(F.lit("unknown op '"), op, F.lit("'"))),
        ]
        for side, ops in NEEDS.items():
            hint = MISSING_BEFORE_HINT if side == "before" else ""
            needed = op.isin(*ops)
            missing = F.lit(f"field '{side}' is missing or null{hint}")
            checks.append(F.when(needed & envelope.text(side).isNull(), missing))
        checks += [F.when(op.isin(*ops), converted[side].error) for side, ops in NEEDS.items()]
        sides = {side: c.value for side, c in converted.items()}
        return staged, envelope, first_error(checks), sides

    def _events(self, conv: SparkColumn, raw: SparkColumn, row: FieldType) -> SparkColumn:
        """The array of (op, error, row) structs an event becomes (empty for a tombstone)."""
        from pyspark.sql import functions as F

        def event(kind, value, error):
            return F.struct(kind.alias("op"), error.alias("error"), value.alias("row"))

        no_string = F.lit(None).cast("string")
        failed = F.array(event(no_string, F.lit(None).cast(row.spark), conv.getField("error")))
        result = F.when(raw.isNull() | (F.octet_length(raw) == 0), F.array().cast(f"array<{event_type(row)}>"))
        result = result.when(conv.getField("error").isNotNull(), failed)
        op = conv.getField("op")
        for code, kinds in EVENTS.items():
            rows = [event(F.lit(kind), conv.getField(side), no_string) for kind, side in kinds]
            result = result.when(op == F.lit(code), F.array(*rows))
        return result

    def _explode(
        self, staged: DataFrame, source: str, fields: list[Column], events: SparkColumn, prefix: str
    ) -> DataFrame:
        from pyspark.sql import functions as F

        event = temp_column(prefix, "event")
        kept = [c for c in staged.columns if not c.startswith(TEMP_PREFIX)]
        exploded = staged.select(*[column(c) for c in kept], F.explode(events).alias(event))
        ref = column(event)
        out = []
        for name in kept:
            if name == source:
                out += [ref.getField("row").getField(f.name).alias(f.name) for f in fields]
            else:
                out.append(column(name))
        error, op = ref.getField("error").alias(error_column(prefix)), ref.getField("op").alias(OP_COLUMN)
        return exploded.select(*out, error, op)

    # ---- encode ----

    def encode(self, frame: DataFrame, fields: list[Column], options: dict[str, str]) -> SparkColumn:
        from pyspark.sql import functions as F

        if self.flag(options, "schema-include"):
            raise self.fail(
                "cannot write with 'schema-include' = 'true'", hint="Flink refuses it too; remove the option"
            )
        row = encode_row(fields, style_for(self.option(options, "timestamp-format.standard")))
        kind = column(OP_COLUMN) if OP_COLUMN in frame.columns else F.lit(INSERT)
        sides = {"before": [], "after": []}
        for k, (_, side) in WRITES.items():
            sides[side].append(k)
        op = F.lit(None).cast("string")
        for k, (code, _) in WRITES.items():
            op = F.when(kind == F.lit(k), F.lit(code)).otherwise(op)
        envelope = F.struct(
            F.when(kind.isin(*sides["before"]), row).alias("before"),
            F.when(kind.isin(*sides["after"]), row).alias("after"),
            op.alias("op"),
        )
        return F.to_json(envelope, json_write_options(self, options)).cast("binary")


def event_type(row: FieldType) -> str:
    """The Spark type of one element of `_events`."""
    return f"STRUCT<op: STRING, error: STRING, row: {row.spark}>"
