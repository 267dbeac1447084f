"""What every format declares and provides: the bytes of a topic turned into a table's columns and back.

Why it exists: connectors (Kafka, Pulsar, ...) read and write bytes; the table declares columns and a format
('format' = 'json', 'value.format' = 'csv', 'key.format' = 'raw', ...). A `Format` bridges the two with Spark
SQL expressions only (no Python per row), so the same code serves streaming and batch DataFrames, and a record
that does not decode is reported instead of failing the query.

Decoding contract (every format):

* `decode(frame, source, fields, options, prefix)` replaces the BINARY column `source` of `frame` by one column
  per field (named `field.name`, typed `flink_type_to_spark(field.data_type)`), in place, and appends the error
  column `error_column(prefix)`; changelog formats also append `OP_COLUMN`. Other columns pass through unchanged.
* The error column is NULL when the record decoded, and otherwise a short reason ("malformed JSON",
  "field 'id': expected INT", "missing field 'id'"); then every field is NULL. Formats always report errors;
  what to do with them (`ignore-parse-errors`, dead letters, failing the query) is the connector layer's choice.
* A NULL source (a tombstone) decodes to NULL fields and a NULL error; debezium-json drops it (see there).

Error column naming: the value format's errors are in `__error` (prefix ""), the key format's in `__key_error`
(prefix "key"): `error_column(prefix)` is `__error` for the empty prefix and `__<prefix>_error` otherwise.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING, ClassVar

from shell.catalog.model import Column
from shell.changes import RowKind
from shell.errors import OptionError
from shell.formats.fields import column, field_type
from shell.options import OptionSpec

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame

ERROR_COLUMN = "__error"  # STRING: NULL when the record decoded, else a short reason
OP_COLUMN = "__op"  # STRING: '+I', '-U', '+U', '-D' (changelog formats only)
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE
TEMP_PREFIX = "__fmt_"  # intermediate columns of a decode; never visible in its result


def error_column(prefix: str = "") -> str:
    """The error column of a decode: '__error' for the value (prefix ''), '__key_error' for prefix 'key'."""
    return f"__{prefix}_error" if prefix else ERROR_COLUMN


def computed_once(*parts: SparkColumn) -> SparkColumn:
    """A struct of `parts` that Spark computes once, in a projection of its own.

    The struct also holds spark_partition_id(), which makes its projection nondeterministic, and Spark's optimizer
    never pushes a filter through such a projection nor merges it into the next one. Without it, a filter on a
    part (`WHERE error IS NULL`) gets the part's whole expression (a JSON parse, every field's check) inlined into
    it and into each column after it, and runs it several times per record."""
    from pyspark.sql import functions as F

    return F.struct(*parts, F.spark_partition_id().alias("partition"))


def temp_column(prefix: str, what: str) -> str:
    return f"{TEMP_PREFIX}{prefix or 'value'}_{what}"


def unescape(value: str) -> str:
    """A character option as Flink reads it: '\\t' means a tab, '\\u0001' the character 0x01."""
    if "\\" not in value:
        return value
    try:
        return codecs.decode(value, "unicode_escape")
    except UnicodeDecodeError:
        return value


class Format:
    """Base class; subclasses set `name`, `options` and implement decode/encode."""

    name: ClassVar[str]
    options: ClassVar[tuple[OptionSpec, ...]] = ()  # keys without the format prefix
    produces_changelog: ClassVar[bool] = False

    # ---- validation (CREATE TABLE time, no Spark) ----

    def check(self, fields: list[Column], options: dict[str, str] | None = None) -> None:
        """Format-specific checks of the columns it reads and writes (raise OptionError)."""

    def check_options(self, options: dict[str, str]) -> None:
        """Checks that involve several options at once (raise OptionError). `options` are prefix-stripped."""

    # ---- run time ----

    def decode(
        self, frame: DataFrame, source: str, fields: list[Column], options: dict[str, str], prefix: str = ""
    ) -> DataFrame:
        raise NotImplementedError

    def encode(self, frame: DataFrame, fields: list[Column], options: dict[str, str]) -> SparkColumn:
        raise NotImplementedError

    # ---- helpers ----

    def option(self, options: dict[str, str], key: str) -> str | None:
        """The value given for `key` (prefix-stripped), or its declared default."""
        if key in options:
            return options[key]
        spec = next((s for s in self.options if s.key == key), None)
        return spec.default if spec else None

    def flag(self, options: dict[str, str], key: str) -> bool:
        return (self.option(options, key) or "false").strip().lower() == "true"

    def fail(self, message: str, hint: str | None = None) -> OptionError:
        return OptionError(f"format '{self.name}': {message}", hint=hint)


def check_types(fmt: Format, fields: list[Column]) -> None:
    """Every field has a type the format can hold (unknown types raise from the type parser)."""
    for f in fields:
        if f.data_type is None:
            raise fmt.fail(f"column '{f.name}' has no type")
        field_type(f.data_type)


def replace_source(
    frame: DataFrame,
    source: str,
    fields: list[Column],
    values: SparkColumn,
    error: SparkColumn,
    error_name: str,
    prefix: str,
) -> DataFrame:
    """`frame` with `source` replaced by the fields of the struct `values` (NULL when `error` is set) and the
    error column appended. `values` and `error` may use temporary columns of `frame`; those are dropped."""
    from pyspark.sql import functions as F

    err, val = temp_column(prefix, "err"), temp_column(prefix, "val")
    kept = [c for c in frame.columns if not c.startswith(TEMP_PREFIX)]
    # One projection computes the error and the values once; the next one only picks from them.
    staged = frame.select(*[column(c) for c in kept], error.alias(err), values.alias(val))
    out: list[SparkColumn] = []
    for name in kept:
        if name == source:
            out += [F.when(column(err).isNull(), column(val).getField(f.name)).alias(f.name) for f in fields]
        else:
            out.append(column(name))
    return staged.select(*out, column(err).alias(error_name))
