"""DELETE FROM: parsed into its statement, turned into whole keys of an upsert table, every other shape refused
with a positioned one-line error (the tombstones themselves are written in tests/e2e, against the brokers)."""

from __future__ import annotations

import pytest

from shell.errors import OptionError, SqlSyntaxError, StreamshellError, UnsupportedFeatureError
from shell.planner.deletes import deleted_keys
from shell.sql import parse_script
from shell.sql import statements as st
from shell.sql.parse import generate

pytestmark = pytest.mark.unit

TABLES = {
    "users": """CREATE TABLE users (uid STRING, n INT, PRIMARY KEY (uid) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
        'topic' = 'users', 'properties.bootstrap.servers' = 'localhost:9092', 'key.format' = 'raw', 'value.format' = 'json')""",
    "pairs": """CREATE TABLE pairs (a STRING, b INT, n INT, PRIMARY KEY (a, b) NOT ENFORCED) WITH ('connector' = 'upsert-pulsar',
        'topic' = 'pairs', 'service-url' = 'pulsar://localhost:6650', 'admin-url' = 'http://localhost:8080',
        'key.format' = 'json', 'value.format' = 'json')""",
    "events": """CREATE TABLE events (uid STRING) WITH ('connector' = 'kafka', 'topic' = 'events',
        'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'json')""",
    "appended": """CREATE TABLE appended (uid STRING) WITH ('connector' = 'pulsar', 'topic' = 'a',
        'service-url' = 'pulsar://localhost:6650', 'admin-url' = 'http://localhost:8080', 'format' = 'json')""",
    "numbers": "CREATE TABLE numbers (uid STRING) WITH ('connector' = 'datagen')",
}


def keys_of(sql: str) -> list[list[str]]:
    [statement] = parse_script(sql)
    [create] = parse_script(TABLES[statement.target])
    return [[value.sql() for value in key] for key in deleted_keys(statement, create.table)]


def refusal(sql: str) -> StreamshellError:
    with pytest.raises(StreamshellError) as info:
        keys_of(sql)
    return info.value.with_source(sql)


def pointed_at(error: StreamshellError, sql: str) -> str:
    assert error.line == 1 and error.col is not None, error.render()
    return sql[error.col - 1 : error.col - 1 + error.length]


def test_delete_parses_into_its_statement_and_prints_back():
    sql = "DELETE FROM cat.db.users WHERE uid IN ('a', 'b') AND n = -1"
    [statement] = parse_script(sql)
    assert isinstance(statement, st.Delete) and statement.target == "cat.db.users"
    assert statement.where.sql() == "uid IN ('a', 'b') AND n = -1"
    assert generate(statement.node) == sql


@pytest.mark.parametrize(
    "sql, message, at",
    [
        ("DELETE FROM users", "DELETE without WHERE (deleting every key) is not supported", "DELETE"),
        ("DELETE users WHERE uid = 'a'", "expected FROM: DELETE FROM t WHERE key = ..., found 'users'", "users"),
        ("DELETE FROM users LIMIT 1", "expected WHERE, found 'LIMIT'", "LIMIT"),
    ],
)
def test_a_delete_that_does_not_parse_is_refused_where_it_goes_wrong(sql, message, at):
    with pytest.raises((SqlSyntaxError, UnsupportedFeatureError)) as info:
        parse_script(sql)
    assert info.value.message == message
    assert pointed_at(info.value, sql) == at


@pytest.mark.parametrize(
    "sql, keys",
    [
        ("DELETE FROM users WHERE uid = 'a'", [["'a'"]]),
        ("DELETE FROM users WHERE 'a' = uid", [["'a'"]]),
        ("DELETE FROM users WHERE uid IN ('a', 'b', 'a')", [["'a'"], ["'b'"]]),
        ("DELETE FROM pairs WHERE (b = 1) AND a IN ('x', 'y')", [["'x'", "1"], ["'y'", "1"]]),
    ],
)
def test_the_where_names_whole_keys(sql, keys):
    assert keys_of(sql) == keys


@pytest.mark.parametrize("table", ["events", "appended", "numbers"])
def test_only_an_upsert_table_takes_a_delete(table):
    sql = f"DELETE FROM {table} WHERE uid = 'a'"
    error = refusal(sql)
    assert isinstance(error, OptionError)
    assert error.message.startswith(
        "DELETE FROM writes a tombstone, which only an upsert table (upsert-kafka, upsert-pulsar) has;"
    )
    assert pointed_at(error, sql) == table


@pytest.mark.parametrize(
    "sql, message, at",
    [
        ("DELETE FROM pairs WHERE a = 'x'", "the WHERE does not name primary key column b", "a"),
        ("DELETE FROM pairs WHERE a = 'x' AND b = 1 AND n = 2", "column 'n' is not in the primary key (a, b)", "n"),
        ("DELETE FROM users WHERE uid = 'a' AND uid = 'b'", "column 'uid' is named twice", "uid = 'b'"),
        ("DELETE FROM users WHERE uid = 'a' OR uid = 'b'", "can only compare the primary key with literals", "uid"),
        ("DELETE FROM users WHERE uid > 'a'", "can only compare the primary key with literals", "uid"),
        ("DELETE FROM users WHERE uid IN (SELECT uid FROM users)", "can only compare the primary key", "uid"),
        ("DELETE FROM users WHERE uid = n", "'uid' must be compared with a literal", "n"),
        ("DELETE FROM users WHERE uid = UPPER('a')", "'uid' must be compared with a literal", "UPPER"),
        ("DELETE FROM users WHERE uid = NULL", "must be compared with a literal (a key is never NULL)", "uid"),
    ],
)
def test_a_where_that_is_not_the_whole_key_with_literals_is_refused(sql, message, at):
    error = refusal(sql)
    assert isinstance(error, UnsupportedFeatureError)
    assert message in error.message
    assert sql[error.col - 1 :].startswith(at), error.render()
    assert error.hint.startswith("name the whole primary key: WHERE ")


def test_the_hint_spells_the_key_of_the_table():
    assert refusal("DELETE FROM pairs WHERE a = 'x'").hint == (
        "name the whole primary key: WHERE a = '...' AND b = ... (or IN (...) for several keys)"
    )
    assert refusal("DELETE FROM users WHERE uid > 'a'").hint.startswith("name the whole primary key: WHERE uid = '...'")
