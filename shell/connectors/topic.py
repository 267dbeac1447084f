"""What Kafka and Pulsar tables have in common: key and value bytes turned into columns, metadata, upserts.

A topic connector reads a raw frame (`key`, `value` as BINARY plus its own metadata columns) and writes one. The
rules for getting from there to the table's columns are Flink's and the same for both systems, so they live
here once:

- `value.format` (or `format`) decodes the value into the value fields: every physical column, or the non-key
  ones with `'value.fields-include' = 'EXCEPT_KEY'`; `key.format` decodes the key into the key fields
  (`key.fields` = 'a;b', or the primary key of an upsert table). A column that is in both takes the value's,
  except for a tombstone, whose only content is its key.
- metadata columns read the connector's metadata (`offset`, `publishTime`, ...), cast to the declared type.
- an upsert table marks each row with its change: a NULL value (tombstone) deletes the key (`-D`), any other
  value is the key's new version (`+U`).
- a record that does not decode keeps its raw bytes and gets a reason in `__error`, so the caller can count
  it and keep it aside instead of failing.
- an append table has no use for a tombstone (a NULL value): Flink skips it; here it is a record that does not
  decode ("null value (a tombstone) in an append-only table"), kept aside like the others, never a row of NULLs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from shell.catalog.model import Column, TableDef
from shell.changes import RowKind
from shell.connectors.base import APPEND, UPSERT, OptionSpec
from shell.errors import CatalogError, OptionError
from shell.formats.base import ERROR_COLUMN, OP_COLUMN, error_column
from shell.formats.registry import format_options
from shell.sql.types import flink_type_to_spark

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame

RAW_KEY, RAW_VALUE = "__raw_key", "__raw_value"  # the undecoded bytes, kept for dead letters
POSITION = "__position"  # where a record came from (topic, partition, offset), for dead letters
ORDER = "__order"  # upsert tables: a LONG that orders the messages of one key (offset in its partition)
KEY_PREFIX = "__key_"  # decoded key fields, before they are merged into the table's columns
META_PREFIX = "__meta_"  # metadata columns, before they get their names in the table
KEY_BYTES, VALUE_BYTES = "__key_bytes", "__value_bytes"  # what a sink writes
NULL_VALUE_ERROR = "null value (a tombstone) in an append-only table"

FORMAT_OPTIONS = (
    OptionSpec("format", description="format of the value (same as value.format)"),
    OptionSpec("value.format", description="format of the value: json, csv, raw, debezium-json, avro"),
    OptionSpec("key.format", description="format of the key: raw, json, csv, avro"),
    OptionSpec("key.fields", description="columns stored in the key, separated by ';'"),
    OptionSpec("key.fields-prefix", description="prefix of key columns in the table, not in the key"),
    OptionSpec(
        "value.fields-include", "enum", default="ALL", allowed=("ALL", "EXCEPT_KEY"),
        description="whether key columns are also in the value",
    ),
    OptionSpec(
        "errors.mode", "enum", default="dead-letter", allowed=("dead-letter", "ignore", "fail"),
        description="what happens to a record that does not decode",
    ),
    OptionSpec("errors.path", description="folder for records that do not decode (default <home>/errors/<table>)"),
)  # fmt: skip


@dataclass(frozen=True)
class Metadata:
    """One metadata key of a connector: the raw column (a Spark SQL expression) and the Flink type it has."""

    expression: str
    data_type: str
    writable: bool = False


@dataclass(frozen=True)
class TopicLayout:
    """Which columns of a table come from the key, from the value, and from metadata."""

    key_fields: list[Column]
    value_fields: list[Column]
    metadata: list[Column]
    key_format: tuple | None  # (Format, options) or None
    value_format: tuple  # (Format, options)
    changelog_mode: str

    @property
    def changelog(self) -> bool:
        return self.changelog_mode != APPEND or self.value_format[0].produces_changelog


def layout(table: TableDef, changelog_mode: str, metadata: dict[str, Metadata]) -> TopicLayout:
    """Work out (and check, at CREATE TABLE time) how `table` maps onto keys, values and metadata."""
    value = format_options(table.options, "value")
    if value is None:
        raise OptionError(f"table '{table.name}' needs 'value.format' (or 'format')", hint="e.g. 'value.format' = 'json'")
    key = format_options(table.options, "key")
    physical = table.physical_columns()
    prefix = table.options.get("key.fields-prefix", "")
    if changelog_mode == UPSERT:
        if not table.primary_key:
            raise OptionError(
                f"upsert table '{table.name}' needs a primary key",
                hint="add PRIMARY KEY (col) NOT ENFORCED: the key of each message is the row's key",
            )
        if key is None:
            raise OptionError(f"upsert table '{table.name}' needs 'key.format'", hint="e.g. 'key.format' = 'raw'")
        key_names = list(table.primary_key)
        if "key.fields" in table.options:
            raise OptionError("'key.fields' is not used by upsert tables: the primary key is the key")
    else:
        key_names = [n.strip() for n in table.options.get("key.fields", "").split(";") if n.strip()]
        if key_names and key is None:
            raise OptionError("'key.fields' needs 'key.format'", hint="e.g. 'key.format' = 'raw'")
        if key is not None and not key_names:
            raise OptionError("'key.format' needs 'key.fields' to say which columns are in the key")
    key_fields = []
    for name in key_names:
        column = table.column(name)
        if column is None or not column.is_physical:
            raise CatalogError(f"key column '{name}' is not a physical column of table '{table.name}'")
        key_fields.append(column)
    if table.options.get("value.fields-include", "ALL") == "EXCEPT_KEY":
        keys = {c.name.lower() for c in key_fields}
        value_fields = [c for c in physical if c.name.lower() not in keys]
    else:
        value_fields = physical
    for column in table.metadata_columns():
        if column.metadata_name not in metadata:
            raise OptionError(
                f"column '{column.name}': unknown metadata key '{column.metadata_name}'",
                hint="available: " + ", ".join(sorted(metadata)),
            )
    if key is not None:
        key[0].check([_unprefixed(c, prefix) for c in key_fields], key[1])
    value[0].check(value_fields, value[1])
    return TopicLayout(key_fields, value_fields, table.metadata_columns(), key, value, changelog_mode)


def _unprefixed(column: Column, prefix: str) -> Column:
    from dataclasses import replace

    if prefix and column.name.startswith(prefix):
        return replace(column, name=column.name[len(prefix) :])
    return column


def decode(
    raw: "DataFrame", table: TableDef, topic: TopicLayout, metadata: dict[str, Metadata], position: str,
    order: str = "0",
) -> "DataFrame":
    """The table's physical and metadata columns from a raw frame with `key`, `value` and metadata columns.

    The result also has `__error` (why a record did not decode, else NULL), the raw key and value and the
    record's position (`position`, a Spark SQL expression over the raw frame) for dead letters, and `__op`
    when the table is a changelog; an upsert table's rows also get `__order` (`order`, a LONG expression that
    grows with the messages of a partition), so the engine applies a key's changes in the order they were sent.
    """
    from pyspark.sql import functions as F

    # Metadata and position first, under names of our own, and nothing else of the raw frame but the key and the
    # value: a physical column may well be called `timestamp`, `topic` or `offset` like a raw connector column.
    frame = raw.select("*", F.col("key").alias(RAW_KEY), F.col("value").alias(RAW_VALUE))
    meta_names = [f"{META_PREFIX}{i}" for i in range(len(topic.metadata))]
    frame = frame.select(
        "key", "value", RAW_KEY, RAW_VALUE, F.expr(position).alias(POSITION), F.expr(order).cast("long").alias(ORDER),
        *[
            F.expr(metadata[c.metadata_name].expression).cast(flink_type_to_spark(c.data_type)).alias(name)
            for c, name in zip(topic.metadata, meta_names)
        ],
    )  # fmt: skip
    errors = []
    prefix = table.options.get("key.fields-prefix", "")
    if topic.key_format is not None:
        # The key first, its fields renamed at once: a column may be in the key and in the value.
        key_format, key_options = topic.key_format
        renamed = [_unprefixed(c, prefix) for c in topic.key_fields]
        frame = key_format.decode(frame, "key", renamed, key_options, prefix="key")
        for r, c in zip(renamed, topic.key_fields):
            frame = frame.withColumnRenamed(r.name, KEY_PREFIX + c.name)
        errors.append(F.col(error_column("key")))
    else:
        frame = frame.drop("key")
    value_format, value_options = topic.value_format
    frame = value_format.decode(frame, "value", topic.value_fields, value_options)
    errors.insert(0, F.col(ERROR_COLUMN))
    if topic.changelog_mode == APPEND and not value_format.produces_changelog:
        # A tombstone has no row to append: Flink skips it; we keep it aside instead of making a row of NULLs.
        errors.insert(0, F.when(F.col(RAW_VALUE).isNull(), F.lit(NULL_VALUE_ERROR)))
    tombstone = F.col(RAW_VALUE).isNull()
    value_names = {c.name.lower() for c in topic.value_fields}
    key_names = {c.name.lower() for c in topic.key_fields}
    columns: list["SparkColumn"] = []
    for column in table.physical_columns():
        name = column.name.lower()
        from_key = F.col(f"`{KEY_PREFIX}{column.name}`") if name in key_names else None
        from_value = F.col(f"`{column.name}`") if name in value_names else None
        if from_key is not None and from_value is not None:
            chosen = F.when(tombstone, from_key).otherwise(from_value)
        else:
            chosen = from_key if from_key is not None else from_value
        if chosen is None:
            chosen = F.lit(None).cast(flink_type_to_spark(column.data_type))
        columns.append(chosen.alias(column.name))
    for column, name in zip(topic.metadata, meta_names):
        columns.append(F.col(name).alias(column.name))
    extras = [F.coalesce(*errors).alias(ERROR_COLUMN), F.col(RAW_KEY), F.col(RAW_VALUE), F.col(POSITION)]
    if topic.changelog_mode == UPSERT:
        extras.append(F.when(tombstone, F.lit(RowKind.DELETE)).otherwise(F.lit(RowKind.UPDATE_AFTER)).alias(OP_COLUMN))
        extras.append(F.col(ORDER))
    elif value_format.produces_changelog:
        extras.append(F.col(OP_COLUMN))
    return frame.select(*columns, *extras)


def encode(batch: "DataFrame", table: TableDef, topic: TopicLayout) -> "DataFrame":
    """A frame with `key` and `value` BINARY (plus the original columns) for writing `batch` to the topic.

    For an upsert table, `-D` rows become tombstones (NULL value) and `-U` rows are dropped: the `+U` that
    follows carries the new version.
    """
    from pyspark.sql import functions as F

    value_format, value_options = topic.value_format
    has_op = OP_COLUMN in batch.columns
    if has_op and topic.changelog_mode == UPSERT:
        batch = batch.where(F.col(OP_COLUMN) != F.lit(RowKind.UPDATE_BEFORE))
    elif has_op and not value_format.produces_changelog:
        refused = batch.where(F.col(OP_COLUMN) != F.lit(RowKind.INSERT)).limit(1).count()
        if refused:
            raise OptionError(
                f"table '{table.name}' is append-only and cannot take updates or deletes",
                hint="declare a PRIMARY KEY and use an upsert connector, or a changelog format like debezium-json",
            )
    key = F.lit(None).cast("binary")
    if topic.key_format is not None:
        prefix = table.options.get("key.fields-prefix", "")
        renamed = [_unprefixed(c, prefix) for c in topic.key_fields]
        aliases = [F.col(f"`{c.name}`").alias(r.name) for r, c in zip(renamed, topic.key_fields) if r.name != c.name]
        batch = batch.select("*", *aliases) if aliases else batch
        key_format, key_options = topic.key_format
        key = key_format.encode(batch, renamed, key_options)
    value = value_format.encode(batch, topic.value_fields, value_options)
    if has_op and topic.changelog_mode == UPSERT:
        value = F.when(F.col(OP_COLUMN) == F.lit(RowKind.DELETE), F.lit(None).cast("binary")).otherwise(value)
    return batch.select("*", key.alias(KEY_BYTES), value.alias(VALUE_BYTES))
