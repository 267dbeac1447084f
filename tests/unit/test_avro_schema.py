"""The Avro schema of a table's columns (Flink's derivation), the columns of an Avro schema, and a given schema
checked against the columns: plain data, no Spark."""

from __future__ import annotations

import json

import pytest

from shell.catalog.model import Column
from shell.errors import OptionError
from shell.formats.avro import AvroFormat
from shell.formats.avro_schema import AvroSchemaError, check_matches, columns_of, flink_type, table_schema
from shell.formats.registry import format_options

pytestmark = pytest.mark.unit


def schema_of(*columns: tuple[str, str], legacy: bool = True) -> dict:
    return table_schema([Column(n, t) for n, t in columns], legacy)


def field_types(schema: dict) -> dict:
    return {f["name"]: f["type"] for f in schema["fields"]}


def test_the_record_is_named_as_flink_names_it_and_nullable_columns_are_null_unions():
    schema = schema_of(("id", "BIGINT"), ("name", "STRING"))
    assert (schema["type"], schema["namespace"], schema["name"]) == ("record", "org.apache.flink.avro.generated", "record")
    assert schema["fields"] == [
        {"name": "id", "type": ["null", "long"], "default": None},
        {"name": "name", "type": ["null", "string"], "default": None},
    ]


def test_a_not_null_column_is_its_type_alone():
    schema = table_schema([Column("id", "INT", nullable=False)])
    assert schema["fields"] == [{"name": "id", "type": "int"}]


@pytest.mark.parametrize(
    ("flink", "avro"),
    [
        ("CHAR(3)", "string"), ("VARCHAR(10)", "string"), ("STRING", "string"), ("BOOLEAN", "boolean"),
        ("BYTES", "bytes"), ("VARBINARY(4)", "bytes"), ("TINYINT", "int"), ("SMALLINT", "int"), ("INT", "int"),
        ("BIGINT", "long"), ("FLOAT", "float"), ("DOUBLE", "double"),
        ("DECIMAL(10, 2)", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}),
        ("DATE", {"type": "int", "logicalType": "date"}),
        ("TIMESTAMP(3)", {"type": "long", "logicalType": "timestamp-millis"}),
        ("TIMESTAMP(6)", {"type": "long", "logicalType": "timestamp-micros"}),
        ("TIMESTAMP_LTZ(3)", {"type": "long", "logicalType": "timestamp-millis"}),
        ("ARRAY<INT>", {"type": "array", "items": ["null", "int"]}),
        ("MAP<STRING, DOUBLE>", {"type": "map", "values": ["null", "double"]}),
    ],
)  # fmt: skip
def test_each_flink_type_has_flinks_avro_type(flink, avro):
    assert field_types(schema_of(("c", flink)))["c"] == ["null", avro]


def test_without_the_legacy_mapping_a_timestamp_is_a_local_timestamp():
    types = field_types(schema_of(("ts", "TIMESTAMP(3)"), ("lt", "TIMESTAMP_LTZ(6)"), legacy=False))
    assert types["ts"] == ["null", {"type": "long", "logicalType": "local-timestamp-millis"}]
    assert types["lt"] == ["null", {"type": "long", "logicalType": "timestamp-micros"}]


def test_nested_records_are_named_after_their_parents():
    types = field_types(schema_of(("p", "ROW<x DOUBLE, q ROW<z INT>>"), ("pts", "ARRAY<ROW<a INT>>")))
    point = types["p"][1]
    assert point["name"] == "org.apache.flink.avro.generated.record_p"
    assert point["fields"][1]["type"][1]["name"] == "org.apache.flink.avro.generated.record_p_q"
    assert types["pts"][1]["items"][1]["name"] == "org.apache.flink.avro.generated.record_pts"


@pytest.mark.parametrize(
    ("flink", "says"),
    [("TIME", "no Avro counterpart"), ("TIMESTAMP(9)", "6 at most"), ("MAP<INT, STRING>", "keys are strings")],
)
def test_types_avro_cannot_hold_are_refused_when_the_table_is_created(flink, says):
    options = {"connector": "kafka", "format": "avro"}
    fmt, fmt_options = format_options(options, "value")
    with pytest.raises(OptionError, match=says):
        fmt.check([Column("c", flink)], fmt_options)


def test_a_column_name_avro_cannot_hold_is_refused():
    with pytest.raises(AvroSchemaError, match="not a valid Avro field name"):
        schema_of(("my col", "INT"))


@pytest.mark.parametrize(
    ("avro", "flink"),
    [
        ("string", ("STRING", False)), ("boolean", ("BOOLEAN", False)), ("bytes", ("BYTES", False)),
        ("int", ("INT", False)), ("long", ("BIGINT", False)), ("float", ("FLOAT", False)), ("double", ("DOUBLE", False)),
        (["null", "string"], ("STRING", True)), (["string", "null"], ("STRING", True)),
        ({"type": "int", "logicalType": "date"}, ("DATE", False)),
        ({"type": "long", "logicalType": "timestamp-millis"}, ("TIMESTAMP(3)", False)),
        ({"type": "long", "logicalType": "timestamp-micros"}, ("TIMESTAMP(6)", False)),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, ("TIMESTAMP(3)", False)),
        ({"type": "bytes", "logicalType": "decimal", "precision": 8, "scale": 3}, ("DECIMAL(8, 3)", False)),
        ({"type": "fixed", "name": "f", "size": 4}, ("BYTES", False)),
        ({"type": "string", "logicalType": "uuid"}, ("STRING", False)),
        ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, ("STRING", False)),
        ({"type": "int", "logicalType": "time-millis"}, ("INT", False)),
        ({"type": "array", "items": "string"}, ("ARRAY<STRING>", False)),
        ({"type": "map", "values": ["null", "long"]}, ("MAP<STRING, BIGINT>", False)),
        (["null", "int", "string"], ("ROW<member0 INT, member1 STRING>", True)),
    ],
)  # fmt: skip
def test_each_avro_type_has_a_flink_type(avro, flink):
    assert flink_type(avro) == flink


def test_the_columns_of_a_record_schema_and_references_by_name():
    schema = {
        "type": "record", "name": "Order", "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "ship", "type": ["null", {"type": "record", "name": "Address", "fields": [{"name": "city", "type": "string"}]}]},
            {"name": "bill", "type": ["null", "shop.Address"]},
        ],
    }  # fmt: skip
    columns = columns_of(schema)
    assert [(c.name, c.data_type, c.nullable) for c in columns] == [
        ("id", "BIGINT", False),
        ("ship", "ROW<`city` STRING>", True),
        ("bill", "ROW<`city` STRING>", True),
    ]


def test_a_derived_schema_reads_back_as_the_same_columns():
    columns = [Column("id", "BIGINT", nullable=False), Column("name", "STRING"), Column("d", "DECIMAL(10, 2)"),
               Column("ts", "TIMESTAMP(3)"), Column("tags", "ARRAY<STRING>")]  # fmt: skip
    back = columns_of(table_schema(columns))
    assert [(c.name, c.data_type, c.nullable) for c in back] == [
        ("id", "BIGINT", False), ("name", "STRING", True), ("d", "DECIMAL(10, 2)", True), ("ts", "TIMESTAMP(3)", True),
        ("tags", "ARRAY<STRING>", True),
    ]  # fmt: skip


def test_a_schema_that_is_not_a_record_is_refused():
    with pytest.raises(AvroSchemaError, match="must be an Avro record"):
        columns_of("string")


def test_a_given_schema_must_hold_every_column_in_a_type_it_converts_to():
    given = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}, {"name": "p", "type": {
        "type": "record", "name": "P", "fields": [{"name": "y", "type": "int"}, {"name": "x", "type": "int"}]}}]}
    check_matches(given, [Column("id", "INT")])  # a long read into an INT column is a number all the same
    with pytest.raises(AvroSchemaError, match="'name' is not a field of the Avro schema"):
        check_matches(given, [Column("name", "STRING")])
    with pytest.raises(AvroSchemaError, match="column 'id' is STRING, but the schema's field is BIGINT"):
        check_matches(given, [Column("id", "STRING")])
    with pytest.raises(AvroSchemaError, match=r"the schema's record has the fields \(y, x\)"):
        check_matches(given, [Column("p", "ROW<x INT, y INT>")])


def test_the_format_options_are_declared_and_checked():
    options = {"format": "avro", "avro.schema": json.dumps({"type": "record", "name": "r", "fields": []})}
    fmt, fmt_options = format_options(options, "value")
    assert isinstance(fmt, AvroFormat) and "schema" in fmt_options
    with pytest.raises(OptionError, match="must be an Avro record"):
        format_options({"format": "avro", "avro.schema": '"string"'}, "value")
    with pytest.raises(OptionError, match="not a JSON Avro schema"):
        format_options({"format": "avro", "avro.schema": "{nope"}, "value")
    with pytest.raises(OptionError, match="must be one of 'binary'"):
        format_options({"format": "avro", "avro.encoding": "json"}, "value")
    with pytest.raises(OptionError, match="unsupported option 'avro.codec'"):
        format_options({"format": "avro", "avro.codec": "snappy"}, "value")
