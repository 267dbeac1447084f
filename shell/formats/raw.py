"""Flink's 'raw' format: the whole record is one column's value, as bytes.

Why it exists: many topics carry plain text lines or opaque bytes (and keys are often plain strings); the raw
format maps the record to exactly one physical column without any parsing. As in Flink:

* STRING / VARCHAR / CHAR: the bytes decoded with `raw.charset` (UTF-8 default; also US-ASCII and ISO-8859-1).
  Invalid bytes become U+FFFD, as Java's `new String(bytes, charset)` does; characters the charset cannot
  hold are written as '?', as `String.getBytes(charset)` does.
* BYTES / VARBINARY / BINARY: the bytes themselves.
* BOOLEAN, TINYINT, SMALLINT, INT, BIGINT: fixed-size two's-complement numbers in `raw.endianness`
  (big-endian default); a record of the wrong size is an error ("expected 4 bytes for INT"). Decoding goes
  through hex and `conv(..., 16, -10)`, encoding through `hex` and `unhex`.

FLOAT and DOUBLE (supported by Flink) are not: Spark SQL has no bit-level float conversion. A table with more
than one physical column or another type is rejected at CREATE TABLE time (`check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar

from shell.catalog.model import Column
from shell.formats.base import Format, check_types, error_column, replace_source
from shell.formats.fields import FieldType, column, field_type
from shell.options import OptionSpec

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame

RAW_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "charset", "enum", default="UTF-8", allowed=("UTF-8", "US-ASCII", "ISO-8859-1"),
        description="charset of STRING values",
    ),
    OptionSpec(
        "endianness", "enum", default="big-endian", allowed=("big-endian", "little-endian"),
        description="byte order of numeric values",
    ),
)

# Size in bytes of the fixed-size types (by Spark type name).
SIZES: dict[str, int] = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8}


# ---- charsets: (decode bytes -> string, encode string -> bytes) ------------------------------------------------


def _utf8_decode(b: SparkColumn) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.make_valid_utf8(b.cast("string"))


def _utf8_encode(s: SparkColumn) -> SparkColumn:
    return s.cast("binary")


def _latin1_decode(b: SparkColumn) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.decode(b, "ISO-8859-1")  # every byte is a character: never fails


def _latin1_encode(s: SparkColumn) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.encode(F.regexp_replace(s, "[^\\x00-\\xFF]", "?"), "ISO-8859-1")


def _ascii_decode(b: SparkColumn) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.regexp_replace(_latin1_decode(b), "[\\x80-\\xFF]", "\ufffd")


def _ascii_encode(s: SparkColumn) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.encode(F.regexp_replace(s, "[^\\x00-\\x7F]", "?"), "US-ASCII")


CHARSETS: dict[str, tuple[Callable[[SparkColumn], SparkColumn], Callable[[SparkColumn], SparkColumn]]] = {
    "UTF-8": (_utf8_decode, _utf8_encode),
    "ISO-8859-1": (_latin1_decode, _latin1_encode),
    "US-ASCII": (_ascii_decode, _ascii_encode),
}


# ---- numbers ---------------------------------------------------------------------------------------------------


def _swap_bytes(hex_text: SparkColumn, size: int) -> SparkColumn:
    """The hex text of `size` bytes in the opposite byte order."""
    from pyspark.sql import functions as F

    pieces = [F.substring(hex_text, 2 * i + 1, 2) for i in reversed(range(size))]
    return F.concat(*pieces) if size > 1 else hex_text


def _bytes_to_number(b: SparkColumn, spark_type: str, little: bool) -> SparkColumn:
    from pyspark.sql import functions as F

    size = SIZES[spark_type]
    digits = F.hex(b)
    digits = _swap_bytes(digits, size) if little else digits
    if spark_type == "BOOLEAN":
        return digits != F.lit("00")
    sign = F.when(F.substring(digits, 1, 1) >= F.lit("8"), F.lit("F")).otherwise(F.lit("0"))
    return F.conv(F.lpad(digits, 16, sign), 16, -10).cast(spark_type)


def _number_to_bytes(value: SparkColumn, spark_type: str, little: bool) -> SparkColumn:
    from pyspark.sql import functions as F

    size = SIZES[spark_type]
    if spark_type == "BOOLEAN":
        digits = F.when(value, F.lit("01")).otherwise(F.lit("00"))
    else:
        digits = F.substring(F.lpad(F.hex(value.cast("bigint")), 16, "0"), 17 - 2 * size, 2 * size)
    digits = _swap_bytes(digits, size) if little else digits
    return F.when(value.isNotNull(), F.unhex(digits))


# ---- the three kinds of column raw can hold: (decode bytes -> (value, error), encode value -> bytes) ---------


def _decode_string(raw: SparkColumn, t: FieldType, settings: RawSettings):
    return settings.charset[0](raw), None


def _encode_string(value: SparkColumn, t: FieldType, settings: RawSettings) -> SparkColumn:
    return settings.charset[1](value)


def _decode_binary(raw: SparkColumn, t: FieldType, settings: RawSettings):
    return raw, None


def _encode_binary(value: SparkColumn, t: FieldType, settings: RawSettings) -> SparkColumn:
    return value


def _decode_number(raw: SparkColumn, t: FieldType, settings: RawSettings):
    from pyspark.sql import functions as F

    size = SIZES[t.spark]
    wrong = F.octet_length(raw) != size
    error = F.when(wrong, F.lit(f"expected {size} byte{'s' if size > 1 else ''} for {t.flink}"))
    return _bytes_to_number(raw, t.spark, settings.little_endian), error


def _encode_number(value: SparkColumn, t: FieldType, settings: RawSettings) -> SparkColumn:
    return _number_to_bytes(value, t.spark, settings.little_endian)


KINDS = {
    "STRING": (_decode_string, _encode_string),
    "BINARY": (_decode_binary, _encode_binary),
    "NUMBER": (_decode_number, _encode_number),
}


def _kind(t: FieldType) -> str:
    """'STRING', 'BINARY' or 'NUMBER' (fixed-size), or '' when raw cannot hold `t`."""
    if t.kind in ("STRING", "BINARY"):
        return t.kind
    return "NUMBER" if t.spark in SIZES else ""


@dataclass(frozen=True)
class RawSettings:
    charset: tuple[Callable[[SparkColumn], SparkColumn], Callable[[SparkColumn], SparkColumn]]
    little_endian: bool


# ---- the format ------------------------------------------------------------------------------------------------


class RawFormat(Format):
    """The whole record is the value of the one column: text in `charset`, the bytes, or a fixed-size number."""

    name: ClassVar[str] = "raw"
    options: ClassVar[tuple[OptionSpec, ...]] = RAW_OPTIONS

    def check(self, fields: list[Column], options: dict[str, str] | None = None) -> None:
        check_types(self, fields)
        if len(fields) != 1:
            names = ", ".join(f.name for f in fields) or "none"
            raise self.fail(
                f"needs exactly one physical column, got {len(fields)} ({names})",
                hint="use 'json' or 'csv' for several columns",
            )
        t = field_type(fields[0].data_type)
        if not _kind(t):
            raise self.fail(
                f"column '{fields[0].name}' has type {t.flink}, which raw cannot hold",
                hint="use STRING, BYTES, BOOLEAN, TINYINT, SMALLINT, INT or BIGINT",
            )

    def settings(self, options: dict[str, str]) -> RawSettings:
        charset = CHARSETS.get((self.option(options, "charset") or "UTF-8").upper(), CHARSETS["UTF-8"])
        little = (self.option(options, "endianness") or "").lower() == "little-endian"
        return RawSettings(charset, little)

    def decode(
        self, frame: DataFrame, source: str, fields: list[Column], options: dict[str, str], prefix: str = ""
    ) -> DataFrame:
        from pyspark.sql import functions as F

        self.check(fields)
        field = fields[0]
        t = field_type(field.data_type)
        value, error = KINDS[_kind(t)][0](column(source).cast("binary"), t, self.settings(options))
        values = F.struct(value.cast(t.spark).alias(field.name))
        error = error if error is not None else F.lit(None).cast("string")
        return replace_source(frame, source, fields, values, error, error_column(prefix), prefix)

    def encode(self, frame: DataFrame, fields: list[Column], options: dict[str, str]) -> SparkColumn:
        self.check(fields)
        field = fields[0]
        t = field_type(field.data_type)
        return KINDS[_kind(t)][1](column(field.name).cast(t.spark), t, self.settings(options))
