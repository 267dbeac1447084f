"""Which format a table uses and with which options, checked at CREATE TABLE time without Spark: Flink's keys
and prefixes, did-you-mean for typos, every bad option named in its error, and column types a format cannot hold."""

import subprocess
import sys

import pytest

from shell.catalog.model import Column
from shell.errors import OptionError
from shell.formats.base import ERROR_COLUMN, error_column, unescape
from shell.formats.registry import FORMATS, format_for, format_option_keys, format_options


def test_every_format_is_registered_by_name():
    assert sorted(FORMATS) == ["avro", "csv", "debezium-json", "json", "raw"]
    assert all(fmt.name == name for name, fmt in FORMATS.items())
    assert [n for n, f in FORMATS.items() if f.produces_changelog] == ["debezium-json"]


def test_unknown_format_suggests_the_closest():
    with pytest.raises(OptionError, match="unknown format 'jsn'") as info:
        format_for("jsn")
    assert "did you mean json?" in info.value.hint and "debezium-json" in info.value.hint


@pytest.mark.parametrize(
    "options,role,name,expected",
    [
        ({"format": "json", "json.fail-on-missing-field": "true"}, "value", "json", {"fail-on-missing-field": "true"}),
        ({"value.format": "json", "value.json.ignore-parse-errors": "true"}, "value", "json", {"ignore-parse-errors": "true"}),
        ({"value.format": "json", "json.ignore-parse-errors": "true"}, "value", "json", {"ignore-parse-errors": "true"}),
        (
            {"value.format": "json", "json.timestamp-format.standard": "iso-8601"},
            "value", "json", {"timestamp-format.standard": "ISO-8601"},
        ),
        ({"key.format": "raw", "key.raw.charset": "utf-8", "raw.charset": "x"}, "key", "raw", {"charset": "UTF-8"}),
        ({"value.format": "csv", "value.csv.field-delimiter": "\\t"}, "value", "csv", {"field-delimiter": "\\t"}),
        ({"value.format": "debezium-json", "debezium-json.schema-include": "true"}, "value", "debezium-json",
         {"schema-include": "true"}),
        ({"key.format": "json", "value.format": "csv"}, "key", "json", {}),
    ],
)
def test_format_options_strip_the_prefix(options, role, name, expected):
    fmt, found = format_options({"connector": "kafka", "topic": "t", **options}, role)
    assert (fmt.name, found) == (name, expected)


@pytest.mark.parametrize("role", ["value", "key"])
def test_no_format_is_none(role):
    assert format_options({"connector": "kafka", "value.fields-include": "ALL"}, role) is None


@pytest.mark.parametrize(
    "options,role,message",
    [
        ({"format": "jsonn"}, "value", "unknown format 'jsonn'"),
        ({"format": "json", "json.fail-on-missing": "true"}, "value", "unsupported option 'json.fail-on-missing'"),
        ({"value.format": "json", "value.json.nope": "1"}, "value", "unsupported option 'value.json.nope'"),
        ({"format": "json", "json.fail-on-missing-field": "yes"}, "value", "option 'json.fail-on-missing-field'"),
        ({"format": "json", "json.timestamp-format.standard": "RFC"}, "value", "option 'json.timestamp-format.standard'"),
        ({"format": "csv", "csv.field-delimiter": "::"}, "value", "option 'csv.field-delimiter'"),
        ({"format": "raw", "raw.endianness": "middle"}, "value", "option 'raw.endianness'"),
        ({"key.format": "raw", "key.raw.charset": "EBCDIC"}, "key", "option 'key.raw.charset'"),
        ({"format": "json", "value.format": "json"}, "value", "'value.format' and 'format'"),
        (
            {"value.format": "json", "value.json.ignore-parse-errors": "true", "json.ignore-parse-errors": "false"},
            "value", "'value.json.ignore-parse-errors' and 'json.ignore-parse-errors' conflict",
        ),
        ({"key.format": "debezium-json"}, "key", "'debezium-json' cannot be a key format"),
        (
            {"format": "csv", "csv.disable-quote-character": "true", "csv.quote-character": "'"},
            "value", "'quote-character'",
        ),
        (
            {"format": "json", "json.fail-on-missing-field": "true", "json.ignore-parse-errors": "true"},
            "value", "'fail-on-missing-field' and 'ignore-parse-errors'",
        ),
    ],
)
def test_bad_options_are_named(options, role, message):
    with pytest.raises(OptionError) as info:
        format_options(options, role)
    assert message in info.value.message


def test_a_misspelt_option_gets_a_did_you_mean_with_the_prefix_used():
    with pytest.raises(OptionError) as info:
        format_options({"value.format": "json", "json.ignore-parse-error": "true"}, "value")
    assert info.value.hint.startswith("did you mean json.ignore-parse-errors?")


def test_format_option_keys_are_those_of_the_formats_in_use():
    options = {
        "connector": "kafka",
        "topic": "t",
        "key.format": "raw",
        "key.raw.charset": "UTF-8",
        "key.fields": "id",
        "value.format": "json",
        "value.json.fail-on-missing-field": "true",
        "json.ignore-parse-errors": "true",
        "csv.field-delimiter": ";",
        "value.fields-include": "EXCEPT_KEY",
    }
    assert format_option_keys(options) == {
        "key.format", "key.raw.charset", "value.format", "value.json.fail-on-missing-field", "json.ignore-parse-errors"
    }


def test_an_unknown_format_name_is_still_claimed_so_that_its_error_is_the_format_one():
    assert format_option_keys({"format": "jsn", "jsn.x": "1"}) == {"format", "jsn.x"}


@pytest.mark.parametrize(
    "name,columns,message",
    [
        ("raw", [Column("a", "STRING"), Column("b", "STRING")], "exactly one physical column, got 2"),
        ("raw", [], "exactly one physical column, got 0"),
        ("raw", [Column("d", "DOUBLE")], "column 'd' has type DOUBLE"),
        ("raw", [Column("r", "ROW<a INT>")], "column 'r' has type ROW<a INT>"),
        ("csv", [Column("r", "ROW<a INT>")], "column 'r' has type ROW<a INT>"),
        ("csv", [Column("m", "MAP<STRING, INT>")], "column 'm' has type MAP<STRING, INT>"),
        ("csv", [Column("a", "ARRAY<ARRAY<INT>>")], "column 'a' has type ARRAY<ARRAY<INT>>"),
        ("json", [Column("m", "MAP<ARRAY<INT>, INT>")], "map keys must be a scalar type"),
        ("debezium-json", [Column("m", "MAP<ROW<a INT>, INT>")], "map keys must be a scalar type"),
    ],
)
def test_columns_a_format_cannot_hold(name, columns, message):
    with pytest.raises(OptionError, match="format '" + name + "'") as info:
        FORMATS[name].check(columns)
    assert message in info.value.message


@pytest.mark.parametrize(
    "name,columns",
    [
        ("raw", [Column("line", "STRING")]),
        ("raw", [Column("b", "BYTES")]),
        ("raw", [Column("n", "BIGINT")]),
        ("csv", [Column("a", "INT"), Column("t", "TIMESTAMP(3)"), Column("tags", "ARRAY<STRING>")]),
        ("json", [Column("r", "ROW<a ARRAY<MAP<STRING, DECIMAL(10, 2)>>>"), Column("m", "MAP<INT, STRING>")]),
    ],
)
def test_columns_a_format_holds(name, columns):
    FORMATS[name].check(columns)


def test_error_columns_of_key_and_value_are_apart():
    assert (error_column(), error_column("key")) == (ERROR_COLUMN, "__key_error")


@pytest.mark.parametrize("text,expected", [(",", ","), ("\\t", "\t"), ("\\u0001", "\u0001"), ("\\\\", "\\"), ("\\", "\\")])
def test_character_options_are_unescaped_like_flink(text, expected):
    assert unescape(text) == expected


def test_validating_formats_does_not_start_pyspark():
    code = (
        "import sys\n"
        "from shell.catalog.model import Column\n"
        "from shell.formats.registry import FORMATS, format_options\n"
        "format_options({'format': 'json', 'json.fail-on-missing-field': 'true'}, 'value')\n"
        "FORMATS['json'].check([Column('r', 'ROW<a INT, t TIMESTAMP(3)>')])\n"
        "print('pyspark' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
