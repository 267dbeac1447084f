"""DESCRIBE TOPIC's guessing, without Spark or a broker: formats, types, keys, and a DDL that runs as printed.

Also the connection PRINT and DESCRIBE TOPIC use (WITH, or a catalog table on the topic) and the proposed text
with secrets hidden, with the read replaced by canned messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from shell.catalog.model import TableDef
from shell.catalog.store import Catalog
from shell.connectors.registry import validate_table
from shell.errors import OptionError
from shell.inspect import commands
from shell.inspect.infer import RawMessage, propose, table_name_for, utf8
from shell.inspect.sample import Record, shown
from shell.results import Text
from shell.sql import parse_script
from shell.sql import statements as st

pytestmark = pytest.mark.unit

KAFKA = {"properties.bootstrap.servers": "localhost:9092"}
PULSAR = {"service-url": "pulsar://localhost:6650", "admin-url": "http://localhost:8080"}


def js(value: object) -> bytes:
    return json.dumps(value).encode()


def messages(values: list, keys: list | None = None) -> list[RawMessage]:
    keys = keys or [None] * len(values)
    encode = lambda v: v if v is None or isinstance(v, bytes) else (v.encode() if isinstance(v, str) else js(v))  # noqa: E731
    return [RawMessage(encode(k), encode(v)) for k, v in zip(keys, values)]


def kafka(values: list, keys: list | None = None, **kwargs):
    return propose("kafka", "orders", KAFKA, messages(values, keys), **kwargs)


def types(proposal) -> dict[str, str]:
    return {c.name: c.data_type for c in proposal.table.columns}


def statement_of(text: str) -> TableDef:
    (statement,) = parse_script(text)
    assert isinstance(statement, st.CreateTable)
    return statement.table


def uncommented(text: str, primary_key: bool = False) -> str:
    """The proposal with its commented-out items taken in (the primary key only when asked)."""
    lines = []
    for line in text.splitlines():
        if line.startswith("  -- , ") and (primary_key or "PRIMARY KEY" not in line):
            line = "  , " + line[len("  -- , "):]
        lines.append(line)
    return "\n".join(lines)


# ---- values ------------------------------------------------------------------------------------------------------


def test_json_objects_become_columns_with_flink_types():
    p = kafka([
        {"id": 1, "price": 2, "ok": True, "name": "a", "ts": "2024-05-06 07:08:09.123", "day": "2024-05-06",
         "tags": ["x"], "point": {"x": 1.5, "y": 2}, "items": [{"sku": "s", "n": 1}]},
        {"id": 2, "price": 2.5, "ok": False, "name": "b", "ts": "2024-05-06 07:08:10", "day": "2024-05-07",
         "tags": [], "point": {"x": 2, "y": 3}, "items": []},
    ])  # fmt: skip
    assert types(p) == {
        "id": "BIGINT", "price": "DOUBLE", "ok": "BOOLEAN", "name": "STRING", "ts": "TIMESTAMP(3)", "day": "DATE",
        "tags": "ARRAY<STRING>", "point": "ROW<`x` DOUBLE, `y` BIGINT>", "items": "ARRAY<ROW<`sku` STRING, `n` BIGINT>>",
    }  # fmt: skip
    assert p.table.options == {
        "connector": "kafka", "topic": "orders", "properties.bootstrap.servers": "localhost:9092",
        "scan.startup.mode": "earliest-offset", "format": "json",
    }  # fmt: skip
    assert p.notes == []


def test_iso_timestamps_set_the_format_standard_and_zones_make_ltz():
    p = kafka([{"a": "2024-05-06T07:08:09.123456", "b": "2024-05-06T07:08:09Z", "c": "2024-05-06T07:08:09+0100"}])
    assert types(p) == {"a": "TIMESTAMP(6)", "b": "TIMESTAMP_LTZ(3)", "c": "TIMESTAMP_LTZ(3)"}
    assert p.table.options["json.timestamp-format.standard"] == "ISO-8601"


def test_one_timestamp_style_per_table_and_colon_offsets_stay_text():
    p = kafka([{"a": "2024-05-06T07:08:09", "b": "2024-05-06T07:08:09", "c": "2024-05-06 07:08:09", "d": "2024-05-06T07:08:09+01:00"}])
    assert types(p) == {"a": "TIMESTAMP(3)", "b": "TIMESTAMP(3)", "c": "STRING", "d": "STRING"}
    assert any(n.startswith("c: SQL timestamps, but the table reads ISO-8601") for n in p.notes)
    assert any(n.startswith("d: timestamps with a UTC offset like '+01:00'") for n in p.notes)


def test_uncertain_guesses_are_noted():
    p = kafka([{"n": None, "m": 1, "e": [], "big": 2**70}, {"n": None, "m": "one", "e": [], "big": 1}])
    assert types(p) == {"n": "STRING", "m": "STRING", "e": "ARRAY<STRING>", "big": "DECIMAL(38, 0)"}
    assert p.notes == [
        "n: only NULL values seen: STRING is a guess",
        "m: mixed number and string values: STRING keeps each value's JSON text",
        "e: only empty arrays seen: the element type STRING is a guess",
    ]
    assert "-- Check these guesses:\n--   n: only NULL values seen" in p.text()


def test_objects_keyed_by_data_are_maps():
    p = kafka([{"by_day": {"2024-05-06": 3, "2024-05-07": 4}, "labels": {"k1": "a", "k2": "b", "k3": "c", "k4": "d"}},
               {"by_day": {"2024-05-08": 1}, "labels": {"k5": "a", "k6": "b", "k7": "c", "k8": "d"}}])  # fmt: skip
    assert types(p) == {"by_day": "MAP<STRING, BIGINT>", "labels": "MAP<STRING, STRING>"}


def test_names_that_differ_only_by_case_keep_the_first():
    p = kafka([{"id": 1, "ID": 2, "odd name": "x"}])
    assert types(p) == {"id": "BIGINT", "odd name": "STRING"}
    assert "ID: left out, column names ignore case and 'id' is one" in p.notes


def test_a_few_non_objects_among_json_objects_are_bad_records():
    p = kafka([{"id": 1}, {"id": 2}, "not json"])
    assert p.table.options["format"] == "json"
    assert "value: 1 of 3 values are not JSON objects; they would be bad records" in p.notes


def test_delimited_text_is_csv_with_its_delimiter():
    p = kafka(["1;ada;2.5;2024-05-06 07:08:09;007;true", "2;bob;;2024-05-06 07:08:10;010;false"])
    assert types(p) == {"f0": "BIGINT", "f1": "STRING", "f2": "DOUBLE", "f3": "TIMESTAMP(3)", "f4": "STRING", "f5": "BOOLEAN"}
    assert p.table.options["format"] == "csv" and p.table.options["csv.field-delimiter"] == ";"
    tabs = kafka(["1\ta", "2\tb"])
    assert tabs.table.options["csv.field-delimiter"] == "\\t"
    validate_table(statement_of(tabs.text()))


def test_csv_header_row_names_the_columns_and_iso_timestamps_stay_text():
    p = kafka(["id,name,at", "1,ada,2024-05-06T07:08:09", "2,bob,2024-05-06T07:08:10"])
    assert types(p) == {"id": "BIGINT", "name": "STRING", "at": "STRING"}
    assert p.table.options["format"] == "csv" and "csv.field-delimiter" not in p.table.options
    assert any("header row" in n for n in p.notes)
    assert any(n.startswith("at: ISO-8601 timestamps, but the table reads SQL") for n in p.notes)


def test_other_values_are_raw_text_or_bytes():
    text = kafka(["hello world", "another line"])
    assert types(text) == {"value": "STRING"} and text.table.options["format"] == "raw"
    binary = kafka([b"\x00\x01\x02", b"\xff\xfe"])
    assert types(binary) == {"value": "BYTES"}
    arrays = kafka(["[1, 2]", "[3]"])
    assert types(arrays) == {"value": "STRING"}
    assert any("not objects" in n for n in arrays.notes)
    empty = kafka([{}, {}], keys=[{}, {}])
    assert types(empty) == {"key": "STRING", "value": "STRING"}
    assert utf8(b"\x00\x01") is None and utf8("tab\there".encode()) == "tab\there"
    assert shown(b"\xff") == b"\xff" and shown(b"ok") == "ok"


# ---- keys --------------------------------------------------------------------------------------------------------


def test_text_key_equal_to_a_value_column_is_that_column():
    p = kafka([{"user": "u1", "n": 1}, {"user": "u2", "n": 2}], keys=["u1", "u2"])
    assert list(types(p)) == ["user", "n"]
    options = p.table.options
    assert (options["key.format"], options["key.fields"], options["value.format"]) == ("raw", "user", "json")
    assert "value.fields-include" not in options and "format" not in options  # Flink's default ALL: both have it
    assert p.extras.primary_key == ["user"]


def test_text_key_of_its_own_is_a_key_column_outside_the_value():
    p = kafka([{"key": 1}, {"key": 2}], keys=["a", "b"])
    assert types(p) == {"message_key": "STRING", "key": "BIGINT"}
    assert p.table.options["key.fields"] == "message_key"
    assert p.table.options["value.fields-include"] == "EXCEPT_KEY"


def test_json_keys_equal_to_value_fields_or_prefixed_columns():
    same = kafka([{"a": 1, "b": "x", "v": 1.5}], keys=[{"a": 1, "b": "x"}])
    assert same.table.options["key.format"] == "json" and same.table.options["key.fields"] == "a;b"
    assert "value.fields-include" not in same.table.options
    own = kafka([{"v": 1.5}, {"v": 2.5}], keys=[{"a": 1}, {"a": 2}])
    assert types(own) == {"a": "BIGINT", "v": "DOUBLE"}
    assert own.table.options["key.fields"] == "a" and "key.fields-prefix" not in own.table.options
    assert own.table.options["value.fields-include"] == "EXCEPT_KEY"
    clash = kafka([{"a": 1.5}], keys=[{"a": 1}])
    assert types(clash) == {"key_a": "BIGINT", "a": "DOUBLE"}
    assert (clash.table.options["key.fields"], clash.table.options["key.fields-prefix"]) == ("key_a", "key_")
    assert clash.extras.primary_key == []  # upsert-kafka has no 'key.fields-prefix'
    validate_table(statement_of(uncommented(clash.text())))


def test_binary_keys_tombstones_and_missing_keys():
    p = kafka([{"n": 1}, None, {"n": 2}], keys=[b"\x00\x01", b"\x00\x02", None])
    assert types(p)["key"] == "BYTES"
    assert "Keys: bytes (not UTF-8 text) (2 of 3 messages have one)." in p.text()
    assert "1 message has no value (tombstones)" in p.text()
    assert "see the PRIMARY KEY line" in p.text()
    assert kafka([{"n": 1}]).extras.primary_key == []


# ---- the DDL -----------------------------------------------------------------------------------------------------

SCENARIOS = {
    "json": lambda: kafka(
        [{"id": "u1", "ts": "2024-05-06 07:08:09.123", "created_ms": 1_715_000_000_000, "p": {"a": [1]}}],
        keys=["u1"],
    ),
    "json-epoch-only": lambda: kafka([{"updated_at": 1_715_000_000, "n": 1}]),
    "csv-key": lambda: kafka(["1,a", "2,b"], keys=["k1", "k2"]),
    "raw": lambda: kafka(["x"]),
    "json-key": lambda: kafka([{"v": 1}], keys=[{"a": 1}]),
    "pulsar": lambda: propose("pulsar", "persistent://public/default/my-events", PULSAR,
                              messages([{"id": 1, "at": "2024-05-06T07:08:09Z"}], keys=["k"])),  # fmt: skip
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_proposal_parses_to_its_table_and_validates(name):
    proposal = SCENARIOS[name]()
    text = proposal.text()
    assert text.endswith(");")
    table = statement_of(text)
    assert table == proposal.table
    validate_table(table)
    extended = statement_of(uncommented(text))
    assert len(extended.columns) > len(table.columns) and extended.watermark is not None
    validate_table(extended)


@pytest.mark.parametrize("name", ["json", "csv-key", "json-key", "pulsar"])
def test_the_primary_key_line_makes_the_upsert_table(name):
    proposal = SCENARIOS[name]()
    table = statement_of(uncommented(proposal.text(), primary_key=True))
    assert table.primary_key == proposal.extras.primary_key
    options = {k: v for k, v in table.options.items() if k not in ("key.fields", "scan.startup.mode")}
    options["connector"] = "upsert-" + options["connector"]
    validate_table(TableDef(table.name, table.columns, options, table.primary_key, table.watermark))


def test_extras_offer_metadata_a_computed_time_and_a_watermark():
    text = SCENARIOS["json"]().text()
    assert "  -- , created_ms_ltz AS TO_TIMESTAMP_LTZ(created_ms, 3)  -- created_ms looks like epoch milliseconds" in text
    assert "  -- , event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL" in text
    assert "  -- , WATERMARK FOR ts AS ts - INTERVAL '5' SECOND" in text
    epoch = SCENARIOS["json-epoch-only"]().text()
    assert "updated_at_ltz AS TO_TIMESTAMP_LTZ(updated_at, 0)" in epoch
    assert "WATERMARK FOR updated_at_ltz AS updated_at_ltz - INTERVAL '5' SECOND  -- event time: allow 5 seconds of lateness; needs updated_at_ltz above" in epoch
    pulsar_text = SCENARIOS["pulsar"]().text()
    assert "CREATE TABLE my_events (" in pulsar_text and "publish_time TIMESTAMP_LTZ(3) METADATA VIRTUAL" in pulsar_text
    assert "'upsert-pulsar'" in pulsar_text


def test_header_says_what_was_read():
    p = kafka([{"n": 1}], requested=10, position="the earliest offsets")
    assert p.summary[0] == (
        "Proposed by DESCRIBE TOPIC from 1 message of Kafka topic 'orders', read from the earliest offsets "
        "(it held only 1 of the 10 asked for)."
    )


def test_table_names_from_topics():
    assert table_name_for("persistent://public/default/my-orders") == "my_orders"
    assert table_name_for("2024.events") == "t_2024_events"
    assert table_name_for("---") == "topic_table"


# ---- connections and the statements' results ----------------------------------------------------------------------


def catalog_with(*tables: TableDef) -> Catalog:
    catalog = Catalog(None)
    for table in tables:
        catalog.add(table)
    return catalog


def test_connection_from_with_keeps_only_connection_options():
    connection = commands.connection_for(Catalog(None), "t", {"connector": "kafka", "properties.bootstrap.servers": "b:9092",
                                                             "properties.security.protocol": "PLAINTEXT", "topic": "t"})  # fmt: skip
    assert (connection.connector, connection.topic) == ("kafka", "t")
    assert connection.options == {"properties.bootstrap.servers": "b:9092", "properties.security.protocol": "PLAINTEXT"}


def test_connection_falls_back_to_a_table_on_the_topic(monkeypatch):
    monkeypatch.setenv("INSPECT_TOKEN", "s3cret")
    catalog = catalog_with(
        TableDef("a", options={"connector": "datagen"}),
        TableDef("b", options={"connector": "upsert-pulsar", "topic": "persistent://public/default/users",
                               "service-url": "pulsar://p:6650", "admin-url": "http://p:8080",
                               "authentication.token": "${env:INSPECT_TOKEN}", "value.format": "json"}),
    )  # fmt: skip
    connection = commands.connection_for(catalog, "users", {})
    assert connection.connector == "pulsar"
    assert connection.options == {"service-url": "pulsar://p:6650", "admin-url": "http://p:8080",
                                  "authentication.token": "${env:INSPECT_TOKEN}"}  # fmt: skip
    assert connection.resolved["authentication.token"] == "s3cret"


@pytest.mark.parametrize(
    "options, message",
    [
        ({}, "needs to know where topic 't' is"),
        ({"connector": "datagen"}, "reads Kafka and Pulsar topics, not connector 'datagen'"),
        ({"connector": "kafka"}, "needs option 'properties.bootstrap.servers'"),
        ({"connector": "kafka", "properties.bootstrap.servers": "b", "format": "json"}, "'format' is not a connection option"),
        ({"connector": "kafka", "properties.bootstrap.servers": "b", "topic": "other"}, "is not the topic 't'"),
        ({"connector": "pulsar", "service-url": "pulsar://p:6650"}, "needs option 'admin-url'"),
    ],
)
def test_connection_errors(options, message):
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        commands.connection_for(Catalog(None), "t", options)


def test_describe_topic_hides_secrets_but_keeps_env_references(monkeypatch):
    monkeypatch.setattr(commands, "read_records", lambda session, connection, count: [Record(b"k", js({"n": 1}))])
    session = SimpleNamespace(catalog=Catalog(None), home=Path("/nonexistent"))
    options = {"connector": "kafka", "properties.bootstrap.servers": "b:9092",
               "properties.sasl.jaas.config": "secret-text", "properties.ssl.key.password": "${env:NOT_NEEDED_HERE}"}  # fmt: skip
    monkeypatch.setenv("NOT_NEEDED_HERE", "x")
    result = commands.describe_topic(session, st.DescribeTopic("t", 3, options))
    assert isinstance(result, Text)
    assert "secret-text" not in result.text
    assert "'properties.sasl.jaas.config' = '****'" in result.text
    assert "'properties.ssl.key.password' = '${env:NOT_NEEDED_HERE}'" in result.text
    assert result.text.startswith("-- Secret options are shown as '****'")


def test_print_limit_zero_reads_nothing():
    result = commands.print_topic(SimpleNamespace(catalog=Catalog(None)), st.PrintTopic(
        "t", limit=0, options={"connector": "kafka", "properties.bootstrap.servers": "b:9092"}))  # fmt: skip
    assert result.columns == ["partition", "offset", "timestamp", "key", "value"] and result.rows == []
