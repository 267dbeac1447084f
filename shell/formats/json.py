"""Flink's 'json' format on Spark: one JSON object per record, one key per column.

Why it exists: JSON is the most common topic format, and Spark's from_json alone cannot say which records were
bad (it returns NULLs), loses digits of large decimals and has one timestamp pattern for all columns. So a
record is read in steps, all Spark SQL expressions:

1. `from_json(text, STRUCT<every column: STRING>)` gives each column's own JSON text (a string's content,
   or the JSON of a number, object or array) -- present or NULL, never failing. Its corrupt-record column holds
   the text when it is not a well-formed JSON object: "malformed JSON" (one parse per record). With
   `fail-on-missing-field`, `json_object_keys(text)` also tells a missing key from an explicit null (and NULL
   keys mark the malformed text instead); nested objects are checked the same way, level by level.
2. Each text is converted to the column's type with `try_*` functions (fields.py); nested ROW/ARRAY/MAP texts
   are parsed the same way, level by level, with higher-order functions (transform, filter). A text that is
   present but converts to NULL is a type mismatch: "field 'id': expected INT", "field 'tags[]': expected INT".
   The record's values (and a debezium event's before/after rows) are computed in a projection of their own and
   the checks read them back: each field is converted once.
3. DECIMALs are taken from one more from_json with a schema holding only the decimal parts of the table
   (Spark's text of a JSON number goes through DOUBLE and would round them).

Those steps are the reference, and the slow way. A table of scalar columns first parses each record once with
its STRING, BOOLEAN, INT, BIGINT, DOUBLE and DECIMAL columns typed (where Spark's typed parse is known to agree
with step 2) and its other columns as text, converted as in step 2. Only a record that this parse refuses (not
an object, or a typed field that does not fit) takes steps 1-3, which name the fault, or accept what Flink
accepts and Spark's typed parse does not, such as "42" for an INT. So a good record costs one parse.

Keys match column names case-sensitively, as in Flink (`accountId` reads "accountId"). A string such as "42" is
accepted for an INT column, as Flink does. Encoding is `to_json(struct(...))` with timestamps, dates and bytes
written as Flink writes them (see fields.py) and NULL fields written as null unless
`encode.ignore-null-fields` is true.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar

from shell.catalog.model import Column
from shell.formats.base import Format, check_types, computed_once, error_column, replace_source, temp_column
from shell.formats.fields import (
    SCALAR_KINDS,
    FieldType,
    TimestampStyle,
    column,
    field_path,
    field_type,
    first_error,
    first_in_array,
    from_text,
    mismatch,
    quoted,
    style_for,
    to_json_value,
)
from shell.options import OptionSpec

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType

TIMESTAMP_STANDARD = OptionSpec(
    "timestamp-format.standard",
    "enum",
    default="SQL",
    allowed=("SQL", "ISO-8601"),
    description="timestamp text: 'SQL' (yyyy-MM-dd HH:mm:ss.SSS) or 'ISO-8601' (yyyy-MM-ddTHH:mm:ss.SSS)",
)
IGNORE_PARSE_ERRORS = OptionSpec(
    "ignore-parse-errors", "bool", default="false", description="skip records that do not decode instead of failing"
)
MAP_NULL_KEY_MODE = OptionSpec(
    "map-null-key.mode", "enum", default="FAIL", allowed=("FAIL", "DROP", "LITERAL"),
    description="how to write a NULL map key (Spark maps have none, so this never applies)",
)
MAP_NULL_KEY_LITERAL = OptionSpec("map-null-key.literal", default="null", description="the key text for LITERAL")
DECIMAL_AS_PLAIN = OptionSpec(
    "encode.decimal-as-plain-number", "bool", default="false", description="accepted; decimals are written by Spark"
)
IGNORE_NULL_FIELDS = OptionSpec(
    "encode.ignore-null-fields", "bool", default="false", description="leave NULL fields out of written JSON"
)
JSON_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("fail-on-missing-field", "bool", default="false", description="a missing key is an error"),
    IGNORE_PARSE_ERRORS,
    TIMESTAMP_STANDARD,
    MAP_NULL_KEY_MODE,
    MAP_NULL_KEY_LITERAL,
    DECIMAL_AS_PLAIN,
    IGNORE_NULL_FIELDS,
    OptionSpec("decode.json-parser.enabled", "bool", default="true", description="accepted for compatibility"),
)


# ---- Spark schemas for the parsing steps -----------------------------------------------------------------------


def text_schema(children: tuple[tuple[str, FieldType], ...]) -> DataType:
    """STRUCT<every child: STRING>: each key's own JSON text."""
    from pyspark.sql.types import StringType, StructField, StructType

    return StructType([StructField(name, StringType()) for name, _ in children])


def exact_schema(t: FieldType) -> DataType | None:
    """The decimal parts of `t` (ROW/ARRAY/MAP pruned to the paths that lead to a DECIMAL), or None."""
    from pyspark.sql.types import ArrayType, DecimalType, MapType, StringType, StructField, StructType

    if t.kind == "DECIMAL":
        precision, scale = _decimal_params(t)
        return DecimalType(precision, scale)
    if t.kind == "ROW":
        parts = [(name, exact_schema(child)) for name, child in t.children]
        kept = [StructField(name, schema) for name, schema in parts if schema is not None]
        return StructType(kept) if kept else None
    if t.kind == "ARRAY":
        element = exact_schema(t.element)
        return ArrayType(element) if element is not None else None
    if t.kind == "MAP":
        value = exact_schema(t.value)
        return MapType(StringType(), value) if value is not None else None
    return None


def _decimal_params(t: FieldType) -> tuple[int, int]:
    inside = t.spark[t.spark.index("(") + 1 : t.spark.index(")")]
    precision, scale = (int(p) for p in inside.split(","))
    return precision, scale


def row_type(fields: list[Column]) -> FieldType:
    """The table's fields as one ROW type."""
    return row_of(tuple((f.name, field_type(f.data_type)) for f in fields))


def row_of(children: tuple[tuple[str, FieldType], ...]) -> FieldType:
    """A ROW type made of `children` (name, type)."""
    spark = ", ".join(f"{quoted(name)}: {child.spark}" for name, child in children)
    flink = ", ".join(f"{quoted(name)} {child.flink}" for name, child in children)
    return FieldType(kind="ROW", spark=f"STRUCT<{spark}>", flink=f"ROW<{flink}>", children=children)


CORRUPT = "__corrupt_record"  # from_json's column for a text that is not a well-formed object
# NaN/Infinity are not JSON (json_object_keys refuses them too); Spark would read them as numbers
CORRUPT_OPTIONS = {"columnNameOfCorruptRecord": CORRUPT, "allowNonNumericNumbers": "false"}


def with_corrupt(schema: DataType) -> DataType:
    """`schema` (a STRUCT) with from_json's corrupt-record column added."""
    from pyspark.sql.types import StringType, StructField

    return schema.add(StructField(CORRUPT, StringType(), True))


def refused(parsed: SparkColumn) -> SparkColumn:
    """Whether a from_json with the corrupt-record column (`CORRUPT_OPTIONS`) did not read its text: not a
    well-formed object, or a typed field that does not fit."""
    return parsed.isNull() | parsed.getField(CORRUPT).isNotNull()


@dataclass
class StructParts:
    """A JSON object being read: each key's text, the keys present (NULL: not an object; None: not read),
    exact decimals, and whether the text is not a well-formed JSON object."""

    texts: SparkColumn
    keys: SparkColumn | None
    exact: SparkColumn | None
    malformed: SparkColumn

    @classmethod
    def parse(cls, text: SparkColumn, t: FieldType, exact: SparkColumn | None) -> StructParts:
        from pyspark.sql import functions as F

        keys = F.json_object_keys(text)
        return cls(F.from_json(text, text_schema(t.children)), keys, exact, keys.isNull())

    def text(self, name: str) -> SparkColumn:
        return self.texts.getField(name)

    def exact_of(self, name: str, child: FieldType) -> SparkColumn | None:
        if self.exact is None or exact_schema(child) is None:
            return None
        return self.exact.getField(name)


def stage_object(
    frame: DataFrame,
    text: SparkColumn,
    t: FieldType,
    name: str,
    parse_exact: Callable[[DataType], SparkColumn] | None = None,
    keys: bool = True,
    only_if: SparkColumn | None = None,
    beside: dict[str, SparkColumn] | None = None,
) -> tuple[DataFrame, StructParts]:
    """`frame` with a column `name` holding the parsed parts of the JSON object `text`, and those parts.

    The top level is computed once in its own column (its parts are used by every field's value and error).
    `parse_exact(schema)` reads the exact decimals from the original record (default: from_json of `text`);
    an envelope format passes its own, since `text` may be Spark's re-written JSON of an inner object.
    Without `keys`, the object's keys are not listed and from_json alone tells a malformed text (a JSON parse
    less per record: json_object_keys costs about as much as from_json). With `only_if`, records where it is
    false are not parsed at all (their parts are NULL, so they read as malformed: the caller must not use them).
    `beside` holds more columns for the same projection, such as a typed first parse whose refusal is `only_if`:
    Spark's common-subexpression elimination then parses once for both (in a projection of its own, the typed
    parse would cost one more copy of every record).
    """
    from pyspark.sql import functions as F

    exact = exact_schema(t)
    if keys:
        parts = {"texts": F.from_json(text, text_schema(t.children)), "keys": F.json_object_keys(text)}
    else:
        parts = {"texts": F.from_json(text, with_corrupt(text_schema(t.children)), CORRUPT_OPTIONS)}
    if exact is not None:
        parts["exact"] = parse_exact(exact) if parse_exact else F.from_json(text, exact)
    if only_if is not None:
        parts = {what: F.when(only_if, part) for what, part in parts.items()}
    # computed once: else the bad-record filter inlines the parse ~17 times
    staged_parts = computed_once(*(part.alias(what) for what, part in parts.items()))
    staged = frame.withColumns({**(beside or {}), name: staged_parts})
    ref = column(name)
    texts = ref.getField("texts")
    listed = ref.getField("keys") if keys else None
    malformed = listed.isNull() if keys else refused(texts)
    return staged, StructParts(texts, listed, ref.getField("exact") if exact else None, malformed)


# ---- reading ---------------------------------------------------------------------------------------------------


@dataclass
class Converted:
    """A value and the reason it is not one (NULL when it converted)."""

    value: SparkColumn
    error: SparkColumn


class JsonReader:
    """Converts JSON texts to typed values, recursively, reporting the first mismatch with its path."""

    def __init__(self, style: TimestampStyle, fail_on_missing: bool = False):
        self.style = style
        self.fail_on_missing = fail_on_missing
        self._nested = {"ROW": self._row, "ARRAY": self._array, "MAP": self._map}
        self.staged: dict[str, StructParts] = {}  # a nested ROW's parts by path, parsed in a projection of their own

    def convert(self, text: SparkColumn, t: FieldType, path: str, exact: SparkColumn | None = None) -> Converted:
        handler = self._nested.get(t.kind, self._scalar)
        return handler(text, t, path, exact)

    def convert_object(self, parts: StructParts, t: FieldType, path: str = "") -> Converted:
        """The ROW of an object's parts (a struct of the children) and its first error."""
        values = self.object_values(parts, t, path)
        return Converted(values, self.object_error(parts, t, values, path))

    def object_values(self, parts: StructParts, t: FieldType, path: str = "") -> SparkColumn:
        """The struct of an object's converted children."""
        from pyspark.sql import functions as F

        values = []
        for name, child in t.children:
            converted = self.convert(parts.text(name), child, field_path(path, name), parts.exact_of(name, child))
            values.append(converted.value.alias(name))
        return F.struct(*values)

    def object_error(self, parts: StructParts, t: FieldType, values: SparkColumn, path: str = "") -> SparkColumn:
        """The first error of an object whose converted children are the fields of `values`.

        A scalar child's check reads its value from `values`. Given a reference to values computed once, in a
        projection of their own, no conversion runs twice: inline, each check would convert again, since Spark
        shares no subexpression that sits in a conditional branch (the checks are CASE WHENs in a COALESCE)."""
        from pyspark.sql import functions as F

        errors = []
        for name, child in t.children:
            child_path = field_path(path, name)
            if self.fail_on_missing:
                missing = ~F.array_contains(parts.keys, name)
                errors.append(F.when(missing, F.lit(f"missing field '{child_path}'")))
            text = parts.text(name)
            if child.kind in SCALAR_KINDS:
                errors.append(self.scalar_error(text, values.getField(name), child, child_path))
            else:
                errors.append(self.convert(text, child, child_path, parts.exact_of(name, child)).error)
        return first_error(errors)

    def _scalar(self, text: SparkColumn, t: FieldType, path: str, exact: SparkColumn | None) -> Converted:
        value = exact if exact is not None else from_text(text, t, self.style)
        return Converted(value, self.scalar_error(text, value, t, path))

    def scalar_error(self, text: SparkColumn, value: SparkColumn, t: FieldType, path: str) -> SparkColumn:
        """A text that is present but converts to NULL is a type mismatch."""
        from pyspark.sql import functions as F

        return F.when(text.isNotNull() & value.isNull(), F.lit(mismatch(path, t, self.style)))

    def _row(self, text: SparkColumn, t: FieldType, path: str, exact: SparkColumn | None) -> Converted:
        from pyspark.sql import functions as F

        parts = self.staged.get(path) or StructParts.parse(text, t, exact)
        inner = self.convert_object(parts, t, path)
        is_object = ~parts.malformed
        wrong = text.isNotNull() & parts.malformed
        error = F.when(wrong, F.lit(mismatch(path, t, self.style))).otherwise(F.when(is_object, inner.error))
        return Converted(F.when(is_object, inner.value), error)

    def _array(self, text: SparkColumn, t: FieldType, path: str, exact: SparkColumn | None) -> Converted:
        from pyspark.sql import functions as F
        from pyspark.sql.types import ArrayType, StringType

        items = F.from_json(text, ArrayType(StringType()))
        element, element_path = t.element, f"{path}[]"

        def convert(x: SparkColumn, i: SparkColumn) -> Converted:
            element_exact = F.try_element_at(exact, i + 1) if exact is not None else None
            return self.convert(x, element, element_path, element_exact)

        value = F.transform(items, lambda x, i: convert(x, i).value)
        errors = first_in_array(F.transform(items, lambda x, i: convert(x, i).error))
        wrong = text.isNotNull() & items.isNull()
        return Converted(value, F.when(wrong, F.lit(mismatch(path, t, self.style))).otherwise(errors))

    def _map(self, text: SparkColumn, t: FieldType, path: str, exact: SparkColumn | None) -> Converted:
        from pyspark.sql import functions as F
        from pyspark.sql.types import MapType, StringType

        entries = F.from_json(text, MapType(StringType(), StringType()))
        key, value_type = t.key, t.value
        value_path = f"{path}[]"

        def convert(k: SparkColumn, v: SparkColumn) -> Converted:
            value_exact = F.try_element_at(exact, k) if exact is not None else None
            return self.convert(v, value_type, value_path, value_exact)

        values = F.transform_values(entries, lambda k, v: convert(k, v).value)
        errors = [first_in_array(F.map_values(F.transform_values(entries, lambda k, v: convert(k, v).error)))]
        if key.kind != "STRING":  # JSON keys are text: convert them, and never build a map with a NULL key
            bad_key = F.exists(F.map_keys(entries), lambda k: from_text(k, key, self.style).isNull())
            errors.insert(0, F.when(bad_key, F.lit(f"field '{path}' key: expected {key.flink}")))
            typed = F.transform_keys(values, lambda k, v: from_text(k, key, self.style))
            values = F.when(~bad_key, typed)
        wrong = text.isNotNull() & entries.isNull()
        error = F.when(wrong, F.lit(mismatch(path, t, self.style))).otherwise(first_error(errors))
        return Converted(values, error)


def stage_row(
    frame: DataFrame, reader: JsonReader, text: SparkColumn, t: FieldType, path: str, exact: SparkColumn | None,
    name: str, only_if: SparkColumn | None = None, beside: dict[str, SparkColumn] | None = None,
) -> tuple[DataFrame, StructParts, Converted]:
    """`frame` with the JSON object `text` read as the ROW `t` in two projections of their own (the object's parts,
    then its fields' values), the parts, and that ROW with its first error, which reads the parts and values back.

    Inline (`JsonReader.convert`), Spark parses the object and converts each field again for the error: they sit
    in conditional branches, which its common-subexpression elimination does not share."""
    from pyspark.sql import functions as F

    given_exact = (lambda schema: exact) if exact is not None else None
    frame, parts = stage_object(
        frame, text, t, f"{name}_parts", given_exact, keys=reader.fail_on_missing, only_if=only_if, beside=beside
    )
    frame, reader.staged = stage_nested_rows(frame, parts, t, path, name)
    try:
        is_object = ~parts.malformed
        row = F.when(is_object, reader.object_values(parts, t, path))
        frame = frame.withColumn(f"{name}_values", computed_once(row.alias("row")))
        values = column(f"{name}_values").getField("row")
        wrong = text.isNotNull() & parts.malformed
        inner = F.when(is_object, reader.object_error(parts, t, values, path))
    finally:
        reader.staged = {}
    return frame, parts, Converted(values, F.when(wrong, F.lit(mismatch(path, t, reader.style))).otherwise(inner))


def stage_nested_rows(
    frame: DataFrame, parts: StructParts, t: FieldType, path: str, name: str
) -> tuple[DataFrame, dict[str, StructParts]]:
    """`frame` with the parts of every ROW field of the object (and of theirs, a projection per depth), and those
    parts by path.

    Parsed inline, a nested object is parsed once per field it has, twice over: Spark's optimizer prunes the
    schema of `from_json(text).field` to that one field (OptimizeJsonExprs), so each field gets a parse of its own,
    and the checks, in conditional branches, parse again. Nexmark's events (a ROW each for the person, the auction
    and the bid, 7-10 fields) cost about 4x hand-written PySpark's decode that way."""
    from pyspark.sql import functions as F

    staged: dict[str, StructParts] = {}
    level = [(parts, t, path)]
    depth = 0
    while level:
        found = [(owner, field_path(at, child_name), child_name, child)
                 for owner, row, at in level for child_name, child in row.children if child.kind == "ROW"]
        if not found:
            break
        projected = f"{name}_rows{depth}"
        fields = []
        for index, (owner, _, child_name, child) in enumerate(found):
            parsed = StructParts.parse(owner.text(child_name), child, None)
            fields.append(F.struct(parsed.texts.alias("texts"), parsed.keys.alias("keys")).alias(f"r{index}"))
        frame = frame.withColumn(projected, computed_once(*fields))
        level = []
        for index, (owner, child_path, child_name, child) in enumerate(found):
            ref = column(projected).getField(f"r{index}")
            keys = ref.getField("keys")
            staged[child_path] = StructParts(ref.getField("texts"), keys, owner.exact_of(child_name, child),
                                             keys.isNull())
            level.append((staged[child_path], child, child_path))
        depth += 1
    return frame, staged


# Spark types whose typed from_json gives exactly the value that converting the field's text gives, and fails
# (fills the corrupt-record column) wherever that conversion fails; tests/spark/test_formats.py holds both
# decodes side by side over awkward values of every type. Not TINYINT (Spark reads 200 as the byte -56), not
# FLOAT (the text of a JSON number comes through a DOUBLE, the typed parse does not: the rounding could differ),
# not timestamps and dates (Spark's typed parse takes a JSON number as epoch seconds or days).
TYPED_FIRST = {"STRING": "StringType", "BOOLEAN": "BooleanType", "INT": "IntegerType", "BIGINT": "LongType",
               "DOUBLE": "DoubleType"}  # fmt: skip


def reads_typed(t: FieldType) -> bool:
    return t.spark in TYPED_FIRST or t.kind == "DECIMAL"


def typed_first_schema(t: FieldType) -> DataType | None:
    """The schema of a typed first parse of the ROW `t`, its other scalar fields as text and its ROW fields as
    structs of the same kind, or None when `t` (or a ROW in it) has an ARRAY or MAP field: such tables are read as
    text only."""
    struct = _typed_struct(t)
    return with_corrupt(struct) if struct is not None else None


def _typed_struct(t: FieldType):  # noqa: ANN202 - a pyspark StructType, or None
    from pyspark.sql import types

    fields = []
    for name, child in t.children:
        if child.kind == "ROW":
            spark_type = _typed_struct(child)
            if spark_type is None:
                return None
        elif child.is_nested:
            return None
        elif child.kind == "DECIMAL":
            spark_type = types.DecimalType(*_decimal_params(child))
        else:
            spark_type = getattr(types, TYPED_FIRST.get(child.spark, "StringType"))()
        fields.append(types.StructField(name, spark_type))
    return types.StructType(fields)


@dataclass
class TypedFirst:
    """A typed first parse of a record: its fields' values, whether it succeeded and, if so, the record's error
    (a field read as text that does not convert, such as a timestamp)."""

    values: SparkColumn
    clean: SparkColumn
    error: SparkColumn


def typed_first_parse(text: SparkColumn, schema: DataType) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.from_json(text, schema, CORRUPT_OPTIONS)


def stage_typed_values(
    frame: DataFrame, reader: JsonReader, row: SparkColumn, t: FieldType, name: str
) -> tuple[DataFrame, TypedFirst]:
    """`frame` with, in a projection of its own, the fields that the typed first parse `row` (a staged
    `typed_first_parse`) read as text converted, in ROW fields too; the parse failed (not clean) when the text is
    not an object or a typed field does not fit."""
    from pyspark.sql import functions as F

    clean = ~refused(row)
    as_text: list[tuple[tuple[str, ...], FieldType]] = []  # the path of each field read as text
    values = _typed_values(row, t, reader.style, (), as_text)
    if not as_text:
        return frame, TypedFirst(values, clean, F.lit(None).cast("string"))  # nothing read as text: no error
    frame = frame.withColumn(f"{name}_values", computed_once(F.when(clean, values).alias("row")))
    read_back = column(f"{name}_values").getField("row")
    errors = [reader.scalar_error(_field_at(row, names), _field_at(read_back, names), child, ".".join(names))
              for names, child in as_text]
    return frame, TypedFirst(read_back, clean, first_error(errors))


def _typed_values(row: SparkColumn, t: FieldType, style: TimestampStyle, at: tuple[str, ...],
                  as_text: list[tuple[tuple[str, ...], FieldType]]) -> SparkColumn:
    """The struct of a typed parse's fields, those it read as text converted (their paths added to `as_text`)."""
    from pyspark.sql import functions as F

    values = []
    for n, child in t.children:
        field = row.getField(n)
        if child.kind == "ROW":
            values.append(F.when(field.isNotNull(), _typed_values(field, child, style, (*at, n), as_text)).alias(n))
        elif reads_typed(child):
            values.append(field.alias(n))
        else:
            as_text.append(((*at, n), child))
            values.append(from_text(field, child, style).alias(n))
    return F.struct(*values)


def _field_at(row: SparkColumn, names: tuple[str, ...]) -> SparkColumn:
    for name in names:
        row = row.getField(name)
    return row


def decode_object(
    frame: DataFrame,
    source: str,
    fields: list[Column],
    reader: JsonReader,
    prefix: str,
    typed_first: bool = True,
) -> tuple[DataFrame, SparkColumn, SparkColumn]:
    """Stage the JSON object in `source`; return the frame, the struct of field values and the error.

    A record is parsed with its scalar fields typed first (one from_json, cheaper than text plus conversion)
    and only a record that fails that parse is read again field by field as text, to name what is wrong with
    it or to accept what Flink accepts and Spark's typed parse does not (a number given as a string, "TRUE").
    Tables with ARRAY or MAP fields (in a ROW too), `fail-on-missing-field` and `typed_first=False` read every
    record as text."""
    from pyspark.sql import functions as F

    t = row_type(fields)
    raw = column(source)
    text = raw.cast("string")
    name = temp_column(prefix, "json")
    schema = typed_first_schema(t) if typed_first and not reader.fail_on_missing else None
    first = None
    if schema is None:
        staged, parts, record = stage_row(frame, reader, text, t, "", None, name)
    else:  # the typed parse, and the text read of what it refused, in one projection
        parsed, typed = typed_first_parse(text, schema), f"{name}_typed"
        beside = {typed: computed_once(parsed.alias("row"))}
        staged, parts, record = stage_row(frame, reader, text, t, "", None, name, refused(parsed), beside)
        staged, first = stage_typed_values(staged, reader, column(typed).getField("row"), t, typed)
    error = first_error(
        [
            F.when(F.octet_length(raw) == 0, F.lit("empty record")),
            F.when(parts.malformed, F.lit("malformed JSON")),  # before the row's own "expected ROW<...>"
            record.error,
        ]
    )
    if first is None:
        return staged, record.value, F.when(raw.isNotNull(), error)
    values = F.when(first.clean, first.values).otherwise(record.value)
    return staged, values, F.when(raw.isNotNull(), F.when(first.clean, first.error).otherwise(error))


# ---- the format ------------------------------------------------------------------------------------------------


def check_json_types(fmt: Format, fields: list[Column]) -> None:
    """Types JSON can hold: anything Spark can, with scalar map keys."""
    check_types(fmt, fields)
    for f in fields:
        for part in field_type(f.data_type).walk():
            if part.kind == "MAP" and part.key.kind not in SCALAR_KINDS:
                raise fmt.fail(f"column '{f.name}': map keys must be a scalar type, got {part.key.flink}")
            if part.kind not in SCALAR_KINDS and not part.is_nested:
                raise fmt.fail(f"column '{f.name}': type {part.flink} is not supported")


class JsonFormat(Format):
    """One JSON object per record, one key per column."""

    name: ClassVar[str] = "json"
    options: ClassVar[tuple[OptionSpec, ...]] = JSON_OPTIONS

    def check(self, fields: list[Column], options: dict[str, str] | None = None) -> None:
        check_json_types(self, fields)

    def check_options(self, options: dict[str, str]) -> None:
        if self.flag(options, "fail-on-missing-field") and self.flag(options, "ignore-parse-errors"):
            raise self.fail(
                "'fail-on-missing-field' and 'ignore-parse-errors' cannot both be true",
                hint="a missing field is a parse error; choose one",
            )

    def reader(self, options: dict[str, str]) -> JsonReader:
        style = style_for(self.option(options, "timestamp-format.standard"))
        return JsonReader(style, self.flag(options, "fail-on-missing-field"))

    def decode(
        self, frame: DataFrame, source: str, fields: list[Column], options: dict[str, str], prefix: str = ""
    ) -> DataFrame:
        staged, values, error = decode_object(frame, source, fields, self.reader(options), prefix)
        return replace_source(staged, source, fields, values, error, error_column(prefix), prefix)

    def encode(self, frame: DataFrame, fields: list[Column], options: dict[str, str]) -> SparkColumn:
        from pyspark.sql import functions as F

        row = encode_row(fields, style_for(self.option(options, "timestamp-format.standard")))
        return F.to_json(row, json_write_options(self, options)).cast("binary")


def encode_row(fields: list[Column], style: TimestampStyle) -> SparkColumn:
    """A struct of the fields (by name) in their declared types, with text-valued parts already as text."""
    from pyspark.sql import functions as F

    parts = []
    for f in fields:
        t = field_type(f.data_type)
        parts.append(to_json_value(column(f.name).cast(t.spark), t, style).alias(f.name))
    return F.struct(*parts)


def json_write_options(fmt: Format, options: dict[str, str]) -> dict[str, str]:
    return {"ignoreNullFields": "true" if fmt.flag(options, "encode.ignore-null-fields") else "false"}
