"""Flink's 'csv' format: one delimited line per record, columns by position.

Why it exists: CSV topics are common for simple feeds. Decoding is `from_csv` with every column as STRING plus
Spark's corrupt-record column, then the same text-to-type conversions as JSON (fields.py), so a record reports:

* the wrong number of fields (Spark fills the corrupt-record column for short and long lines; an empty line
  for a table of several columns is caught separately): "malformed CSV: expected 3 fields";
* a field whose text does not fit its type: "field 'id': expected INT";
* with `allow-comments`, a line starting with '#': "comment line" (Flink also treats it as a parse error, to be
  skipped with `ignore-parse-errors`).

NULLs: an unquoted empty field (or `null-literal` when set) is NULL; a quoted empty field ("") is the empty
string, so both round-trip. Quotes inside quoted fields are doubled ("a""b") unless `escape-character` is set.
ARRAY columns of scalars are joined with `array-element-delimiter` (';'). ROW and MAP columns are rejected at
CREATE TABLE time.

Encoding joins the fields' texts with `concat_ws`, quoting a field only when it must be (it holds the delimiter,
the quote or escape character or a line break, or is empty). Spark's `to_csv` is not used for writing: in Spark
4.2 it fails with a NullPointerException on a one-column row whose value is NULL, and it cannot turn quoting off.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from shell.catalog.model import Column
from shell.formats.base import Format, check_types, computed_once, error_column, replace_source, temp_column, unescape
from shell.formats.fields import (
    SCALAR_KINDS,
    SQL_STYLE,
    FieldType,
    column,
    field_type,
    first_error,
    first_in_array,
    from_text,
    mismatch,
    to_text,
)
from shell.formats.json import IGNORE_PARSE_ERRORS
from shell.options import OptionSpec

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame

CSV_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("field-delimiter", "char", default=",", description="one character between fields ('\\t' for tab)"),
    OptionSpec("disable-quote-character", "bool", default="false", description="never quote fields"),
    OptionSpec("quote-character", "char", default='"', description="the character that encloses fields"),
    OptionSpec("allow-comments", "bool", default="false", description="lines starting with '#' are comments"),
    IGNORE_PARSE_ERRORS,
    OptionSpec("array-element-delimiter", default=";", description="separates the elements of ARRAY columns"),
    OptionSpec("escape-character", "char", description="escapes quotes inside quoted fields (default: doubling)"),
    OptionSpec("null-literal", description="text read and written as NULL (default: an empty field)"),
    OptionSpec("write-bigdecimal-in-scientific-notation", "bool", default="true", description="accepted"),
)
CORRUPT = "__corrupt"
# What Spark reads for a quoted empty field (""), so that it is told apart from an unquoted empty one (NULL).
EMPTY_MARK = "\u0000\u0001empty\u0001\u0000"
COMMENT_PREFIX = "#"


class CsvSettings:
    """The Spark CSV options and the pieces of Flink's options the expressions need."""

    def __init__(self, fmt: Format, options: dict[str, str]):
        self.delimiter = unescape(fmt.option(options, "field-delimiter") or ",")
        self.quoting = not fmt.flag(options, "disable-quote-character")
        self.quote = unescape(fmt.option(options, "quote-character") or '"')
        escape = fmt.option(options, "escape-character")
        self.escape = unescape(escape) if escape else self.quote
        self.null_literal = fmt.option(options, "null-literal")
        self.array_delimiter = unescape(fmt.option(options, "array-element-delimiter") or ";")
        self.comments = fmt.flag(options, "allow-comments")

    def common(self) -> dict[str, str]:
        return {
            "sep": self.delimiter,
            "quote": self.quote if self.quoting else "",
            "escape": self.escape,
            "nullValue": self.null_literal if self.null_literal is not None else "",
            "ignoreLeadingWhiteSpace": "false",
            "ignoreTrailingWhiteSpace": "false",
        }

    def read(self) -> dict[str, str]:
        return {
            **self.common(),
            "mode": "PERMISSIVE",
            "columnNameOfCorruptRecord": CORRUPT,
            "emptyValue": EMPTY_MARK,
        }


def _schema(count: int) -> str:
    """Positional STRING columns (names never clash with the table's) and the corrupt-record column."""
    return ", ".join([f"c{i} STRING" for i in range(count)] + [f"{CORRUPT} STRING"])


def _element_texts(text: SparkColumn, settings: CsvSettings) -> SparkColumn:
    from pyspark.sql import functions as F

    pieces = F.split(text, re.escape(settings.array_delimiter), -1)
    return F.when(text == F.lit(""), F.array().cast("array<string>")).otherwise(pieces)


def _value(text: SparkColumn, t: FieldType, settings: CsvSettings) -> SparkColumn:
    """One field's value, NULL when its text does not convert."""
    from pyspark.sql import functions as F

    if t.kind != "ARRAY":
        return from_text(text, t, SQL_STYLE)
    return F.transform(_element_texts(text, settings), lambda x: from_text(x, t.element, SQL_STYLE))


def _error(text: SparkColumn, value: SparkColumn, t: FieldType, name: str, settings: CsvSettings) -> SparkColumn:
    """Why one field's text did not convert (NULL when it did), given its `value`: a scalar's check reads the
    value instead of converting again."""
    from pyspark.sql import functions as F

    if t.kind != "ARRAY":
        return F.when(text.isNotNull() & value.isNull(), F.lit(mismatch(name, t)))
    element = t.element
    reason = F.lit(mismatch(name + "[]", element))
    bad = F.transform(_element_texts(text, settings), lambda x: F.when(from_text(x, element, SQL_STYLE).isNull(), reason))
    return first_in_array(bad)


def _quoted_cell(text: SparkColumn, settings: CsvSettings) -> SparkColumn:
    """A field's text as written: quoted when it holds a delimiter, quote, escape or line break, or is empty
    (so that it is not read back as NULL); quotes inside are escaped (doubled by default)."""
    from pyspark.sql import functions as F

    if not settings.quoting:
        return text
    quote, escape = F.lit(settings.quote), F.lit(settings.escape)
    specials = {settings.delimiter, settings.quote, settings.escape, "\r", "\n"}
    needs_quotes = F.lit(False)
    for special in sorted(specials):
        needs_quotes = needs_quotes | text.contains(special)
    escaped = text
    if settings.escape != settings.quote:
        escaped = F.replace(escaped, escape, F.lit(settings.escape * 2))
    escaped = F.replace(escaped, quote, F.lit(settings.escape + settings.quote))
    wrapped = F.concat(quote, escaped, quote)
    return F.when(text == F.lit(""), F.lit(settings.quote * 2)).when(needs_quotes, wrapped).otherwise(text)


def _field_text(f: Column, settings: CsvSettings) -> SparkColumn:
    """A field as the text written for it."""
    from pyspark.sql import functions as F

    t = field_type(f.data_type)
    value = column(f.name).cast(t.spark)
    if t.kind != "ARRAY":
        return to_text(value, t, SQL_STYLE)
    element = t.element
    null_text = F.lit(settings.null_literal or "")
    texts = F.transform(value, lambda x: F.coalesce(to_text(x, element, SQL_STYLE), null_text))
    return F.array_join(texts, settings.array_delimiter)


def _record_errors(text: SparkColumn, parsed: SparkColumn, count: int, settings: CsvSettings) -> list[SparkColumn]:
    """Reasons that concern the whole line rather than one field."""
    from pyspark.sql import functions as F

    wrong_count = F.lit(f"malformed CSV: expected {count} fields")
    errors = [F.when(parsed.getField(CORRUPT).isNotNull(), wrong_count)]
    if count > 1:  # Spark reads an empty line as all NULLs, without complaint
        errors.insert(0, F.when(text == F.lit(""), wrong_count))
    if settings.comments:
        errors.insert(0, F.when(text.startswith(COMMENT_PREFIX), F.lit("comment line")))
    return errors


class CsvFormat(Format):
    """One delimited line per record, columns by position."""

    name: ClassVar[str] = "csv"
    options: ClassVar[tuple[OptionSpec, ...]] = CSV_OPTIONS

    def check(self, fields: list[Column], options: dict[str, str] | None = None) -> None:
        check_types(self, fields)
        for f in fields:
            t = field_type(f.data_type)
            scalar = t.element if t.kind == "ARRAY" else t
            if scalar.kind not in SCALAR_KINDS:
                raise self.fail(
                    f"column '{f.name}' has type {t.flink}, which csv cannot hold",
                    hint="csv holds scalar types and arrays of them; use 'json' for ROW and MAP",
                )

    def check_options(self, options: dict[str, str]) -> None:
        if self.flag(options, "disable-quote-character") and "quote-character" in options:
            raise self.fail("'quote-character' cannot be set when 'disable-quote-character' is true")

    def decode(
        self, frame: DataFrame, source: str, fields: list[Column], options: dict[str, str], prefix: str = ""
    ) -> DataFrame:
        from pyspark.sql import functions as F

        self.check(fields)
        settings = CsvSettings(self, options)
        raw = column(source)
        text = raw.cast("string")
        tmp = temp_column(prefix, "csv")
        staged = frame.withColumn(tmp, F.from_csv(text, _schema(len(fields)), settings.read()))
        parsed = column(tmp)
        cells = []
        for i, f in enumerate(fields):
            cell = parsed.getField(f"c{i}")
            cells.append((f, field_type(f.data_type), F.when(cell == F.lit(EMPTY_MARK), F.lit("")).otherwise(cell)))
        # every field's value once, in a projection of its own: the checks read them back
        values_name = temp_column(prefix, "values")
        row = F.struct(*[_value(cell, t, settings).alias(f.name) for f, t, cell in cells])
        staged = staged.withColumn(values_name, computed_once(row.alias("row")))
        values = column(values_name).getField("row")
        errors = [_error(cell, values.getField(f.name), t, f.name, settings) for f, t, cell in cells]
        error = F.when(raw.isNotNull(), first_error(_record_errors(text, parsed, len(fields), settings) + errors))
        return replace_source(staged, source, fields, values, error, error_column(prefix), prefix)

    def encode(self, frame: DataFrame, fields: list[Column], options: dict[str, str]) -> SparkColumn:
        from pyspark.sql import functions as F

        self.check(fields)
        settings = CsvSettings(self, options)
        null_text = F.lit(settings.null_literal or "")
        cells = [F.coalesce(_quoted_cell(_field_text(f, settings), settings), null_text) for f in fields]
        return F.concat_ws(settings.delimiter, *cells).cast("binary")
