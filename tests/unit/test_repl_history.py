"""Secrets never reach the history file (or Ctrl-R); one key test shared with the session and connectors."""

from __future__ import annotations

import pytest

from shell.repl.history import RedactingFileHistory
from shell.secrets import is_secret_key, redact


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
    redacted = redact(sql)
    assert "p4ss" not in redacted and "abc" not in redacted
    assert "'properties.sasl.jaas.config' = '****'" in redacted
    assert "'authParams' = '****'" in redacted
    assert "'topic' = 'orders'" in redacted and "'connector' = 'kafka'" in redacted


def test_redact_set_statements_quoted_and_bare():
    assert redact("SET 'pulsar.auth-token' = 'xyz';") == "SET 'pulsar.auth-token' = '****';"
    assert redact("SET my.password = hunter2;") == "SET my.password = ****;"
    assert redact("SET 'sql-client.verbose' = 'true';") == "SET 'sql-client.verbose' = 'true';"


def test_redact_an_unterminated_secret_value():
    assert "hunter2" not in redact("CREATE TABLE t WITH ('password' = 'hunter2")


def test_history_file_and_memory_hold_redacted_text(tmp_path):
    path = tmp_path / "home" / "history"
    history = RedactingFileHistory(path)
    history.append_string("ALTER TABLE t SET ('password' = 'hunter2');")
    assert "hunter2" not in path.read_text()
    assert "'password' = '****'" in path.read_text()
    assert all("hunter2" not in s for s in history.get_strings())
    again = RedactingFileHistory(path)
    assert list(again.load_history_strings()) == ["ALTER TABLE t SET ('password' = '****');"]


def test_the_history_file_is_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "home" / "history"
    RedactingFileHistory(path).append_string("SHOW TABLES;")
    assert path.stat().st_mode & 0o777 == 0o600


def test_an_existing_history_file_is_tightened(tmp_path):
    path = tmp_path / "history"
    path.write_text("\n# 2026-01-01 00:00:00\n+SHOW TABLES;\n")
    path.chmod(0o644)
    history = RedactingFileHistory(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert list(history.load_history_strings()) == ["SHOW TABLES;"]


def test_old_entries_kept_in_clear_are_redacted_when_loaded(tmp_path):
    path = tmp_path / "history"
    path.write_text("\n# 2026-01-01 00:00:00\n+SET 'spark.hadoop.fs.s3a.access.key' = 'AKIA-1';\n")
    assert list(RedactingFileHistory(path).load_history_strings()) == [
        "SET 'spark.hadoop.fs.s3a.access.key' = '****';"
    ]


def test_keys_and_url_passwords_are_redacted_in_the_history(tmp_path):
    path = tmp_path / "history"
    RedactingFileHistory(path).append_string(
        "CREATE TABLE t (a INT) WITH ('properties.ssl.keystore.key' = 'PEM-1', "
        "'properties.bootstrap.servers' = 'sasl_ssl://bob:pw-2@b:9093', 'api-key' = 'k-3');"
    )
    text = path.read_text()
    assert "PEM-1" not in text and "pw-2" not in text and "k-3" not in text
    assert "sasl_ssl://bob:****@b:9093" in text


def test_a_directory_in_place_of_the_history_file_gives_an_empty_history(tmp_path):
    (tmp_path / "history").mkdir()
    history = RedactingFileHistory(tmp_path / "history")
    assert list(history.load_history_strings()) == []
    history.store_string("SHOW TABLES;")  # nowhere to keep it; no traceback
