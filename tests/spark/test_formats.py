"""Formats on a real local Spark: values survive encode/decode, Flink's texts are read and written, bad records
are reported (not fatal) next to good ones, Debezium events become a changelog, streaming works the same, and no
plan contains a Python UDF."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shell.catalog.model import Column
from shell.errors import OptionError
from shell.formats.base import ERROR_COLUMN, OP_COLUMN, error_column
from shell.formats.registry import FORMATS
from shell.sql.types import flink_type_to_spark

JSON, CSV, RAW, DEBEZIUM = (FORMATS[n] for n in ("json", "csv", "raw", "debezium-json"))


@pytest.fixture(scope="module")
def spark(spark_runtime):
    return spark_runtime.get()


def records(spark, values: list[bytes | None]):
    """A frame (n INT, value BINARY) of raw records, n numbering them."""
    return spark.createDataFrame(list(enumerate(values)), "n INT, value BINARY")


def decoded(fmt, spark, values, fields, options=None, prefix=""):
    out = fmt.decode(records(spark, values), "value", fields, options or {}, prefix)
    return [r.asDict() for r in out.orderBy("n").collect()]


def assert_no_python(frame) -> None:
    plan = frame._jdf.queryExecution().executedPlan().toString()
    assert "EvalPython" not in plan and "PythonUDF" not in plan, plan


def round_trip(fmt, spark, data_type: str, literal, options=None):
    """Encode a value of `data_type` (a Spark SQL literal, or a Python value) and a NULL, decode them; return
    both frames."""
    fields = [Column("v", data_type)]
    if isinstance(literal, str):
        original = spark.sql(f"SELECT 0 AS n, {literal} AS v UNION ALL SELECT 1 AS n, NULL AS v")
    else:
        original = spark.createDataFrame([(0, literal[0]), (1, None)], f"n INT, v {flink_type_to_spark(data_type)}")
    encoded = original.select("n", fmt.encode(original, fields, options or {}).alias("value"))
    back = fmt.decode(encoded, "value", fields, options or {})
    return original, back


def assert_round_trip(fmt, spark, data_type, literal, options=None):
    original, back = round_trip(fmt, spark, data_type, literal, options)
    rows = back.orderBy("n").collect()
    assert [r[ERROR_COLUMN] for r in rows] == [None, None]
    assert [(r.n, r.v) for r in rows] == [(r.n, r.v) for r in original.orderBy("n").collect()]
    declared = spark.sql(f"SELECT CAST(NULL AS {flink_type_to_spark(data_type)}) AS v").schema["v"].dataType
    assert back.schema["v"].dataType.simpleString() == declared.simpleString()
    assert_no_python(back)


# ---- round trips -----------------------------------------------------------------------------------------------

SCALARS = [
    ("INT", "-2147483648"),
    ("BIGINT", "9223372036854775807"),
    ("SMALLINT", "CAST(-32768 AS SMALLINT)"),
    ("TINYINT", "CAST(127 AS TINYINT)"),
    ("BOOLEAN", "true"),
    ("DOUBLE", "CAST(-1.2345678901234567E300 AS DOUBLE)"),
    ("FLOAT", "CAST(0.1 AS FLOAT)"),
    ("DECIMAL(10, 2)", "CAST(-12345678.91 AS DECIMAL(10, 2))"),
    ("DECIMAL(38, 18)", "CAST('12345678901234567890.123456789012345678' AS DECIMAL(38, 18))"),
    ("STRING", "'a \"quoted\", comma; semicolon\\\\ back \u00e9\u20ac\U0001F600'"),
    ("STRING", "''"),
    ("BYTES", "X'00FF10FE'"),
    ("DATE", "DATE'2024-02-29'"),
    ("TIMESTAMP(3)", "TIMESTAMP'2020-12-30 12:13:14.123'"),
    ("TIMESTAMP(6)", "TIMESTAMP'2020-12-30 12:13:14.123456'"),
    ("TIMESTAMP_LTZ(3)", "TIMESTAMP'2020-12-30 12:13:14.120'"),
]
NESTED = [
    ("ROW<a INT, `b c` STRING>", "named_struct('a', 1, 'b c', 'x')"),
    ("ARRAY<INT>", "array(1, NULL, 3)"),
    ("ARRAY<ROW<d DECIMAL(20, 3), t TIMESTAMP(3)>>",
     "array(named_struct('d', CAST('12345678901234567.125' AS DECIMAL(20, 3)), 't', TIMESTAMP'2020-01-01 00:00:00.5'))"),
    ("MAP<STRING, BIGINT>", "map('a', 1L, 'b', NULL)"),
    ("MAP<INT, ARRAY<DATE>>", "map(1, array(DATE'2020-01-01'))"),
    ("MAP<STRING, DECIMAL(38, 10)>", "map('k', CAST('1234567890123456789.0123456789' AS DECIMAL(38, 10)))"),
    ("ROW<inner ROW<ts TIMESTAMP_LTZ(3), b BYTES>>",
     "named_struct('inner', named_struct('ts', TIMESTAMP'2021-06-01 01:02:03.004', 'b', X'CAFE'))"),
]


@pytest.mark.parametrize("data_type,literal", SCALARS + NESTED, ids=lambda v: v if isinstance(v, str) else None)
@pytest.mark.parametrize("standard", ["SQL", "ISO-8601"])
def test_json_round_trip(spark, data_type, literal, standard):
    assert_round_trip(JSON, spark, data_type, literal, {"timestamp-format.standard": standard})


@pytest.mark.parametrize("data_type,literal", SCALARS + [("ARRAY<INT>", "array(1, 2, 3)")])
def test_csv_round_trip(spark, data_type, literal):
    assert_round_trip(CSV, spark, data_type, literal)


@pytest.mark.parametrize(
    "data_type,literal,options",
    [
        ("STRING", "'h\u00e9llo \u20ac'", {}),
        ("STRING", "'plain ascii'", {"charset": "US-ASCII"}),
        ("STRING", "'caf\u00e9'", {"charset": "ISO-8859-1"}),
        ("BYTES", "X'00FF10FE'", {}),
        ("INT", "-2", {}),
        ("INT", "65536", {"endianness": "little-endian"}),
        ("BIGINT", "-9223372036854775808", {}),
        ("SMALLINT", "CAST(-300 AS SMALLINT)", {"endianness": "little-endian"}),
        ("TINYINT", "CAST(-1 AS TINYINT)", {}),
        ("BOOLEAN", "true", {}),
    ],
)
def test_raw_round_trip(spark, data_type, literal, options):
    assert_round_trip(RAW, spark, data_type, literal, options)


def test_raw_numbers_are_big_endian_by_default(spark):
    rows = decoded(RAW, spark, [b"\x00\x00\x01\x00", b"\xff\xff\xff\xfe", b"\x01", None], [Column("v", "INT")])
    assert [(r["v"], r[ERROR_COLUMN]) for r in rows] == [
        (256, None), (-2, None), (None, "expected 4 bytes for INT"), (None, None)
    ]


def test_raw_string_keeps_any_bytes(spark):
    rows = decoded(RAW, spark, ["h\u00e9".encode(), b"\xffab", b""], [Column("s", "STRING")])
    assert [(r["s"], r[ERROR_COLUMN]) for r in rows] == [("h\u00e9", None), ("\ufffdab", None), ("", None)]


# ---- Flink's timestamp texts -----------------------------------------------------------------------------------

TS_FIELDS = [Column("ts", "TIMESTAMP(3)"), Column("lt", "TIMESTAMP_LTZ(3)")]


@pytest.mark.parametrize(
    "standard,text,expected",
    [
        ("SQL", '{"ts": "2020-12-30 12:13:14.123", "lt": "2020-12-30 12:13:14.123Z"}', "2020-12-30 12:13:14.123"),
        ("SQL", '{"ts": "2020-12-30 12:13:14.1", "lt": "2020-12-30 12:13:14.1Z"}', "2020-12-30 12:13:14.100"),
        ("SQL", '{"ts": "2020-12-30 12:13:14", "lt": "2020-12-30 12:13:14Z"}', "2020-12-30 12:13:14.000"),
        ("ISO-8601", '{"ts": "2020-12-30T12:13:14.123", "lt": "2020-12-30T12:13:14.123Z"}', "2020-12-30 12:13:14.123"),
    ],
)
def test_flink_timestamp_texts_are_read(spark, standard, text, expected):
    frame = JSON.decode(records(spark, [text.encode()]), "value", TS_FIELDS, {"timestamp-format.standard": standard})
    shown = frame.selectExpr(
        "date_format(ts, 'yyyy-MM-dd HH:mm:ss.SSS') AS ts",
        "date_format(to_utc_timestamp(lt, current_timezone()), 'yyyy-MM-dd HH:mm:ss.SSS') AS lt",
        ERROR_COLUMN,
    ).collect()
    assert [tuple(r) for r in shown] == [(expected, expected, None)]


@pytest.mark.parametrize(
    "standard,expected",
    [
        ("SQL", '{"ts":"2020-12-30 12:13:14.120","lt":"2020-12-30 12:13:14.120Z"}'),
        ("ISO-8601", '{"ts":"2020-12-30T12:13:14.120","lt":"2020-12-30T12:13:14.120Z"}'),
    ],
)
def test_flink_timestamp_texts_are_written(spark, standard, expected):
    frame = spark.sql(
        "SELECT TIMESTAMP'2020-12-30 12:13:14.12' AS ts, "
        "from_utc_timestamp(TIMESTAMP'2020-12-30 12:13:14.12', current_timezone()) AS lt"
    )
    text = frame.select(JSON.encode(frame, TS_FIELDS, {"timestamp-format.standard": standard}).cast("string"))
    assert text.first()[0] == expected


TIMESTAMP_EDGE_TEXTS = [
    "0000-01-01 00:00:00", "9999-12-31 23:59:59.999999999", "2024-02-29 12:00:00", "2023-02-29 12:00:00",
    "2023-04-31 00:00:00", "2023-13-01 00:00:00", "2023-01-00 00:00:00", "2023-01-01 24:00:00", "2023-01-01 23:59:60",
    "1582-10-10 01:02:03.4", "1883-11-18 12:00:00", "2023-03-12 02:30:00", "2023-11-05 01:30:00.25",
    "2023-01-01 01:02:03.", "2023-01-01 01:02:03\n", " 2023-01-01 01:02:03", "2023-01-01 01:02:03Z",
    "2023-01-01 01:02:0Z", "2023-1-01 01:02:03", "2023-01-01", "2023-01-01 01:02:03.1234567891", "+2023-01-01 01:02:03",
] + [f"2023-01-01 01:02:03.{'1' * digits}" for digits in range(1, 10)]  # fmt: skip


@pytest.mark.parametrize("standard", ["SQL", "ISO-8601"])
@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
def test_timestamp_texts_read_by_cast_get_the_patterns_value(spark, standard, zone):
    """A TIMESTAMP text of the usual shape is read by a cast (cheaper) and any other by the pattern: over texts at
    the edges of both, in a zone with daylight saving, the value is always the pattern's."""
    from pyspark.sql import functions as F

    from shell.formats.fields import field_type, from_text, style_for

    style, t = style_for(standard), field_type("TIMESTAMP(6)")
    texts = [text.replace(" ", "T", 1) if standard == "ISO-8601" else text for text in TIMESTAMP_EDGE_TEXTS]
    frame = spark.createDataFrame([(text,) for text in texts], "text STRING")
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        out = frame.select(
            "text",
            F.unix_micros(from_text(F.col("text"), t, style)).alias("read"),
            F.unix_micros(F.try_to_timestamp("text", F.lit(style.parse_pattern(t)))).alias("pattern"),
            F.col("text").rlike(style.plain_shape()).alias("by_cast"),
        ).collect()
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    assert [(r.text, r.read) for r in out] == [(r.text, r.pattern) for r in out]
    assert sum(r.by_cast for r in out) >= 20 and sum(r.by_cast and r.read is not None for r in out) >= 12
    assert not any(r.by_cast for r in out if "\n" in r.text or r.text.endswith("Z") or r.text.endswith("."))


def test_the_wrong_standard_is_an_error(spark):
    rows = decoded(JSON, spark, [b'{"ts": "2020-12-30T12:13:14.123"}'], TS_FIELDS)
    assert rows[0][ERROR_COLUMN] == "field 'ts': expected TIMESTAMP(3) as 'yyyy-MM-dd HH:mm:ss.SSS'"


# ---- bad records next to good ones -----------------------------------------------------------------------------

FIELDS = [Column("id", "INT"), Column("name", "STRING"), Column("tags", "ARRAY<INT>"), Column("pos", "ROW<x DOUBLE>")]
GOOD = b'{"id": 1, "name": "a", "tags": [1, 2], "pos": {"x": 1.5}}'
BIG_NAME = "x" * 1_000_000
BAD_JSON = [
    (b'{"id": 1, "name": "a"', "malformed JSON"),
    (b'{"id": "abc"}', "field 'id': expected INT"),
    (b'{"id": 1.5}', "field 'id': expected INT"),
    (b'{"id": 3000000000}', "field 'id': expected INT"),
    (b'{"tags": [1, "two"]}', "field 'tags[]': expected INT"),
    (b'{"tags": 5}', "field 'tags': expected ARRAY<INT>"),
    (b'{"pos": "north"}', "field 'pos': expected ROW<x DOUBLE>"),
    (b'{"pos": {"x": "far"}}', "field 'pos.x': expected DOUBLE"),
    (bytes(range(256)), "malformed JSON"),
    (b"\xff\xfe\x00{", "malformed JSON"),
    (b"", "empty record"),
    (b"[1, 2]", "malformed JSON"),
    (b"null", "malformed JSON"),
    (b'{"id": 1, "name": "' + BIG_NAME.encode(), "malformed JSON"),
    (b'{"id": NaN}', "malformed JSON"),  # not JSON, though Spark's parser could read it
    (b'{"id": 1, "name": "a\x01"}', "malformed JSON"),  # an unescaped control character, as Flink's Jackson says
    (b'{"id": 1} {"id": 2}', None),  # what follows the first object is not read (Flink's Jackson reads one value)
]


def test_bad_json_records_are_reported_and_good_ones_decode(spark):
    values = [GOOD] + [bad for bad, _ in BAD_JSON] + [GOOD, None, b'{"name": "' + BIG_NAME.encode() + b'"}']
    rows = decoded(JSON, spark, values, FIELDS)
    assert [r[ERROR_COLUMN] for r in rows[1 : len(BAD_JSON) + 1]] == [reason for _, reason in BAD_JSON]
    for row, (_, reason) in zip(rows[1 : len(BAD_JSON) + 1], BAD_JSON):
        assert reason is None or all(row[f.name] is None for f in FIELDS), row
    good = {"id": 1, "name": "a", "tags": [1, 2], "x": 1.5, ERROR_COLUMN: None}
    for row in (rows[0], rows[len(BAD_JSON) + 1]):
        assert {**{k: row[k] for k in ("id", "name", "tags", ERROR_COLUMN)}, "x": row["pos"]["x"]} == good
    tombstone, big = rows[-2], rows[-1]
    assert all(tombstone[k] is None for k in ("id", "name", "tags", "pos", ERROR_COLUMN))
    assert big["name"] == BIG_NAME and big[ERROR_COLUMN] is None


@pytest.mark.parametrize(
    "data_type,json_value,expected",
    [
        ("INT", '"42"', 42),  # Flink reads numbers given as strings too
        ("INT", "1.5", "expected INT"),
        ("BIGINT", "12345678901234567890", "expected BIGINT"),
        ("BOOLEAN", '"TRUE"', True),
        ("BOOLEAN", "1", "expected BOOLEAN"),
        ("BOOLEAN", '"yes"', "expected BOOLEAN"),
        ("DOUBLE", '"1e3"', 1000.0),
        ("DOUBLE", "1e400", float("inf")),  # beyond DOUBLE's range: Infinity, as Flink reads it
        ("DOUBLE", "-1e400", float("-inf")),
        ("DECIMAL(5, 2)", "1.005", Decimal("1.01")),
        ("DECIMAL(5, 2)", '"2.5"', Decimal("2.50")),
        ("DECIMAL(5, 2)", "12345.6", "expected DECIMAL(5, 2)"),
        ("DATE", '"2020-02-30"', "expected DATE as 'yyyy-MM-dd'"),
        ("BYTES", '"not base64!"', "expected BYTES as base64"),
        ("TIME", '"12:13:14"', "12:13:14"),
        ("STRING", '{"a": [1, true]}', '{"a":[1,true]}'),
        ("ARRAY<STRING>", '["a", 1, null]', ["a", "1", None]),
        ("MAP<INT, STRING>", '{"1": "a", "x": "b"}', "field 'v' key: expected INT"),
    ],
)
def test_json_scalar_conversions(spark, data_type, json_value, expected):
    row = decoded(JSON, spark, [f'{{"v": {json_value}}}'.encode()], [Column("v", data_type)])[0]
    if isinstance(expected, str) and expected.startswith(("expected", "field")):
        assert row["v"] is None and expected in row[ERROR_COLUMN]
    else:
        assert (row["v"], row[ERROR_COLUMN]) == (expected, None)


@pytest.mark.parametrize(
    "fmt,good,bad,parses",
    [
        (  # one in the typed first parse and one in the text read of a record that parse refused
            "json",
            b'{"n": 1, "ts": "2026-01-01 00:00:00.5"}',
            b'{"n": 1, "ts": "later"}',
            2,
        ),
        ("csv", b"1,2026-01-01 00:00:00.5", b"1,later", 1),
        (  # one for the row before and one for the row after
            "debezium-json",
            b'{"before": null, "after": {"n": 1, "ts": "2026-01-01 00:00:00.5"}, "op": "c"}',
            b'{"before": null, "after": {"n": 1, "ts": "later"}, "op": "c"}',
            2,
        ),
    ],
)
def test_each_field_is_converted_once(spark, fmt, good, bad, parses):
    """A field's value and its check share one conversion: the check reads the value back. (So the plan holds one
    conversion per way of reading a record.)"""
    fields = [Column("n", "INT"), Column("ts", "TIMESTAMP(3)")]
    out = FORMATS[fmt].decode(records(spark, [good, bad]), "value", fields, {}).where(f"{ERROR_COLUMN} IS NULL")
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert plan.count("gettimestamp(") == parses, plan
    assert [r["ts"].isoformat() for r in out.collect()] == ["2026-01-01T00:00:00.500000"]


@pytest.mark.parametrize("width", [2, 9])
def test_a_nested_row_is_parsed_once_however_many_fields_it_has(spark, width):
    """A ROW field's object is parsed in a projection of its own (json.stage_nested_rows): inline, Spark would
    parse it once per field it has and again for each field's check. A good record is read by the typed first
    parse, ROWs included; the values and errors stay the same."""
    names = [f"f{i}" for i in range(width)]
    fields = [Column("id", "INT"), Column("inner", f"ROW<{', '.join(f'{n} BIGINT' for n in names)}, deep ROW<x INT>>")]
    inner = ", ".join(f'"{n}": {i}' for i, n in enumerate(names))
    good = f'{{"id": 1, "inner": {{{inner}, "deep": {{"x": 7}}}}}}'.encode()
    wrong = inner.replace('"f1": 1', '"f1": "one"')
    bad = f'{{"id": 2, "inner": {{{wrong}, "deep": {{"x": "no"}}}}}}'.encode()
    deep_bad = f'{{"id": 3, "inner": {{{inner}, "deep": {{"x": "no"}}}}}}'.encode()
    out = FORMATS["json"].decode(records(spark, [good, bad, deep_bad, b'{"id": 4, "inner": 5}']), "value", fields, {})
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    # the typed first parse, then the text of a record it refused, its two ROWs' and their keys: as many parses
    # for 2 fields as for 9 (inline, 9 fields took 2 parses each)
    assert plan.count("from_json(") == 6 and plan.count("jsonObjectKeys") == 2, plan
    rows = [r.asDict(recursive=True) for r in out.orderBy("n").collect()]
    assert rows[0]["inner"] == {**{n: i for i, n in enumerate(names)}, "deep": {"x": 7}} and rows[0][ERROR_COLUMN] is None
    assert rows[1][ERROR_COLUMN] == "field 'inner.f1': expected BIGINT"
    assert rows[2][ERROR_COLUMN] == "field 'inner.deep.x': expected INT"
    assert rows[3][ERROR_COLUMN] == f"field 'inner': expected {fields[1].data_type}"


# Values where Spark's typed parse and the conversion of a field's text could part ways, for every scalar type.
AWKWARD_VALUES = [
    "42", '"42"', "4.2", '"4.2"', "1e3", "-0", "1.0", '""', '" 42"', "true", '"true"', '"TRUE"', "false", "NaN",
    '"NaN"', '"Infinity"', "1e400", "-1e400", "null", '"x"', '{"a": 1}', "[1]", "0042", "1.5e2", "2147483648",
    "3000000000", "9223372036854775808", "12345678901234567890.5", "200", "255", "-129", "32768", "3.5e38",
    "16777217", "1e-50", '"2026-01-01 00:00:00.5"', '"2026-01-01T00:00:00.5Z"', '"2026-01-01"', "1767225600",
    '"12:13:14"', '"AAEC"', '"not base64!"',
]
SCALAR_TYPES = [
    "INT", "BIGINT", "TINYINT", "SMALLINT", "DOUBLE", "FLOAT", "BOOLEAN", "STRING", "DECIMAL(10, 2)",
    "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", "DATE", "TIME", "BYTES",
]


def test_typed_first_parse_reads_what_the_text_read_does(spark):
    """The typed first parse (json.decode_object) is only a faster way to the same result: over awkward values of
    every scalar type, alone and beside other fields, whole records and broken ones, it gives the values and errors
    of reading every field as text."""
    fields = [Column(f"c{i}", t) for i, t in enumerate(SCALAR_TYPES)]
    values = [f'{{"c{i}": {v}}}'.encode() for i in range(len(SCALAR_TYPES)) for v in AWKWARD_VALUES]
    values += [  # several fields at once: the first bad one is named
        b'{"c0": 1, "c4": 2.5, "c6": true, "c7": "s", "c8": 1.25, "c9": "2026-01-01 00:00:00.5"}',
        b'{"c0": "1", "c4": 2.5, "c9": "later", "c10": 3}',
        b'{"c0": 1, "c9": "later", "c1": "x"}',
        b'{"c0": 1, "c1": 2, "c0": "3"}',
        b'{"c0": 1', b"", b"[]", b"null", b'{"c0": 1} tail', b'{"C0": 1}', None,
    ]
    assert_both_reads_agree(spark, values, fields)


def test_typed_first_parse_reads_what_the_text_read_does_inside_rows(spark):
    """The same for fields of a ROW and of a ROW in it, and for a ROW that is not an object, null or missing."""
    inner = ", ".join(f"c{i} {t}" for i, t in enumerate(SCALAR_TYPES))
    fields = [Column("id", "INT"), Column("r", f"ROW<{inner}, deep ROW<{inner}>>")]
    # Not 1e400: a number beyond a DOUBLE's range in a ROW's text field (STRING, TIME, BYTES) reads as Infinity
    # through the text read (Spark writes the ROW's text again) and as "Infinity", quoted, through the typed one,
    # as it does in a field that is not in a ROW
    awkward = [v for v in AWKWARD_VALUES if v not in ("1e400", "-1e400")]
    values = [f'{{"id": 1, "r": {{"c{i}": {v}, "deep": {{"c{i}": {v}}}}}}}'.encode()
              for i in range(len(SCALAR_TYPES)) for v in awkward]
    values += [f'{{"id": 2, "r": {{"deep": {{"c{i}": {v}}}}}}}'.encode() for i in (0, 9) for v in awkward]
    values += [b'{"id": 3, "r": 5}', b'{"id": 3, "r": null}', b'{"id": 3}', b'{"id": 3, "r": {"deep": []}}',
               b'{"id": 3, "r": {"deep": null, "c0": 1}}', b'{"id": "x", "r": {"c0": "y"}}']
    assert_both_reads_agree(spark, values, fields)


def assert_both_reads_agree(spark, values: list[bytes | None], fields: list[Column]) -> None:
    """The typed first parse and the text read give every record the same values and error."""
    from shell.formats import json as json_format

    frame = records(spark, values)
    reader = JSON.reader({})
    out = {}
    for typed_first in (True, False):
        staged, row, error = json_format.decode_object(frame, "value", fields, reader, "", typed_first)
        result = staged.select("n", row.alias("row"), error.alias("error"))
        out[typed_first] = [(r.n, repr(r.row), r.error) for r in result.orderBy("n").collect()]  # repr: NaN
        plan = result._jdf.queryExecution().optimizedPlan().toString()
        assert ("IntegerType" in plan) == typed_first  # the typed parse is there only when asked for
    differ = [values[a[0]] for a, b in zip(out[True], out[False]) if a != b]
    assert not differ, differ
    assert sum(error is None for _, _, error in out[True]) > len(values) // 4  # not only errors compared


def test_typed_parse_and_the_text_read_of_what_it_refused_share_one_projection(spark):
    """Both parses of a record sit in one projection (Spark then parses a good record once for both), not in two,
    each copying every record; the text read still names a bad record's fault."""
    fields = [Column("n", "INT"), Column("ts", "TIMESTAMP(3)")]
    out = JSON.decode(records(spark, [b'{"n": 1, "ts": "2026-01-01 00:00:00"}', b'{"n": "x"}']), "value", fields, {})
    plan = out._jdf.queryExecution().executedPlan().toString()
    parsing = [line for line in plan.splitlines() if "from_json(" in line]
    assert len(parsing) == 1, plan
    assert "StructField(n,IntegerType" in parsing[0] and "StructField(n,StringType" in parsing[0], plan
    assert [r[ERROR_COLUMN] for r in out.orderBy("n").collect()] == [None, "field 'n': expected INT"]


@pytest.mark.parametrize(
    "text,fail,expected",
    [
        ('{"id": 1}', False, (1, None, None)),
        ('{"id": 1}', True, (None, None, "missing field 'name'")),
        ('{"id": 1, "name": null}', True, (1, None, None)),
        ('{"name": "n"}', True, (None, None, "missing field 'id'")),
        ('{"id": "42", "name": 7}', False, (42, "7", None)),
    ],
)
def test_missing_fields(spark, text, fail, expected):
    options = {"fail-on-missing-field": str(fail).lower()}
    rows = decoded(JSON, spark, [text.encode()], FIELDS[:2], options)
    assert (rows[0]["id"], rows[0]["name"], rows[0][ERROR_COLUMN]) == expected


def test_nested_missing_field(spark):
    rows = decoded(JSON, spark, [b'{"id": 1, "name": "a", "tags": [], "pos": {}}'], FIELDS, {"fail-on-missing-field": "true"})
    assert rows[0][ERROR_COLUMN] == "missing field 'pos.x'"


def test_json_keys_match_column_names_exactly(spark):
    rows = decoded(JSON, spark, [b'{"accountId": 7, "accountid": 8}'], [Column("accountId", "BIGINT")])
    assert rows[0]["accountId"] == 7


def test_other_columns_pass_through_and_key_errors_are_named_apart(spark):
    frame = spark.createDataFrame([(1, b"k1", b'{"id": 1}'), (2, b"k2", b"oops")], "n INT, key BINARY, value BINARY")
    frame = RAW.decode(frame, "key", [Column("k", "STRING")], {}, prefix="key")
    frame = JSON.decode(frame, "value", [Column("id", "INT")], {})
    assert frame.columns == ["n", "k", "id", error_column("key"), ERROR_COLUMN]
    assert error_column("key") == "__key_error"
    assert [tuple(r) for r in frame.orderBy("n").collect()] == [(1, "k1", 1, None, None), (2, "k2", None, None, "malformed JSON")]


def test_encode_writes_nulls_unless_told_to_leave_them_out(spark):
    frame = spark.sql("SELECT 1 AS id, CAST(NULL AS STRING) AS name")
    fields = FIELDS[:2]
    written = [
        frame.select(JSON.encode(frame, fields, options).cast("string")).first()[0]
        for options in ({}, {"encode.ignore-null-fields": "true"})
    ]
    assert written == ['{"id":1,"name":null}', '{"id":1}']


# ---- csv -------------------------------------------------------------------------------------------------------

CSV_FIELDS = [Column("id", "INT"), Column("name", "STRING"), Column("ts", "TIMESTAMP(3)")]


@pytest.mark.parametrize(
    "line,options,expected",
    [
        ("1,a,2020-01-01 00:00:00.5", {}, (1, "a", None)),
        ('2,"x, ""y""",', {}, (2, 'x, "y"', None)),
        ('3,"",', {}, (3, "", None)),
        ("4,,", {}, (4, None, None)),
        ("5|b|", {"field-delimiter": "|"}, (5, "b", None)),
        ("6\tb\t", {"field-delimiter": "\\t"}, (6, "b", None)),
        ("7,N/A,N/A", {"null-literal": "N/A"}, (7, None, None)),
        ("abc,a,", {}, (None, None, "field 'id': expected INT")),
        ("1,a,yesterday", {}, (None, None, "field 'ts': expected TIMESTAMP(3) as 'yyyy-MM-dd HH:mm:ss.SSS'")),
        ("1,a", {}, (None, None, "malformed CSV: expected 3 fields")),
        ("1,a,,extra", {}, (None, None, "malformed CSV: expected 3 fields")),
        ("", {}, (None, None, "malformed CSV: expected 3 fields")),
        ("# note", {"allow-comments": "true"}, (None, None, "comment line")),
    ],
)
def test_csv_decode(spark, line, options, expected):
    rows = decoded(CSV, spark, [line.encode()], CSV_FIELDS, options)
    assert (rows[0]["id"], rows[0]["name"], rows[0][ERROR_COLUMN]) == expected


@pytest.mark.parametrize(
    "options,expected",
    [
        ({}, '1,"a,b",,2020-01-01 00:00:00.000'),
        ({"field-delimiter": ";", "null-literal": "NULL"}, "1;a,b;NULL;2020-01-01 00:00:00.000"),
        ({"disable-quote-character": "true", "field-delimiter": "|"}, "1|a,b||2020-01-01 00:00:00.000"),
    ],
)
def test_csv_encode(spark, options, expected):
    fields = [Column("id", "INT"), Column("name", "STRING"), Column("note", "STRING"), Column("ts", "TIMESTAMP(3)")]
    frame = spark.sql("SELECT 1 AS id, 'a,b' AS name, CAST(NULL AS STRING) AS note, TIMESTAMP'2020-01-01' AS ts")
    assert frame.select(CSV.encode(frame, fields, options).cast("string")).first()[0] == expected


@pytest.mark.parametrize("options", [{}, {"escape-character": "\\"}, {"quote-character": "'"}, {"field-delimiter": ";"}])
def test_csv_round_trip_of_awkward_text(spark, options):
    text = 'say "hi", it\'s a\\b; c\\"d\\\\ \r\n end'
    assert_round_trip(CSV, spark, "STRING", (text,), options)


# ---- debezium-json ---------------------------------------------------------------------------------------------

CDC_FIELDS = [Column("id", "INT"), Column("name", "STRING")]


@pytest.mark.parametrize(
    "event,expected",
    [
        ('{"before": null, "after": {"id": 1, "name": "a"}, "op": "c"}', [("+I", 1, "a", None)]),
        ('{"before": null, "after": {"id": 1, "name": "a"}, "op": "r", "ts_ms": 1}', [("+I", 1, "a", None)]),
        (
            '{"before": {"id": 1, "name": "a"}, "after": {"id": 1, "name": "b"}, "op": "u"}',
            [("-U", 1, "a", None), ("+U", 1, "b", None)],
        ),
        ('{"before": {"id": 1, "name": "b"}, "after": null, "op": "d"}', [("-D", 1, "b", None)]),
        ('{"before": null, "after": {"id": 1}, "op": "x"}', [(None, None, None, "unknown op 'x'")]),
        ('{"before": null, "after": {"id": 1}}', [(None, None, None, "missing field 'op'")]),
        ('{"before": null, "after": null, "op": "c"}', [(None, None, None, "field 'after' is missing or null")]),
        ('{"after": {"id": 1}, "op": "d"}', [(None, None, None, "field 'before' is missing or null")]),
        ('{"before": null, "after": {"id": "one"}, "op": "c"}', [(None, None, None, "field 'after.id': expected INT")]),
        ("not json", [(None, None, None, "malformed JSON")]),
        ("[1]", [(None, None, None, "malformed JSON")]),
        ("null", [(None, None, None, "malformed JSON")]),
        ('{"before": null, "after": [1], "op": "c"}', [(None, None, None, "field 'after': expected ROW")]),
        ('{"before": null, "after": 5, "op": "c"}', [(None, None, None, "field 'after': expected ROW")]),
        (None, []),
        ("", []),
    ],
)
def test_debezium_decode(spark, event, expected):
    value = event.encode() if event is not None else None
    frame = DEBEZIUM.decode(records(spark, [value]), "value", CDC_FIELDS, {})
    rows = [(r[OP_COLUMN], r["id"], r["name"], r[ERROR_COLUMN]) for r in frame.collect()]
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected):
        assert row[:3] == want[:3]
        assert row[3] == want[3] or (want[3] is not None and row[3].startswith(want[3]))


def test_debezium_parses_each_object_once(spark):
    """The envelope, the row before and the row after: one JSON parse each, and no listing of their keys (a
    malformed object is told by from_json's corrupt-record column)."""
    event = b'{"before": null, "after": {"id": 1, "name": "a"}, "op": "c"}'
    frame = DEBEZIUM.decode(records(spark, [event]), "value", CDC_FIELDS, {})
    plan = frame._jdf.queryExecution().optimizedPlan().toString()
    assert plan.count("from_json(") == 3 and "jsonObjectKeys" not in plan, plan
    assert [(r[OP_COLUMN], r.id, r.name) for r in frame.collect()] == [("+I", 1, "a")]


def test_debezium_update_rows_stay_in_order(spark):
    events = [
        f'{{"before": {{"id": {i}, "name": "old"}}, "after": {{"id": {i}, "name": "new"}}, "op": "u"}}'.encode()
        for i in range(200)
    ]
    frame = DEBEZIUM.decode(records(spark, events).repartition(3), "value", CDC_FIELDS, {})
    assert_no_python(frame)
    ops = [(r.id, r[OP_COLUMN]) for r in frame.collect()]
    assert len(ops) == 400
    for before, after in zip(ops[::2], ops[1::2]):
        assert before[0] == after[0] and (before[1], after[1]) == ("-U", "+U")


def test_debezium_schema_include(spark):
    event = b'{"schema": {"type": "struct"}, "payload": {"before": null, "after": {"id": 5, "name": "e"}, "op": "c"}}'
    frame = DEBEZIUM.decode(records(spark, [event, b'{"schema": {}}']), "value", CDC_FIELDS, {"schema-include": "true"})
    rows = [(r[OP_COLUMN], r.id, r[ERROR_COLUMN]) for r in frame.orderBy("n").collect()]
    assert rows == [("+I", 5, None), (None, None, "missing field 'payload'")]


@pytest.mark.parametrize(
    "op,expected",
    [
        ("+I", '{"before":null,"after":{"id":1,"name":"a"},"op":"c"}'),
        ("+U", '{"before":null,"after":{"id":1,"name":"a"},"op":"c"}'),
        ("-U", '{"before":{"id":1,"name":"a"},"after":null,"op":"d"}'),
        ("-D", '{"before":{"id":1,"name":"a"},"after":null,"op":"d"}'),
    ],
)
def test_debezium_encode_like_flink(spark, op, expected):
    frame = spark.sql(f"SELECT 1 AS id, 'a' AS name, '{op}' AS {OP_COLUMN}")
    assert frame.select(DEBEZIUM.encode(frame, CDC_FIELDS, {}).cast("string")).first()[0] == expected


def test_debezium_refuses_to_write_with_schema(spark):
    frame = spark.sql("SELECT 1 AS id, 'a' AS name")
    with pytest.raises(OptionError, match="schema-include"):
        DEBEZIUM.encode(frame, CDC_FIELDS, {"schema-include": "true"})


# ---- streaming -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fmt,fields,lines,expected",
    [
        (JSON, FIELDS[:2], ['{"id": 1, "name": "a"}', '{"id": "x"}'], [(1, "a", None, None), (None, None, "field 'id': expected INT", None)]),
        (CSV, FIELDS[:2], ["1,a", "x,b"], [(1, "a", None, None), (None, None, "field 'id': expected INT", None)]),
        (
            DEBEZIUM,
            FIELDS[:2],
            ['{"before": {"id": 1, "name": "a"}, "after": {"id": 1, "name": "b"}, "op": "u"}'],
            [(1, "a", None, "-U"), (1, "b", None, "+U")],
        ),
    ],
    ids=["json", "csv", "debezium-json"],
)
def test_streaming_frames_decode_the_same(spark, tmp_path, fmt, fields, lines, expected):
    source = tmp_path / "in"
    source.mkdir()
    (source / "part.txt").write_text("\n".join(lines) + "\n")
    stream = spark.readStream.format("text").load(str(source)).selectExpr("CAST(value AS BINARY) AS value")
    frame = fmt.decode(stream, "value", fields, {})
    name = f"formats_{fmt.name.replace('-', '_')}"
    query = (
        frame.writeStream.format("memory").queryName(name).trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "ckpt")).start()
    )
    query.awaitTermination(120)
    result = spark.table(name).collect()
    op = (lambda r: r[OP_COLUMN]) if fmt.produces_changelog else (lambda r: None)
    assert sorted([(r.id, r.name, r[ERROR_COLUMN], op(r)) for r in result], key=repr) == sorted(expected, key=repr)
