"""Secrets never show: which keys are secret, the one redaction, and every place that shows option values.

The key test is checked against the option names the connectors and formats really declare, so that a pattern
that hides too much (or too little) fails here rather than in front of a user.
"""

from __future__ import annotations

import pytest

from shell.catalog.model import Column, TableDef
from shell.connectors.registry import CONNECTORS, validate_table
from shell.errors import OptionError
from shell.formats.registry import FORMATS
from shell.secrets import REDACTED, is_secret_key, redact, redact_url_passwords
from shell.session import Session, SessionOptions
from shell.sql.parse import parse_script

SECRET = "hunter2-9f3a"


@pytest.mark.parametrize(
    "key",
    [
        "properties.ssl.keystore.key", "access-key", "api-key", "apiKey", "s3a.secret.key", "access.key",
        "spark.hadoop.fs.s3a.access.key", "spark.hadoop.fs.s3a.secret.key", "properties.ssl.key.password",
        "fs.azure.account.key.myaccount.dfs.core.windows.net", "basic.auth.user.info", "ssl.keystore.passphrase",
        "auth-params", "authentication.token", "private-key", "x-api-key",
    ],
)  # fmt: skip
def test_keys_that_are_secret(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "key.fields", "key.format", "key.fields-prefix", "primary-key", "message.key", "scan.startup.specific-offsets",
        "key", "key.raw.charset", "partition.key", "sink.partitioner", "auth-plugin", "properties.ssl.keystore.location",
        "json.map-null-key.mode", "json.map-null-key.literal", "value.json.map-null-key.literal",
    ],
)  # fmt: skip
def test_keys_that_are_not_secret(key):
    assert not is_secret_key(key)


def declared_option_names():
    """Every option name a connector or format declares, with a column for '#' and a word for '*'."""
    names = {}
    for connector in CONNECTORS.values():
        for spec in connector.options:
            names[spec.key.replace("#", "amount").replace("*", "anything")] = spec.secret
    for fmt in FORMATS.values():
        for spec in fmt.options:
            for prefix in (f"{fmt.name}.", f"value.{fmt.name}.", f"key.{fmt.name}."):
                names[prefix + spec.key.replace("*", "anything")] = spec.secret
    return names


def test_the_declared_options_are_secret_exactly_when_declared_so():
    names = declared_option_names()
    assert {"auth-params", "authentication.token", "key.fields", "key.format", "scan.startup.specific-offsets"} <= set(names)
    wrong = {name: declared for name, declared in names.items() if is_secret_key(name) != declared}
    assert wrong == {}


def test_a_password_in_a_url_is_hidden_in_any_value():
    assert redact_url_passwords("sasl_ssl://bob:pa55@broker:9093") == "sasl_ssl://bob:****@broker:9093"
    assert redact_url_passwords("jdbc:postgresql://bob:pa55@db/x?a=1") == "jdbc:postgresql://bob:****@db/x?a=1"
    assert redact_url_passwords("http://broker:8080/admin") == "http://broker:8080/admin"
    assert redact("'service-url' = 'pulsar://u:pa55@h:6650'") == "'service-url' = 'pulsar://u:****@h:6650'"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # a password in a URL without a scheme, as Kafka's bootstrap servers are written
        ("bob:secret@host:9093", "bob:****@host:9093"),
        ("bob:secret@host", "bob:****@host"),
        ("a:s1@h1:9093,b:s2@h2:9093", "a:****@h1:9093,b:****@h2:9093"),
        ("h1:9092,bob:s3@h2:9092", "h1:9092,bob:****@h2:9092"),
        ("'properties.bootstrap.servers' = 'bob:s-4@broker:9093'", "'properties.bootstrap.servers' = 'bob:****@broker:9093'"),
        ("k=bob:pw:with:colons@h:1", "k=bob:****@h:1"),
        ("(bob:s5@[::1]:9093)", "(bob:****@[::1]:9093)"),
        # with a scheme, as before
        ("SASL_SSL://user:pa55@host:9092", "SASL_SSL://user:****@host:9092"),
        # ordinary values: nothing to hide
        ("host:9093", "host:9093"),
        ("h1:9092,h2:9092", "h1:9092,h2:9092"),
        ("user@example.com", "user@example.com"),
        ("mailto:user@example.com", "mailto:user@example.com"),
        ("bob:@host", "bob:@host"),
        ("at 10:15 @noon", "at 10:15 @noon"),
        ("http://broker:8080/a@b", "http://broker:8080/a@b"),
        ("localhost:9092/x@y", "localhost:9092/x@y"),
    ],
)
def test_a_password_in_a_url_without_a_scheme_is_hidden(text, shown):
    assert redact(text) == shown
    assert redact_url_passwords(text) == shown


def test_redact_hides_key_value_pairs_in_free_text():
    jaas = 'PlainLoginModule required username="u" password="p4ss";'
    assert redact(jaas) == 'PlainLoginModule required username="u" password="****";'
    assert redact("GET /x?api_key=abc123&page=2") == "GET /x?api_key=****&page=2"
    assert redact("SET 'spark.hadoop.fs.s3a.access.key' = 'AKIA1';") == "SET 'spark.hadoop.fs.s3a.access.key' = '****';"
    assert redact("SELECT a FROM t WHERE key = 'k1'") == "SELECT a FROM t WHERE key = 'k1'"


def table(**options):
    return TableDef("t", [Column("amount", "INT")], {"connector": "datagen", **options})


def test_an_option_error_names_the_env_reference_never_its_value(monkeypatch):
    monkeypatch.setenv("ROWS", SECRET)
    with pytest.raises(OptionError) as info:
        validate_table(table(**{"rows-per-second": "${env:ROWS}"}))
    assert info.value.message == (
        "option 'rows-per-second' of connector 'datagen' must be an integer, got the value of ${env:ROWS}"
    )
    with pytest.raises(OptionError) as info:
        validate_table(table(**{"rows-per-second": "1${env:ROWS}"}))
    assert SECRET not in str(info.value) and "'1${env:ROWS}' with ${env:ROWS} substituted" in info.value.message


def test_a_format_error_on_a_substituted_value_names_the_reference(monkeypatch):
    monkeypatch.setenv("STANDARD", SECRET)
    options = {"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "b:9092", "value.format": "json",
               "json.timestamp-format.standard": "${env:STANDARD}"}  # fmt: skip
    with pytest.raises(OptionError) as info:
        validate_table(TableDef("t", [Column("a", "INT")], options))
    assert SECRET not in info.value.render()
    assert info.value.message.endswith("got the value of ${env:STANDARD}")


def test_a_secret_options_value_is_in_no_option_error():
    options = {"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "b:9092", "value.format": "json",
               "properties.ssl.keystore.key": SECRET, "scan.startup.mode": SECRET}  # fmt: skip
    with pytest.raises(OptionError) as info:  # pasted into the wrong option too, it stays hidden
        validate_table(TableDef("t", [Column("a", "INT")], options))
    assert info.value.message.endswith("got '****'") and SECRET not in info.value.render()
    options["scan.startup.mode"] = "first"
    with pytest.raises(OptionError, match="got 'first'"):  # other values are shown
        validate_table(TableDef("t", [Column("a", "INT")], options))
    options["scan.startup.mode"] = "earliest-offset"
    options["scan.startup.timestamp-millis"] = "${env:NOT_SET_ANYWHERE}"
    with pytest.raises(OptionError, match="NOT_SET_ANYWHERE, which is not set"):
        validate_table(TableDef("t", [Column("a", "INT")], options))


def run(session, sql):
    return [session.execute(statement) for statement in parse_script(sql)]


@pytest.fixture
def session(tmp_path):
    s = Session(SessionOptions(home=tmp_path / "home"))
    yield s
    s.close()


def test_set_lists_secret_settings_hidden(session):
    run(session, "SET 'spark.hadoop.fs.s3a.secret.key' = 's3cr3t-1'; SET 'spark.hadoop.fs.s3a.access.key' = 'AKIA-2';"
                 "SET 'spark.sql.warehouse.url' = 'jdbc:pg://bob:pw-3@db/x';")  # fmt: skip
    listing = dict(run(session, "SET;")[0].rows)
    assert listing["spark.hadoop.fs.s3a.secret.key"] == REDACTED
    assert listing["spark.hadoop.fs.s3a.access.key"] == REDACTED
    assert listing["spark.sql.warehouse.url"] == "jdbc:pg://bob:****@db/x"
    assert listing["sql-client.verbose"] == "false"


def test_show_create_table_hides_secret_keys_and_url_passwords(session):
    run(session, "CREATE TABLE k (a INT) WITH ('connector' = 'kafka', 'topic' = 't', 'value.format' = 'json', "
                 "'properties.bootstrap.servers' = 'sasl_ssl://bob:pw-4@b:9093', "
                 "'properties.ssl.keystore.key' = 'PEM-5', 'properties.sasl.jaas.config' = 'x password=\"pw-6\";', "
                 "'key.fields' = 'a', 'key.format' = 'raw');")  # fmt: skip
    text = run(session, "SHOW CREATE TABLE k;")[0].text
    for secret in ("pw-4", "PEM-5", "pw-6"):
        assert secret not in text
    assert "'properties.ssl.keystore.key' = '****'" in text
    assert "sasl_ssl://bob:****@b:9093" in text
    assert "'key.fields' = 'a'" in text and "'key.format' = 'raw'" in text


def test_a_key_a_connector_declares_secret_is_secret_whatever_its_name(monkeypatch):
    from shell import secrets

    monkeypatch.setattr(secrets, "_DECLARED", set())
    assert not is_secret_key("tls-client-cert")
    secrets.declare_secret_keys(["tls-client-cert", "fields.#.seed", "extra.*"])
    assert is_secret_key("tls-client-cert") and is_secret_key("'TLS-Client-Cert'")
    assert redact("WITH ('tls-client-cert' = 'abc')") == "WITH ('tls-client-cert' = '****')"
    assert not is_secret_key("fields.#.seed")  # patterns are matched per table (connectors.registry.secret_keys)


def test_the_pulsar_data_source_hides_url_passwords_in_its_errors():
    from shell.connectors.pulsar_common import PulsarOptionError, parse_options

    with pytest.raises(PulsarOptionError, match=r"got 'ftp://u:\*\*\*\*@h'"):
        parse_options({"service-url": "ftp://u:pw-7@h", "topic": "t"})
    with pytest.raises(PulsarOptionError, match=r"got 'ftp://u:\*\*\*\*@h'"):
        parse_options({"service-url": "pulsar://h", "admin-url": "ftp://u:pw-8@h", "topic": "t"})
