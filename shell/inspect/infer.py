"""From a handful of raw messages to a proposed CREATE TABLE: what DESCRIBE TOPIC prints.

Why it exists: writing the first CREATE TABLE for an existing topic means guessing its format, columns and types
from a few messages by eye. This module does that guessing in plain Python (no Spark, no broker), so it is fast
and unit-tested on its own:

- values: JSON objects (the `json` format; keys become columns, nested objects ROW<...> or MAP<STRING, ...>,
  lists ARRAY<...>, numbers BIGINT/DOUBLE, strings that look like Flink or ISO-8601 timestamps TIMESTAMP(p) or,
  with a zone, TIMESTAMP_LTZ(p), and the one `timestamp-format.standard` that reads them), delimited text (`csv`,
  columns f0, f1, ...) or anything else (`raw`: STRING when it is UTF-8 text, else BYTES);
- keys: none, UTF-8 text (`'key.format' = 'raw'`), JSON objects (`'key.format' = 'json'`) or bytes; a key equal
  to a value column becomes `'key.fields'` on that column, else a column of its own (`'value.fields-include'`
  = 'EXCEPT_KEY'), and a commented-out PRIMARY KEY line shows the upsert variant;
- the connector's metadata columns, a computed time column for epoch numbers and a watermark, commented out.

Everything the guess is unsure about (mixed types, only NULLs seen, timestamps in two styles) is written as a
comment above the statement. The statement itself is printed from a TableDef by the catalog's DDL printer, so it
parses and validates as it is (the unit tests check both, with and without the commented lines).
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field, replace
from typing import Callable

from shell.catalog.model import Column, ColumnKind, TableDef, Watermark
from shell.sql.ddl import create_table_sql
from shell.sql.fragments import identifier, to_sql

NULL, BOOLEAN, INT, DECIMAL, DOUBLE, STRING, TIMESTAMP, DATE, ARRAY, OBJECT, MIXED = (
    "NULL", "BOOLEAN", "INT", "DECIMAL", "DOUBLE", "STRING", "TIMESTAMP", "DATE", "ARRAY", "OBJECT", "MIXED"
)  # fmt: skip
NUMERIC = frozenset({INT, DECIMAL, DOUBLE})
TEXTUAL = frozenset({STRING, TIMESTAMP, DATE})
FAMILY = {BOOLEAN: "boolean", INT: "number", DECIMAL: "number", DOUBLE: "number", STRING: "string",
          TIMESTAMP: "string", DATE: "string", ARRAY: "array", OBJECT: "object"}  # fmt: skip
SQL, ISO = "SQL", "ISO-8601"  # the json format's `timestamp-format.standard`

INT64 = (-(2**63), 2**63 - 1)
_TIMESTAMP = re.compile(
    r"^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?P<sep>[ T])(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
    r"(?:\.(?P<fraction>\d{1,9}))?(?P<zone>Z|[+-]\d{2}(?::?\d{2})?)?$"
)
_DATE = re.compile(r"^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$")
_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TIME_NAME = re.compile(r"time|date|(^|_)ts($|_)|_at$|epoch|created|updated|modified", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
CSV_DELIMITERS = (",", ";", "\t", "|")
MAP_MIN_KEYS = 8  # a nested object with at least this many different keys, each in at most half of the objects: MAP


# ---- the raw input ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RawMessage:
    """One sampled message: its key and value bytes (None when absent: no key, or a tombstone)."""

    key: bytes | None
    value: bytes | None


def utf8(data: bytes | None) -> str | None:
    """The bytes as text when they are UTF-8 text (valid UTF-8 without control characters but tab and line
    breaks), else None: b'\\x00\\x01' is valid UTF-8, but not text anyone wrote."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if _CONTROL.search(text) else text


# ---- shapes: what the sampled values of one field look like -----------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """The merged look of one field's sampled values; `kind` is one of the constants above."""

    kind: str
    style: str | None = None  # TIMESTAMP: SQL ('2024-05-06 07:08:09') or ISO-8601 ('2024-05-06T07:08:09')
    zoned: bool = False  # TIMESTAMP: ends with 'Z' or an offset -> TIMESTAMP_LTZ
    digits: int = 0  # TIMESTAMP: most fraction digits seen; DECIMAL: most digits seen
    low: int | None = None  # INT: the range seen
    high: int | None = None
    element: "Shape | None" = None  # ARRAY: merged elements; None while only empty arrays were seen
    fields: tuple[tuple[str, "Shape"], ...] = ()  # OBJECT: fields in order of first appearance
    presence: tuple[tuple[str, int], ...] = ()  # OBJECT: in how many of the objects each field appeared
    count: int = 0  # OBJECT: how many objects were merged
    kinds: frozenset[str] = frozenset()  # MIXED: the families that were mixed ('number', 'string', ...)
    hint: str | None = None  # STRING: why a value that looks special stays text


def text_shape(text: str) -> Shape:
    """The shape of a JSON string value: a timestamp, a date, or text."""
    match = _TIMESTAMP.match(text)
    if match:
        zone = match.group("zone") or ""
        if ":" in zone:
            return Shape(STRING, hint="timestamps with a UTC offset like '+01:00' (only 'Z' or '+0100' are read)")
        return Shape(
            TIMESTAMP,
            style=SQL if match.group("sep") == " " else ISO,
            zoned=bool(zone),
            digits=len(match.group("fraction") or ""),
        )
    if _DATE.match(text):
        return Shape(DATE)
    return Shape(STRING)


def csv_field_shape(text: str) -> Shape:
    """The shape of one CSV field's text (an empty field is NULL, as the csv format reads it)."""
    if text == "":
        return Shape(NULL)
    if text.lower() in ("true", "false"):
        return Shape(BOOLEAN)
    if _INTEGER.match(text):
        digits = text.lstrip("+-")
        if len(digits) > 1 and digits.startswith("0"):  # '007', a zip code: text with meaning in its zeros
            return Shape(STRING)
        return number_shape(int(text))
    if _FLOAT.match(text):
        return Shape(DOUBLE)
    return text_shape(text)


def number_shape(value: int) -> Shape:
    if INT64[0] <= value <= INT64[1]:
        return Shape(INT, low=value, high=value)
    return Shape(DECIMAL, digits=len(str(abs(value))))


def json_shape(value: object) -> Shape:
    """The shape of one parsed JSON value."""
    if value is None:
        return Shape(NULL)
    if isinstance(value, bool):
        return Shape(BOOLEAN)
    if isinstance(value, int):
        return number_shape(value)
    if isinstance(value, float):
        return Shape(DOUBLE)
    if isinstance(value, str):
        return text_shape(value)
    if isinstance(value, list):
        element = None
        for item in value:
            element = merge(element, json_shape(item))
        return Shape(ARRAY, element=element)
    if isinstance(value, dict):
        return Shape(
            OBJECT,
            fields=tuple((str(k), json_shape(v)) for k, v in value.items()),
            presence=tuple((str(k), 1) for k in value),
            count=1,
        )
    return Shape(STRING)


def merge(a: Shape | None, b: Shape | None) -> Shape | None:
    """One shape that describes the values of both."""
    if a is None or a.kind == NULL:
        return b if b is not None else a
    if b is None or b.kind == NULL:
        return a
    if MIXED in (a.kind, b.kind):
        return Shape(MIXED, kinds=_families(a) | _families(b))
    if a.kind == b.kind:
        if a.kind == TIMESTAMP:
            if (a.style, a.zoned) != (b.style, b.zoned):
                return Shape(STRING, hint="timestamps written in different ways")
            return replace(a, digits=max(a.digits, b.digits))
        if a.kind == INT:
            return replace(a, low=min(a.low, b.low), high=max(a.high, b.high))  # type: ignore[type-var]
        if a.kind == DECIMAL:
            return replace(a, digits=max(a.digits, b.digits))
        if a.kind == ARRAY:
            return Shape(ARRAY, element=merge(a.element, b.element))
        if a.kind == OBJECT:
            return _merge_objects(a, b)
        if a.kind == STRING:
            return Shape(STRING, hint=a.hint or b.hint)
        return a
    if a.kind in NUMERIC and b.kind in NUMERIC:
        if DOUBLE in (a.kind, b.kind):
            return Shape(DOUBLE)
        return Shape(DECIMAL, digits=max(a.digits, b.digits))  # an INT's digits are fewer than a DECIMAL's
    if a.kind in TEXTUAL and b.kind in TEXTUAL:
        return Shape(STRING, hint=a.hint or b.hint)
    return Shape(MIXED, kinds=_families(a) | _families(b))


def _families(shape: Shape) -> frozenset[str]:
    return shape.kinds if shape.kind == MIXED else frozenset({FAMILY.get(shape.kind, "null")})


def _merge_objects(a: Shape, b: Shape) -> Shape:
    fields = dict(a.fields)
    for name, shape in b.fields:
        fields[name] = merge(fields.get(name), shape)  # type: ignore[assignment]
    presence = dict(a.presence)
    for name, seen in b.presence:
        presence[name] = presence.get(name, 0) + seen
    return Shape(OBJECT, fields=tuple(fields.items()), presence=tuple(presence.items()), count=a.count + b.count)


def is_map(shape: Shape) -> bool:
    """Whether a nested object is better read as MAP<STRING, ...> than as a ROW: its keys look like data."""
    if not shape.fields:
        return True
    names = [name for name, _ in shape.fields]
    data_keys = all(not _PLAIN_NAME.match(name) for name in names)  # '2024-05-06', '10.0.0.1', 'user:7'
    varying = len(names) >= MAP_MIN_KEYS and all(seen * 2 <= shape.count for _, seen in shape.presence)
    if not (data_keys or varying):
        return False
    values = None
    for _, child in shape.fields:
        values = merge(values, child)
    return values is None or values.kind != MIXED


# ---- shapes to Flink types -------------------------------------------------------------------------------------


def _precision(digits: int) -> int:
    return 3 if digits <= 3 else 6 if digits <= 6 else 9


def _quoted_field(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def timestamp_styles(shape: Shape | None, counts: dict[str, int]) -> None:
    """Count the timestamp styles in a shape, recursively (to pick the one the table reads)."""
    if shape is None:
        return
    if shape.kind == TIMESTAMP and shape.style:
        counts[shape.style] = counts.get(shape.style, 0) + 1
    elif shape.kind == ARRAY:
        timestamp_styles(shape.element, counts)
    elif shape.kind == OBJECT:
        for _, child in shape.fields:
            timestamp_styles(child, counts)


@dataclass
class TypeWriter:
    """Writes shapes as Flink types; collects a note for each guess worth checking."""

    style: str = SQL  # the one timestamp style the format reads
    notes: list[str] = field(default_factory=list)
    mixed_means: str = "STRING keeps each value's JSON text"

    def flink_type(self, shape: Shape | None, path: str) -> str:
        if shape is None or shape.kind == NULL:
            self.note(path, "only NULL values seen: STRING is a guess")
            return "STRING"
        kind = shape.kind
        if kind == BOOLEAN:
            return "BOOLEAN"
        if kind == INT:
            return "BIGINT"
        if kind == DOUBLE:
            return "DOUBLE"
        if kind == DECIMAL:
            if shape.digits > 38:
                self.note(path, "numbers of more than 38 digits: STRING")
                return "STRING"
            return "DECIMAL(38, 0)"
        if kind == DATE:
            return "DATE"
        if kind == TIMESTAMP:
            if shape.style != self.style:
                reads = f"the table reads {self.style} ones (one style per table)"
                self.note(path, f"{shape.style} timestamps, but {reads}: STRING")
                return "STRING"
            return f"TIMESTAMP{'_LTZ' if shape.zoned else ''}({_precision(shape.digits)})"
        if kind == ARRAY:
            if shape.element is None:
                self.note(path, "only empty arrays seen: the element type STRING is a guess")
                return "ARRAY<STRING>"
            return f"ARRAY<{self.flink_type(shape.element, path + '[]')}>"
        if kind == OBJECT:
            if is_map(shape):
                values = None
                for _, child in shape.fields:
                    values = merge(values, child)
                if not shape.fields:
                    self.note(path, "only empty objects seen: MAP<STRING, STRING> is a guess")
                return f"MAP<STRING, {self.flink_type(values, path + '{}') if values is not None else 'STRING'}>"
            parts = [f"{_quoted_field(n)} {self.flink_type(child, f'{path}.{n}')}" for n, child in shape.fields]
            return f"ROW<{', '.join(parts)}>"
        if kind == MIXED:
            self.note(path, f"mixed {' and '.join(sorted(shape.kinds))} values: {self.mixed_means}")
            return "STRING"
        if shape.hint:
            self.note(path, f"{shape.hint}: STRING")
        return "STRING"

    def note(self, path: str, text: str) -> None:
        line = f"{path}: {text}"
        if line not in self.notes:
            self.notes.append(line)


# ---- values ----------------------------------------------------------------------------------------------------


@dataclass
class ValueGuess:
    """What the values are: a format, the columns it yields (name, shape) and that format's options."""

    format: str  # json | csv | raw
    columns: list[tuple[str, Shape]]
    described: str
    options: dict[str, str] = field(default_factory=dict)  # format options, without the format prefix
    notes: list[str] = field(default_factory=list)
    records: list[dict | None] = field(default_factory=list)  # per message: the JSON object, if it was one
    raw_type: str | None = None  # raw: STRING or BYTES


def guess_values(values: list[bytes | None]) -> ValueGuess:
    present = [v for v in values if v is not None]
    texts = [utf8(v) for v in present]
    if not present:
        return ValueGuess("raw", [], "none (every sampled message is a tombstone)", raw_type="STRING",
                          notes=["value: no message had a value: STRING is a guess"])  # fmt: skip
    records = [_json_object(utf8(v)) for v in values]
    objects = [r for r in records if r is not None]
    if objects and len(objects) * 2 >= len(present):
        return _json_guess(objects, records, len(present))
    if all(t is not None for t in texts):
        guess = _csv_guess([t for t in texts if t is not None])
        if guess is not None:
            return guess
        notes = []
        parsed = sum(1 for t in texts if t is not None and _is_json(t))
        if parsed == len(texts):
            notes.append("value: JSON, but not objects (the json format reads objects): raw STRING")
        return ValueGuess("raw", [], "UTF-8 text", raw_type="STRING", notes=notes)
    text_count = sum(1 for t in texts if t is not None)
    notes = [f"value: {text_count} of {len(present)} values are UTF-8 text, the others bytes"] if text_count else []
    return ValueGuess("raw", [], "bytes (not UTF-8 text)", raw_type="BYTES", notes=notes)


def _json_object(text: str | None) -> dict | None:
    if text is None or not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _json_guess(objects: list[dict], records: list[dict | None], present: int) -> ValueGuess:
    merged: Shape | None = None
    for obj in objects:
        merged = merge(merged, json_shape(obj))
    assert merged is not None
    columns, notes = _columns_of(merged.fields)
    if not columns:
        notes.append("value: only empty JSON objects seen: raw STRING until fields show up")
        return ValueGuess("raw", [], "empty JSON objects", raw_type="STRING", notes=notes)
    if len(objects) < present:
        notes.append(
            f"value: {present - len(objects)} of {present} values are not JSON objects; they would be bad records"
        )
    described = f"JSON objects ({len(objects)} of {present})" if len(objects) < present else "JSON objects"
    return ValueGuess("json", columns, described, notes=notes, records=records)


def _columns_of(fields: tuple[tuple[str, Shape], ...]) -> tuple[list[tuple[str, Shape]], list[str]]:
    """Top-level columns from object fields: names that differ only by case cannot both be columns."""
    columns: list[tuple[str, Shape]] = []
    seen: dict[str, str] = {}
    notes = []
    for name, shape in fields:
        if not name.strip():
            notes.append("an empty field name was left out")
            continue
        if name.lower() in seen:
            notes.append(f"{name}: left out, column names ignore case and '{seen[name.lower()]}' is one")
            continue
        seen[name.lower()] = name
        columns.append((name, shape))
    return columns, notes


def _csv_guess(texts: list[str]) -> ValueGuess | None:
    """Delimited text: every line splits into the same number (at least 2) of fields with one delimiter."""
    best: tuple[str, list[list[str]]] | None = None
    for delimiter in CSV_DELIMITERS:
        rows = []
        for text in texts:
            if "\n" in text.strip("\r\n") or delimiter not in text:
                break
            try:
                row = next(csv.reader(io.StringIO(text.rstrip("\r\n")), delimiter=delimiter))
            except (csv.Error, StopIteration):
                break
            rows.append(row)
        if len(rows) != len(texts) or len({len(r) for r in rows}) != 1 or len(rows[0]) < 2:
            continue
        if len(rows) == 1 and len(rows[0]) < 3:
            continue  # 'hello, world' alone is no evidence of CSV
        if best is None or len(rows[0]) > len(best[1][0]):
            best = (delimiter, rows)
    if best is None:
        return None
    delimiter, rows = best
    width = len(rows[0])
    names = [f"f{i}" for i in range(width)]
    notes = []
    header = rows[0]
    body = rows[1:]
    if body and all(_PLAIN_NAME.match(h) for h in header) and len({h.lower() for h in header}) == width:
        shapes_below = [_merge_all(csv_field_shape(r[i]) for r in body) for i in range(width)]
        if any(s is not None and s.kind not in (STRING, NULL) for s in shapes_below):
            names, rows = list(header), body
            notes.append("value: the first message looks like a header row: its names are used; it would be a bad record")
    columns = [(names[i], _merge_all(csv_field_shape(r[i]) for r in rows) or Shape(NULL)) for i in range(width)]
    options = {} if delimiter == "," else {"field-delimiter": "\\t" if delimiter == "\t" else delimiter}
    shown = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "bar"}[delimiter]
    return ValueGuess("csv", columns, f"delimited text ({width} fields, {shown}-separated)", options, notes)


def _merge_all(shapes) -> Shape | None:  # noqa: ANN001 - an iterable of shapes
    merged = None
    for shape in shapes:
        merged = merge(merged, shape)
    return merged


# ---- keys ------------------------------------------------------------------------------------------------------


@dataclass
class KeyGuess:
    """How keys map onto columns: the new key columns (if any), the key options and the primary key for upserts."""

    described: str
    columns: list[tuple[str, str]] = field(default_factory=list)  # (name, Flink type) of columns added for the key
    options: dict[str, str] = field(default_factory=dict)
    primary_key: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def guess_keys(messages: list[RawMessage], values: ValueGuess, value_types: dict[str, str]) -> KeyGuess | None:
    keys = [m.key for m in messages]
    present = [k for k in keys if k is not None]
    if not present:
        return None
    partial = f" ({len(present)} of {len(keys)} messages have one)" if len(present) < len(keys) else ""
    taken = {name.lower() for name, _ in values.columns} | ({"value"} if values.format == "raw" else set())
    objects = [_json_object(utf8(k)) for k in keys]
    if all(o is not None for o, k in zip(objects, keys) if k is not None) and any(objects):
        return _json_keys(objects, values, value_types, taken, partial)
    texts = [utf8(k) for k in present]
    if all(t is not None for t in texts):
        same = _value_column_equal_to_key(keys, values, value_types)
        if same is not None:
            return KeyGuess(f"UTF-8 text, the same as the value's {same}{partial}", options={
                "key.format": "raw", "key.fields": same}, primary_key=[same])  # fmt: skip
        name = _free_name(("key", "message_key", "msg_key", "record_key"), taken)
        return KeyGuess(f"UTF-8 text{partial}", [(name, "STRING")], {"key.format": "raw", "key.fields": name,
                        "value.fields-include": "EXCEPT_KEY"}, [name])  # fmt: skip
    name = _free_name(("key", "message_key", "msg_key", "record_key"), taken)
    binary = sum(1 for t in texts if t is None)
    kind = "bytes (not UTF-8 text)" if binary == len(texts) else f"bytes ({binary} of {len(texts)} are not UTF-8 text)"
    return KeyGuess(f"{kind}{partial}", [(name, "BYTES")], {"key.format": "raw", "key.fields": name,
                    "value.fields-include": "EXCEPT_KEY"}, [name])  # fmt: skip


def _value_column_equal_to_key(keys: list[bytes | None], values: ValueGuess, types: dict[str, str]) -> str | None:
    """A STRING value column whose text is the key in every message that has both (raw keys read STRING as text)."""
    if values.format != "json":
        return None
    pairs = [(utf8(k), r) for k, r in zip(keys, values.records) if k is not None and r is not None]
    if not pairs:
        return None
    candidates = [name for name, _ in values.columns if types.get(name) == "STRING"]
    for name in sorted(candidates, key=lambda n: (not re.search("id|key", n, re.IGNORECASE), candidates.index(n))):
        if all(record.get(name) == key for key, record in pairs):
            return name
    return None


def _json_keys(
    objects: list[dict | None], values: ValueGuess, value_types: dict[str, str], taken: set[str], partial: str
) -> KeyGuess:
    merged = _merge_all(json_shape(o) for o in objects if o is not None)
    assert merged is not None
    names = [name for name, _ in merged.fields]
    pairs = [(o, r) for o, r in zip(objects, values.records) if o is not None and r is not None]
    value_names = {name for name, _ in values.columns}
    if names and pairs and all(n in value_names for n in names) and all(
        all(o.get(n) == r.get(n) for n in names) for o, r in pairs
    ):
        fields = ";".join(names)
        return KeyGuess(f"JSON objects, the same as the value's {', '.join(names)}{partial}",
                        options={"key.format": "json", "key.fields": fields},
                        primary_key=names)  # fmt: skip
    # Key columns are named as the key's fields, unless a value column has the name: then they get a prefix.
    prefixes = ("", "key_", "k_", "key__", "_key_")
    prefix = next(p for p in prefixes if not any((p + n).lower() in taken for n in names))
    writer = TypeWriter(style=SQL, mixed_means="STRING keeps each value's JSON text")
    columns = [(prefix + name, writer.flink_type(shape, f"key.{name}")) for name, shape in merged.fields]
    options = {"key.format": "json", "key.fields": ";".join(c for c, _ in columns)}
    if prefix:
        options["key.fields-prefix"] = prefix
    options["value.fields-include"] = "EXCEPT_KEY"
    return KeyGuess(f"JSON objects{partial}", columns, options, [c for c, _ in columns], writer.notes)


def _free_name(candidates: tuple[str, ...], taken: set[str]) -> str:
    for name in candidates:
        if name.lower() not in taken:
            return name
    index = 2
    while f"key{index}" in taken:
        index += 1
    return f"key{index}"


# ---- the proposal ----------------------------------------------------------------------------------------------

# Metadata offered (commented out) per connector: (column name, metadata key, Flink type).
METADATA_COLUMNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "kafka": (
        ("event_time", "timestamp", "TIMESTAMP_LTZ(3)"),
        ("partition", "partition", "INT"),
        ("offset", "offset", "BIGINT"),
        ("headers", "headers", "MAP<STRING, BYTES>"),
    ),
    "pulsar": (
        ("publish_time", "publish_time", "TIMESTAMP_LTZ(3)"),
        ("event_time", "event_time", "TIMESTAMP_LTZ(3)"),
        ("properties", "properties", "MAP<STRING, STRING>"),
        ("message_id", "message_id", "BYTES"),
    ),
}
STARTUP = {"kafka": ("scan.startup.mode", "earliest-offset"), "pulsar": ("scan.startup.mode", "earliest")}
UPSERT_CONNECTOR = {"kafka": "upsert-kafka", "pulsar": "upsert-pulsar"}


@dataclass
class Proposal:
    """The proposed table (what runs as printed), what is offered commented out, and the header notes."""

    table: TableDef
    extras: TableDef  # commented-out columns, watermark and primary key (same name, no options)
    extra_comments: dict[str, str]  # item text prefix -> trailing remark
    summary: list[str]
    notes: list[str]

    def text(self, redact: Callable[[str, str], str] | None = None) -> str:
        """The DDL with its header comment, the extras commented out, ending with ';'."""
        lines = [f"-- {line}" for line in self.summary]
        if self.notes:
            lines.append("-- Check these guesses:")
            lines.extend(f"--   {note}" for note in self.notes)
        ddl = create_table_sql(self.table, redact).splitlines()
        end = next(i for i, line in enumerate(ddl) if line.startswith(")"))
        items = self.extra_items()
        if items:
            inserted = ["  -- uncomment what you need (each line brings its comma):"]
            inserted += [f"  -- , {item}" for item in items]
            ddl[end:end] = inserted
        return "\n".join(lines + ddl) + ";"

    def extra_items(self) -> list[str]:
        """Each commented-out item as one line of DDL (column, WATERMARK, PRIMARY KEY), with its remark."""
        if not (self.extras.columns or self.extras.watermark or self.extras.primary_key):
            return []
        printed = create_table_sql(self.extras).splitlines()
        end = next(i for i, line in enumerate(printed) if line.startswith(")"))
        items = []
        for line in printed[1:end]:
            item = line.strip().removesuffix(",")
            remark = next((r for prefix, r in self.extra_comments.items() if item.startswith(prefix)), None)
            items.append(f"{item}  -- {remark}" if remark else item)
        return items


def table_name_for(topic: str) -> str:
    """A plain table name from a topic name ('persistent://public/default/my-orders' -> 'my_orders')."""
    base = topic.rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"[^0-9A-Za-z_]+", "_", base).strip("_")
    if not name:
        return "topic_table"
    return f"t_{name}" if name[0].isdigit() else name


def propose(
    connector: str,
    topic: str,
    connection: dict[str, str],
    messages: list[RawMessage],
    requested: int | None = None,
    position: str = "the earliest messages",
) -> Proposal:
    """The CREATE TABLE proposed for `messages` of `topic` on `connector` ('kafka' or 'pulsar').

    `connection` holds the options that reach the broker, as the user wrote them (they are copied as they are).
    """
    values = guess_values([m.value for m in messages])
    counts: dict[str, int] = {}
    for _, shape in values.columns:
        timestamp_styles(shape, counts)
    allowed = (SQL, ISO) if values.format == "json" else (SQL,)
    style = max(allowed, key=lambda s: (counts.get(s, 0), s == SQL))
    mixed_means = "STRING keeps each value's JSON text" if values.format == "json" else "STRING keeps the text"
    writer = TypeWriter(style=style, mixed_means=mixed_means)
    types = {name: writer.flink_type(shape, name) for name, shape in values.columns}
    columns = [Column(name, types[name]) for name, _ in values.columns]
    if values.format == "raw":
        columns = [Column("value", values.raw_type or "STRING")]
    keys = guess_keys(messages, values, types)
    if keys is not None:
        columns = [Column(name, data_type) for name, data_type in keys.columns] + columns

    options = {"connector": connector, "topic": topic, **connection}
    startup_key, startup_value = STARTUP[connector]
    options.setdefault(startup_key, startup_value)
    format_prefix = "value." if keys is not None else ""
    if keys is not None:
        options.update({k: v for k, v in keys.options.items() if k != "value.fields-include"})
    options["value.format" if keys is not None else "format"] = values.format
    format_options = dict(values.options)
    if values.format == "json" and style != SQL:
        format_options["timestamp-format.standard"] = style
    for key, value in format_options.items():
        options[f"{format_prefix}{values.format}.{key}"] = value
    if keys is not None and "value.fields-include" in keys.options:
        options["value.fields-include"] = keys.options["value.fields-include"]
    name = table_name_for(topic)
    table = TableDef(name=name, columns=columns, options=options)

    extras, remarks = _extras(connector, table, values, keys)
    tombstones = sum(1 for m in messages if m.value is None)
    summary = [_sample_line(connector, topic, len(messages), requested, position)]
    described = f"Values: {values.described}."
    described += f" Keys: {keys.described}." if keys is not None else " Keys: none."
    if tombstones:
        described += f" {tombstones} message{'s have' if tombstones > 1 else ' has'} no value (tombstones)."
    summary.append(described)
    if keys is not None and tombstones:
        summary.append("Tombstones mean a changelog: see the PRIMARY KEY line for the upsert table.")
    notes = values.notes + (keys.notes if keys else []) + writer.notes
    return Proposal(table, extras, remarks, summary, notes)


def _sample_line(connector: str, topic: str, count: int, requested: int | None, position: str) -> str:
    system = {"kafka": "Kafka", "pulsar": "Pulsar"}[connector]
    plural = "s" if count != 1 else ""
    line = f"Proposed by DESCRIBE TOPIC from {count} message{plural} of {system} topic '{topic}', read from {position}"
    if requested is not None and count < requested:
        line += f" (it held only {count} of the {requested} asked for)"
    return line + "."


def _epoch_precision(low: int, high: int) -> int | None:
    """3 when every number is epoch milliseconds of 2001-2286, 0 when they are epoch seconds of then, else None."""
    if 10**12 <= low and high < 10**13:
        return 3
    if 10**9 <= low and high < 10**10:
        return 0
    return None


def _extras(
    connector: str, table: TableDef, values: ValueGuess, keys: KeyGuess | None
) -> tuple[TableDef, dict[str, str]]:
    """What the proposal offers commented out: computed times, metadata columns, a watermark, the primary key."""
    taken = {c.name.lower() for c in table.columns}
    columns: list[Column] = []
    remarks: dict[str, str] = {}
    time_columns = [c.name for c in table.columns if (c.data_type or "").startswith(("TIMESTAMP", "TIMESTAMP_LTZ"))]
    commented_time: str | None = None
    for name, shape in values.columns:  # epoch numbers in a time-like column: a computed timestamp beside it
        if values.format != "json" or shape.kind != INT or not _TIME_NAME.search(name) or shape.low is None:
            continue
        precision = _epoch_precision(shape.low, shape.high)  # type: ignore[arg-type]
        if precision is None:
            continue
        computed = _free_name((f"{name}_ltz", f"{name}_time", f"{name}_ts"), taken)
        taken.add(computed.lower())
        columns.append(Column(computed, None, ColumnKind.COMPUTED,
                              expression=f"TO_TIMESTAMP_LTZ({to_sql(identifier(name))}, {precision})"))  # fmt: skip
        unit = "milliseconds" if precision == 3 else "seconds"
        remarks[to_sql(identifier(computed)) + " AS"] = f"{name} looks like epoch {unit}"
        commented_time = commented_time or computed
    for column_name, key, data_type in METADATA_COLUMNS[connector]:
        column_name = column_name if column_name.lower() not in taken else _free_name((f"meta_{column_name}",), taken)
        taken.add(column_name.lower())
        metadata_key = None if column_name == key else key
        columns.append(Column(column_name, data_type, ColumnKind.METADATA, metadata_key=metadata_key, virtual=True))
        commented_time = commented_time or (column_name if data_type.startswith("TIMESTAMP") else None)
    preferred = sorted(time_columns, key=lambda n: not _TIME_NAME.search(n))
    time_column = preferred[0] if preferred else commented_time
    watermark = None
    if time_column is not None:
        ident = to_sql(identifier(time_column))
        watermark = Watermark(time_column, f"{ident} - INTERVAL '5' SECOND")
        remarks["WATERMARK"] = "event time: allow 5 seconds of lateness" + (
            f"; needs {time_column} above" if time_column not in time_columns else ""
        )
    primary_key = list(keys.primary_key) if keys is not None else []
    if connector == "kafka" and "key.fields-prefix" in table.options:
        primary_key = []  # upsert-kafka takes no 'key.fields-prefix': its key columns are named as the key's fields
    if primary_key:
        upsert = UPSERT_CONNECTOR[connector]
        dropped = "without 'key.fields' and 'scan.startup.mode'"
        remarks["PRIMARY KEY"] = f"for an upsert table: 'connector' = '{upsert}', {dropped}"
    return TableDef(table.name, columns, {}, primary_key, watermark), remarks
