"""Secrets never reach the history file (or Ctrl-R); one key test shared with the session and connectors."""

from __future__ import annotations

import pytest

from shell.repl.history import RedactingFileHistory
from shell.secrets import is_secret_key, redact_sql


@pytest.mark.parametrize(
    "key",
    ["password", "properties.sasl.jaas.config", "authParams", "auth-params", "token", "properties.ssl.key.password",
     "client-secret", "aws.credentials.provider", "SASL.JAAS.CONFIG"],
)
def test_secret_looking_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize("key", ["topic", "connector", "properties.bootstrap.servers", "fields.id.kind", "format"])
def test_ordinary_keys(key):
    assert not is_secret_key(key)


def test_redact_with_clause_keeps_everything_else():
    sql = (
        "CREATE TABLE t (id INT) WITH ('connector' = 'kafka', 'properties.sasl.jaas.config' = "
        "'org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p4ss\";',\n"
        "  'topic' = 'orders', 'authParams' = 'token:abc''def');"
    )
    redacted = redact_sql(sql)
    assert "p4ss" not in redacted and "abc" not in redacted
    assert "'properties.sasl.jaas.config' = '****'" in redacted
    assert "'authParams' = '****'" in redacted
    assert "'topic' = 'orders'" in redacted and "'connector' = 'kafka'" in redacted


def test_redact_set_statements_quoted_and_bare():
    assert redact_sql("SET 'pulsar.auth-token' = 'xyz';") == "SET 'pulsar.auth-token' = '****';"
    assert redact_sql("SET my.password = hunter2;") == "SET my.password = ****;"
    assert redact_sql("SET 'sql-client.verbose' = 'true';") == "SET 'sql-client.verbose' = 'true';"


def test_redact_an_unterminated_secret_value():
    assert "hunter2" not in redact_sql("CREATE TABLE t WITH ('password' = 'hunter2")


def test_history_file_and_memory_hold_redacted_text(tmp_path):
    path = tmp_path / "home" / "history"
    history = RedactingFileHistory(path)
    history.append_string("ALTER TABLE t SET ('password' = 'hunter2');")
    assert "hunter2" not in path.read_text()
    assert "'password' = '****'" in path.read_text()
    assert all("hunter2" not in s for s in history.get_strings())
    again = RedactingFileHistory(path)
    assert list(again.load_history_strings()) == ["ALTER TABLE t SET ('password' = '****');"]
