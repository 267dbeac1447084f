"""A secret planted in every kind of option and setting that holds one is found nowhere it must not be.

Every secret-bearing kind gets a distinct random value: the options the connector and format registries declare
secret (shell/connectors/registry.py, shell/formats/registry.py), the keys shell/secrets.py recognizes by pattern
(password, token, secret, JAAS configs, keys ending in `key`, `access-key`, `api-key`), credentials inside a URL in
an ordinary option (`properties.bootstrap.servers`, `service-url`, `admin-url`), values that come from `${env:X}`,
and settings (`SET`, quoted and bare, `-D`, config.properties). Then the real CLI (shell.cli.main, in-process,
script mode) runs every statement that can show them: CREATE TABLE (also again with another value, and LIKE),
SHOW CREATE TABLE, SHOW TABLES, DESCRIBE, `SET;`, ALTER TABLE ... SET, SELECT and EXPLAIN (they fail at Spark,
which the unit tier does not start), PRINT and DESCRIBE TOPIC on a broker that is down, and statements that fail
on those options: a value of the wrong type (typed or from `${env:X}`) or an unknown option next to a secret, a
table that fails validation, an ALTER that fails, a syntax error in a line holding a secret, an unknown setting.
The same statements go through the REPL's executor (on a terminal and on a pipe) and into the REPL's history file.

No secret value appears in stdout, stderr, the REPL's console, the history file, any file under `<home>/log`,
or any other file of the home, with one exception that is by design: a literal secret typed into a table's
CREATE TABLE or ALTER TABLE is kept in that table's catalog file (`<home>/catalog/tables/<name>.json`), because
the table needs it to connect. That is the only place it is stored; a value given as `${env:X}` is kept as the
reference, never the value, and settings are never written to the catalog.

Reuses the fuzz suite's stand-ins (tests/unit/test_fuzz_cli.py): no Spark starts and no socket connects.
"""

from __future__ import annotations

import io
import re
import secrets as random_secrets
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.console import Console

from shell.cli import main
from shell.connectors.registry import CONNECTORS
from shell.exitcodes import EXIT_FAILED, EXIT_OK
from shell.formats.registry import FORMATS
from shell.repl.executor import Executor
from shell.repl.history import RedactingFileHistory
from shell.secrets import REDACTED, is_secret_key
from shell.sql import split_statements
from tests.unit.test_fuzz_cli import no_spark_no_network  # noqa: F401 - the autouse fixture: no Spark, no network

pytestmark = pytest.mark.unit


@dataclass
class Secret:
    label: str  # where it was planted, for the failure message
    value: str
    kept: bool = False  # a literal typed into a table that exists: kept in that table's catalog file (and LIKE's)


class Planted:
    """Distinct random secrets, each with where it was planted."""

    def __init__(self) -> None:
        self.all: list[Secret] = []

    def new(self, label: str, kept: bool = False) -> str:
        value = f"S{random_secrets.token_hex(8)}"
        self.all.append(Secret(label, value, kept))
        return value


def quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def with_clause(options: dict[str, str]) -> str:
    return ", ".join(f"{quoted(k)} = {quoted(v)}" for k, v in options.items())


# The options that make a table of each connector valid; a connector that declares a secret must be listed here
# (test_every_declared_secret_option_is_planted), so a new one is covered when it is added.
BASES: dict[str, tuple[str, dict[str, str]]] = {
    "kafka": ("(a INT, b STRING)", {"connector": "kafka", "topic": "k", "format": "json",
                                    "properties.bootstrap.servers": "localhost:9092"}),
    "upsert-kafka": ("(a INT, b STRING, PRIMARY KEY (a) NOT ENFORCED)",
                     {"connector": "upsert-kafka", "topic": "uk", "key.format": "json", "value.format": "json",
                      "properties.bootstrap.servers": "localhost:9092"}),
    "pulsar": ("(a INT, b STRING)", {"connector": "pulsar", "topic": "p", "format": "json",
                                     "service-url": "pulsar://localhost:6650", "admin-url": "http://localhost:8080"}),
    "upsert-pulsar": ("(a INT, b STRING, PRIMARY KEY (a) NOT ENFORCED)",
                      {"connector": "upsert-pulsar", "topic": "up", "key.format": "json", "value.format": "json",
                       "service-url": "pulsar://localhost:6650", "admin-url": "http://localhost:8080"}),
    "jdbc": ("(a INT, b STRING)", {"connector": "jdbc", "url": "jdbc:postgresql://localhost:5432/db", "table-name": "t",
                                   "username": "u"}),
}  # fmt: skip

# Keys shell/secrets.py recognizes by pattern, given through a connector's `properties.*`.
PATTERN_KEYS = [
    "properties.ssl.keystore.key",  # a key ending in `key`
    "properties.ssl.key.password",
    "properties.ssl.truststore.password",
    "properties.sasl.jaas.config",
    "properties.basic.auth.user.info",
    "properties.access-key",
    "properties.api-key",
    "properties.client.secret",
    "properties.oauth.token",
]
SETTING_KEYS = [  # SET 'key' = '...'
    "spark.hadoop.fs.s3a.secret.key",
    "spark.hadoop.fs.s3a.session.token",
    "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net",
    "spark.ssl.keyPassword",
]


def declared_secret_options() -> list[tuple[str, str]]:
    """(connector or 'format:<name>', option key) for every option the registries declare secret."""
    found = [(name, spec.key) for name, c in CONNECTORS.items() for spec in c.options if spec.secret]
    found += [(f"format:{name}", spec.key) for name, f in FORMATS.items() for spec in f.options if spec.secret]
    return found


class Scenario:
    """The statements, the settings and the environment, each secret planted once."""

    def __init__(self, monkeypatch) -> None:  # noqa: ANN001
        self.planted = p = Planted()
        self.env: dict[str, str] = {}
        self.references: list[str] = []  # the ${env:X} of tables that exist: the catalog keeps them
        self.good: list[str] = []  # one script: every statement succeeds
        self.failing: list[str] = []  # one script each: the statement fails (exit 1)

        def env(label: str, stored: bool = True) -> str:
            name = f"STREAMSHELL_TEST_SECRET_{len(self.env)}"
            self.env[name] = p.new(f"${{env:{name}}} in {label}")
            monkeypatch.setenv(name, self.env[name])
            if stored:
                self.references.append(f"${{env:{name}}}")
            return f"${{env:{name}}}"

        def create(name: str, connector: str, extra: dict[str, str]) -> str:
            columns, base = BASES[connector]
            return f"CREATE TABLE {name} {columns} WITH ({with_clause({**base, **extra})});"

        # Declared secret options, and the pattern kinds, literal (kept in the catalog) and from ${env:X}.
        for connector, (columns, base) in BASES.items():
            table = connector.replace("-", "_")
            extra = {}
            for owner, key in declared_secret_options():
                if owner == connector:
                    extra[key] = p.new(f"{connector} '{key}'", kept=True)
            for key in PATTERN_KEYS:  # those the connector takes (jdbc has no `properties.*`)
                if any(spec.matches(key, set()) for spec in CONNECTORS[connector].options):
                    extra[key] = p.new(f"{connector} '{key}'", kept=True)
            self.good.append(create(table, connector, extra))
            self.good.append(create(f"{table}_env", connector, {key: env(f"{connector} '{key}'") for key in extra}))
        for owner, key in declared_secret_options():
            if owner.startswith("format:"):  # a format's secret option, on a Kafka table of that format
                fmt = owner.split(":", 1)[1]
                value = p.new(f"format {fmt} '{key}'", kept=True)
                self.good.append(create(f"fmt_{fmt}", "kafka", {"format": fmt, f"{fmt}.{key}": value}))
        # Credentials inside URLs of ordinary options.
        user = "someone"
        self.good.append(create("kafka_url", "kafka", {
            "properties.bootstrap.servers": f"SASL_SSL://{user}:{p.new('bootstrap URL', kept=True)}@localhost:9092"}))
        self.good.append(create("pulsar_url", "pulsar", {
            "service-url": f"pulsar+ssl://{user}:{p.new('service-url URL', kept=True)}@localhost:6651",
            "admin-url": f"https://{user}:{p.new('admin-url URL', kept=True)}@localhost:8443"}))
        boot = "STREAMSHELL_TEST_SECRET_URL"
        self.env[boot] = f"SASL_SSL://{user}:{p.new('${env:X} URL in bootstrap servers')}@localhost:9092"
        monkeypatch.setenv(boot, self.env[boot])
        self.good.append(create("kafka_url_env", "kafka", {"properties.bootstrap.servers": f"${{env:{boot}}}"}))
        self.references.append(f"${{env:{boot}}}")
        # A table written on one line, which a failing statement below quotes in its message.
        self.good.append(create("one_line", "pulsar", {"auth-params": p.new("one-line auth-params", kept=True)}))
        # LIKE, and the same definition again (accepted, unchanged).
        self.good.append(f"CREATE TABLE liked WITH ('authentication.token' = "
                         f"{quoted(p.new('LIKE authentication.token', kept=True))}) LIKE one_line;")  # fmt: skip
        self.good.append(self.good[-2])
        # ALTER TABLE ... SET with a secret (kept: the table has it now; the value it replaces is gone).
        next(s for s in p.all if s.label == "kafka 'properties.ssl.key.password'").kept = False
        self.good.append(f"ALTER TABLE kafka SET ('properties.ssl.key.password' = "
                         f"{quoted(p.new('ALTER properties.ssl.key.password', kept=True))});")  # fmt: skip
        # A table with a secret, dropped: its secret leaves the catalog.
        self.good.append(create("dropped", "pulsar", {"auth-params": p.new("dropped table's auth-params")}))
        self.good.append("DROP TABLE dropped;")
        # Settings: SET quoted and bare, a URL in an ordinary setting.
        for key in SETTING_KEYS:
            self.good.append(f"SET {quoted(key)} = {quoted(p.new(f'SET {key}'))};")
        self.good.append(f"SET spark.hadoop.fs.s3a.access.key = {p.new('bare SET access.key')};")
        self.good.append(f"SET 'spark.hadoop.fs.defaultFS' = 's3a://AKIA:{p.new('SET URL in fs.defaultFS')}@bucket';")
        # Every statement that shows options, settings or tables.
        tables = [statement.split()[2] for statement in self.good if statement.startswith("CREATE TABLE")]
        tables = [t for t in dict.fromkeys(tables) if t != "dropped"]
        self.good += ["SHOW TABLES;", "SET;"]
        self.good += [f"SHOW CREATE TABLE {t};" for t in tables] + [f"DESCRIBE {t};" for t in tables]
        self.good.append("CREATE VIEW v AS SELECT a, b FROM kafka;")
        self.good += ["SHOW VIEWS;", "SHOW CREATE VIEW v;", "SHOW JOBS;"]

        # Statements that fail, each in a script of its own.
        self.failing += [
            # a value of the wrong type next to a secret, on one line (the message quotes the line)
            create("bad_type", "pulsar", {"auth-params": p.new("auth-params next to a wrong int"),
                                          "source.max-messages-per-trigger": "many"}),
            # a wrong value that comes from ${env:X}, next to a secret
            create("bad_env", "pulsar", {"authentication.token": p.new("token next to a wrong env int"),
                                         "source.max-messages-per-trigger": env("a wrong int", stored=False)}),
            create("bad_enum", "kafka", {"properties.sasl.jaas.config": p.new("JAAS next to a wrong enum"),
                                         "scan.startup.mode": "nope"}),
            # an unknown option next to a secret
            create("bad_key", "kafka", {"properties.ssl.keystore.key": p.new("keystore key next to an unknown option"),
                                        "nope": "x"}),
            create("bad_fmt", "kafka", {"properties.api-key": p.new("api-key next to an unknown format"),
                                        "format": "jsn"}),
            # a table that fails validation (no topic), with a URL password
            f"CREATE TABLE bad_valid (a INT) WITH ('connector' = 'kafka', 'format' = 'json', "
            f"'properties.bootstrap.servers' = 'SASL_SSL://u:{p.new('URL in a table without topic')}@h:9092');",
            # another definition of an existing table (the error names what differs)
            create("one_line", "pulsar", {"auth-params": p.new("a second definition's auth-params")}),
            # an ALTER that fails, with a secret
            f"ALTER TABLE kafka SET ('properties.ssl.keystore.password' = "
            f"{quoted(p.new('failing ALTER keystore.password'))}, 'scan.startup.mode' = 'nope');",
            # syntax errors in a line holding a secret
            f"CREATE TABLE syntax (a INT) WITH ('connector' = 'pulsar', 'auth-params' = "
            f"{quoted(p.new('auth-params before a missing comma'))} 'topic' = 'x');",
            f"SET 'spark.hadoop.fs.s3a.secret.key' = '{p.new('unterminated SET')}",
            # an unknown setting with a secret-looking key
            f"SET 'sql-client.password' = {quoted(p.new('unknown setting'))};",
            # statements that need Spark (not started in the unit tier) over tables with secrets
            "SELECT * FROM kafka;",
            "SELECT * FROM pulsar_url;",
            "EXPLAIN SELECT a FROM kafka_env WHERE b = 'x';",
            "INSERT INTO pulsar SELECT * FROM kafka;",
            # a broker that is down, with secrets in WITH and through a table
            f"PRINT 'k' FROM BEGINNING LIMIT 3 WITH ('connector' = 'kafka', 'properties.bootstrap.servers' = "
            f"'SASL_SSL://u:{p.new('PRINT bootstrap URL')}@localhost:9092', 'properties.sasl.jaas.config' = "
            f"{quoted(p.new('PRINT JAAS'))});",
            "PRINT 'p' FROM BEGINNING LIMIT 3;",
            "DESCRIBE TOPIC 'k' SAMPLE 2;",
            f"DESCRIBE TOPIC 'p' SAMPLE 2 WITH ('connector' = 'pulsar', 'service-url' = "
            f"'pulsar://u:{p.new('DESCRIBE TOPIC service-url')}@localhost:6650', 'admin-url' = "
            f"'http://localhost:8080', 'auth-params' = {quoted(p.new('DESCRIBE TOPIC auth-params'))});",
        ]  # fmt: skip

        # -D settings and config.properties (a good line, a line without '=', an unknown key).
        self.defines = [f"spark.hadoop.fs.s3a.secret.key={p.new('-D secret.key')}",
                        f"spark.hadoop.fs.gs.auth.client.secret={p.new('-D client.secret')}"]  # fmt: skip
        self.config = (f"spark.hadoop.fs.s3a.session.token = {p.new('config.properties token')}\n"
                       f"spark.ssl.trustStorePassword {p.new('config.properties line without =')}\n"
                       f"nope.password = {p.new('config.properties unknown key')}\n")  # fmt: skip
        self.config_secrets = {s.value for s in p.all[-3:]}


def run_cli(capfd, home: Path, defines: list[str], text: str) -> tuple[int, str, str]:
    capfd.readouterr()
    script = home.parent / "secrets.sql"
    script.write_text(text, encoding="utf-8")
    code = main(["--catalog", str(home), *[a for d in defines for a in ("-D", d)], "-f", str(script)])
    out, err = capfd.readouterr()
    return code, out, err


def run_in_repl(capsys, home: Path, defines: list[str], statements: list[str]) -> str:
    """Each statement through the REPL's executor, on a terminal and on a pipe; and into the history file."""
    from shell.cli import build_parser, parse_defines
    from shell.session import Session, SessionOptions

    history = RedactingFileHistory(home / "history")
    settings = parse_defines(build_parser(), defines)
    shown = []
    for interactive in (True, False):
        console = Console(file=io.StringIO(), force_terminal=interactive, width=200, height=40, color_system=None)
        session = Session(SessionOptions(home=home, settings=settings))
        try:
            executor = Executor(session, console)
            for text in statements:
                if interactive:
                    history.append_string(text)  # what the prompt does with an accepted buffer
                capsys.readouterr()
                executor.run_text(text)
                out, err = capsys.readouterr()
                shown += [console.file.getvalue(), out, err]
        finally:
            session.close()
    return "\n".join(shown)


def test_every_declared_secret_option_is_planted():
    """The registries declare secret options; each connector declaring one has a valid base table here."""
    declared = declared_secret_options()
    assert declared, "the registries declare no secret option: the enumeration found nothing"
    for owner, key in declared:
        assert owner.startswith("format:") or owner in BASES, f"add a base table for connector '{owner}'"
        assert is_secret_key(key), f"'{key}' of {owner} is declared secret but shell.secrets does not know it"
    for key in PATTERN_KEYS + SETTING_KEYS:
        assert is_secret_key(key), key


def test_no_secret_anywhere_but_the_catalog_entry_of_its_table(tmp_path, capfd, monkeypatch):
    scenario = Scenario(monkeypatch)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.properties").write_text(scenario.config, encoding="utf-8")

    seen = []  # (what, text) of everything shown or kept outside the catalog
    code, out, err = run_cli(capfd, home, scenario.defines, "\n".join(scenario.good) + "\n")
    assert code == EXIT_OK, err
    seen.append(("stdout of the good script", out))
    seen.append(("stderr of the good script", err))
    assert f"'properties.ssl.keystore.key' = '{REDACTED}'" in out  # the SHOW CREATE TABLE ran, redacted
    assert re.search(r"spark\.hadoop\.fs\.s3a\.secret\.key \| +\*{4} \|", out), out  # and `SET;`
    for statement in scenario.failing:
        code, out, err = run_cli(capfd, home, scenario.defines, statement + "\n")
        assert code == EXIT_FAILED, f"{statement}\n{out}\n{err}"
        assert "secrets.sql:1:" in err and "Traceback" not in err, err
        seen.append((f"stdout of {statement}", out))
        seen.append((f"stderr of {statement}", err))

    seen.append(("the REPL", run_in_repl(capfd, home, scenario.defines, scenario.good + scenario.failing)))
    history = home / "history"
    assert history.is_file() and "CREATE TABLE" in history.read_text(encoding="utf-8")
    assert history.stat().st_mode & 0o777 == 0o600
    logs = [f for f in (home / "log").rglob("*") if f.is_file()]
    catalog = [f for f in (home / "catalog").rglob("*") if f.is_file()]
    others = [f for f in home.rglob("*") if f.is_file() and f not in catalog and f.name != "config.properties"]
    assert history in others and set(logs) <= set(others)
    for path in others:  # history, logs, jobs, anything else the shell wrote
        seen.append((str(path.relative_to(home)), path.read_bytes().decode("utf-8", errors="replace")))
    kept = {str(f.relative_to(home)): f.read_text(encoding="utf-8") for f in catalog}

    leaks = [f"{s.label} ({s.value}) in {what}" for s in scenario.planted.all for what, text in seen if s.value in text]
    assert not leaks, "\n".join(leaks)

    # The catalog: a literal secret typed into a table that exists is kept in that table's file, by design, and
    # nowhere else; no ${env:X} value, no setting, no secret of a failed statement or a dropped table.
    for secret in scenario.planted.all:
        files = [name for name, text in kept.items() if secret.value in text]
        if secret.kept:
            # its table's file (and that of a table made LIKE it, which copies its options)
            assert files and all(f.startswith("catalog/tables/") for f in files), f"{secret.label}: {files}"
        else:
            assert not files, f"{secret.label} ({secret.value}) kept in {files}"
    for reference in scenario.references:
        assert any(reference in text for text in kept.values()), f"the catalog keeps {reference}"
    assert not [name for name in kept if name.endswith(".tmp")]
    assert (home / "config.properties").read_text(encoding="utf-8") == scenario.config  # the user's file, untouched


def test_an_error_quotes_its_line_redacted_with_the_caret_under_the_fault(tmp_path, capfd):
    """The faulty line of an error is the user's text: a secret in it is hidden, and the caret still points at
    the fault after the hidden value."""
    secret = f"S{random_secrets.token_hex(8)}"
    home = tmp_path / "home"
    home.mkdir()
    statement = (f"CREATE TABLE t (a INT) WITH ('connector' = 'pulsar', 'auth-params' = '{secret}', "
                 "'topic' = 'x', 'service-url' = 'pulsar://localhost:6650', 'nope' = 'x');")  # fmt: skip
    code, out, err = run_cli(capfd, home, [], statement)
    assert code == EXIT_FAILED
    assert secret not in out + err
    lines = err.splitlines()
    assert lines[0].startswith(f"{home.parent / 'secrets.sql'}:1:")
    assert lines[1] == statement.replace(secret, REDACTED)
    caret = lines[2].index("^")
    col = int(lines[0].split(":")[2])
    if col > 1:  # positioned on the option: the caret is under it in the redacted line
        assert lines[1][caret:].startswith("'nope'"), err
    assert split_statements(lines[1])  # still SQL


def test_redaction_stays_linear_on_a_megabyte_line():
    """Every error's line passes through the redaction: a 1 MB identifier, URL-like run or list of pairs must not
    make it quadratic (the URL pattern once tried a scheme at every letter of a long word)."""
    import time

    from shell.secrets import redact

    for text in ("c" * 1_000_000, "a:" * 500_000, "x=" * 500_000, "'k' = 'v', " * 90_000, "SET " + "a" * 1_000_000):
        started = time.monotonic()
        assert redact(text) == text
        assert time.monotonic() - started < 5, text[:20]
