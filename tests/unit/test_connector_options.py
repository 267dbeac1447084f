"""A table's WITH clause is checked against its connector's declared options at CREATE TABLE time."""

import pytest

from shell.catalog.model import Column, TableDef
from shell.connectors.registry import resolved, secret_keys, validate_table
from shell.errors import OptionError


def table(**options) -> TableDef:
    return TableDef("t", [Column("id", "BIGINT"), Column("name", "STRING")], options=options)


def test_a_good_datagen_table_passes():
    assert validate_table(table(connector="datagen", **{"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "9"})).name == "datagen"


@pytest.mark.parametrize(
    "options, message",
    [
        ({}, "has no 'connector' option"),
        ({"connector": "kafak"}, "unknown connector 'kafak'"),
        ({"connector": "datagen", "rows-per-second": "many"}, "'rows-per-second' of connector 'datagen' must be an integer"),
        ({"connector": "datagen", "fields.nope.kind": "random"}, "unsupported option 'fields.nope.kind'"),
        ({"connector": "datagen", "fields.id.kind": "counter"}, "must be one of 'random', 'sequence'"),
        ({"connector": "datagen", "fields.id.kind": "sequence"}, "needs 'fields.id.start' and 'fields.id.end'"),
        ({"connector": "print", "standard-error": "yes"}, "must be true or false"),
        ({"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "k:9092", "format": "json",
          "source.max-messages-per-trigger": "0"}, "'source.max-messages-per-trigger' must be a positive number"),
    ],
)
def test_bad_options_name_the_option(options, message):
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate_table(table(**options))


def test_unknown_connector_suggests_the_close_one():
    with pytest.raises(OptionError) as info:
        validate_table(table(connector="datagn"))
    assert info.value.hint == "did you mean datagen?"


def test_env_references_are_resolved_and_a_missing_variable_is_named(monkeypatch):
    t = table(connector="print", **{"print-identifier": "${env:PRINT_ID}-x"})
    monkeypatch.setenv("PRINT_ID", "abc")
    assert resolved(t).options["print-identifier"] == "abc-x"
    assert t.options["print-identifier"] == "${env:PRINT_ID}-x", "the catalog keeps the reference"
    monkeypatch.delenv("PRINT_ID")
    with pytest.raises(OptionError, match="environment variable PRINT_ID, which is not set"):
        validate_table(t)


def test_secret_looking_keys_are_known():
    t = table(connector="print", **{"properties.sasl.jaas.config": "x", "password": "y", "print-identifier": "z"})
    assert secret_keys(t) == {"properties.sasl.jaas.config", "password"}
