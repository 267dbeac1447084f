"""PRINT and DESCRIBE TOPIC for the session: where the topic is, what to read, and the result to show.

Why it exists: the session dispatches each statement to one function and must stay small; these two need a
connection (from WITH (...), or from a catalog table on the same topic), a read (bounded or streaming) and a
result (`Rows`, a `ChangeStream` of appended rows, or the proposed DDL as `Text`). They take anything shaped like
a Session (`catalog`, `runtime`, `settings`, `home`), so tests can drive them the same way.

- `PRINT 'topic' FROM BEGINNING LIMIT n`: the first n messages, as finished `Rows`.
- `PRINT 'topic' [LIMIT n]`: new messages as they arrive, a `ChangeStream` that ends after n (or at Ctrl-C);
  with FROM BEGINNING and no LIMIT, everything from the start and then what arrives.
- `DESCRIBE TOPIC 'topic' [SAMPLE n]`: n messages (default 10) from the earliest, and a proposed CREATE TABLE.
"""

from __future__ import annotations

import uuid
from typing import Any

from shell.catalog.model import TableDef
from shell.connectors.base import OptionSpec
from shell.connectors.pulsar_common import PulsarOptionError, normalize_topic
from shell.connectors.reachability import require_reachable
from shell.connectors.registry import resolved, secret_keys
from shell.errors import ExecutionError, OptionError
from shell.inspect import sample
from shell.inspect.infer import RawMessage, propose
from shell.inspect.sample import Connection
from shell.results import Result, Rows, Text
from shell.secrets import REDACTED
from shell.sql import statements as st
from shell.sql.hints import suggest

DEFAULT_SAMPLE = 10
MAX_SAMPLE = 10_000  # a sample is collected in the driver and inferred in Python

# The connector a topic is read with, by the connector a table (or WITH) names.
KINDS = {"kafka": "kafka", "upsert-kafka": "kafka", "pulsar": "pulsar", "upsert-pulsar": "pulsar"}
# The options that reach the broker, per kind; everything else of a table (formats, scan.*) is not a connection.
CONNECTION_OPTIONS: dict[str, tuple[OptionSpec, ...]] = {
    "kafka": (
        OptionSpec("properties.bootstrap.servers", required=True, description="e.g. 'localhost:9092'"),
        OptionSpec("properties.*", description="any Kafka client property"),
    ),
    "pulsar": (
        OptionSpec("service-url", required=True, description="e.g. 'pulsar://localhost:6650'"),
        OptionSpec("admin-url", required=True, description="e.g. 'http://localhost:8080'"),
        OptionSpec("auth-plugin"),
        OptionSpec("auth-params", secret=True),
        OptionSpec("authentication.token", secret=True),
        OptionSpec("tls-trust-certs-file-path"),
        OptionSpec("tls-allow-insecure-connection", "bool"),
        OptionSpec("properties.*"),
    ),
}
CONNECTION_HINT = (
    "add WITH ('connector' = 'kafka', 'properties.bootstrap.servers' = 'localhost:9092') or "
    "WITH ('connector' = 'pulsar', 'service-url' = 'pulsar://localhost:6650', 'admin-url' = 'http://localhost:8080')"
)


# ---- the connection ----------------------------------------------------------------------------------------------


def connection_for(catalog: Any, topic: str, options: dict[str, str], statement: str = "PRINT") -> Connection:
    """The connection given in WITH (...), or else that of the first catalog table on `topic`."""
    if options:
        return _connection(topic, options, f"topic '{topic}'", statement)
    for name in catalog.names(TableDef):
        table = catalog.table(name)
        kind = KINDS.get(table.connector or "")
        if kind is None or not _same_topic(kind, topic, table.options.get("topic", "")):
            continue
        specs = CONNECTION_OPTIONS[kind]
        kept = {k: v for k, v in table.options.items() if any(s.matches(k, set()) for s in specs)}
        return _connection(topic, {"connector": kind, **kept}, table.name, statement)
    raise OptionError(
        f"{statement} needs to know where topic '{topic}' is: no WITH (...), and no table reads it",
        hint=CONNECTION_HINT,
    )


def _same_topic(kind: str, topic: str, listed: str) -> bool:
    names = [t.strip() for t in listed.split(";") if t.strip()]
    if topic in names:
        return True
    if kind != "pulsar":
        return False
    try:
        wanted = normalize_topic(topic)
        return any(normalize_topic(n) == wanted for n in names)
    except PulsarOptionError:
        return False


def _connection(topic: str, options: dict[str, str], owner: str, statement: str) -> Connection:
    name = options.get("connector")
    if not name:
        raise OptionError(f"WITH (...) of {statement} needs 'connector'", hint=CONNECTION_HINT)
    kind = KINDS.get(name)
    if kind is None:
        raise OptionError(
            f"{statement} reads Kafka and Pulsar topics, not connector '{name}'",
            hint=suggest(name, list(KINDS)) or "use 'connector' = 'kafka' or 'pulsar'",
        )
    specs = CONNECTION_OPTIONS[kind]
    kept: dict[str, str] = {}
    for key, value in options.items():
        if key == "connector":
            continue
        if key == "topic":
            if value.strip() != topic:
                raise OptionError(f"'topic' = '{value}' in WITH (...) is not the topic '{topic}' of {statement}",
                                  hint="leave 'topic' out of WITH (...): the statement names the topic")  # fmt: skip
            continue
        if not any(s.matches(key, set()) for s in specs):
            names = [s.key for s in specs if "*" not in s.key]
            raise OptionError(
                f"option '{key}' is not a connection option of '{kind}' for {statement}",
                hint=suggest(key, names) or "connection options: " + ", ".join(s.key for s in specs),
            )
        kept[key] = value
    for spec in specs:
        if spec.required and spec.key not in kept:
            raise OptionError(f"{statement} on '{kind}' needs option '{spec.key}'", hint=spec.description or None)
    values = resolved(TableDef(owner, options=kept)).options
    return Connection(kind, topic, kept, values)


def require_broker(connection: Connection) -> None:
    """Fail at once when the broker does not answer (before waiting for Spark)."""
    if connection.connector == "kafka":
        servers = connection.resolved["properties.bootstrap.servers"]
        require_reachable("kafka", "properties.bootstrap.servers", servers, 9092)
    else:
        require_reachable("pulsar", "service-url", connection.resolved["service-url"], 6650)


def read_records(session: Any, connection: Connection, count: int) -> list[sample.Record]:
    """Up to `count` messages from the earliest ones."""
    require_broker(connection)
    if connection.connector == "kafka":
        return sample.read_kafka(session.runtime.get(), connection, count)
    return sample.read_pulsar(connection, count)


# ---- the statements ----------------------------------------------------------------------------------------------


def print_topic(session: Any, statement: st.PrintTopic) -> Result:
    limit = statement.limit
    if limit is not None and limit < 0:
        raise OptionError(f"LIMIT must not be negative, got {limit}")
    connection = connection_for(session.catalog, statement.topic, statement.options, "PRINT")
    columns, _ = sample.columns_for(connection)
    if limit == 0:
        return Rows(list(columns), [])
    if statement.from_beginning and limit is not None:
        return Rows(list(columns), [r.row() for r in read_records(session, connection, limit)])
    require_broker(connection)
    if connection.connector == "pulsar":
        return sample.stream_pulsar(connection, statement.from_beginning, limit)
    work_dir = session.home / "tmp" / f"print-{uuid.uuid4().hex[:8]}"
    spark = session.runtime.get()
    return sample.stream_kafka(spark, connection, work_dir, statement.from_beginning, limit, session.settings.trigger_ms())


def describe_topic(session: Any, statement: st.DescribeTopic) -> Result:
    count = statement.sample if statement.sample is not None else DEFAULT_SAMPLE
    if not 1 <= count <= MAX_SAMPLE:
        raise OptionError(f"SAMPLE must be between 1 and {MAX_SAMPLE}, got {count}")
    connection = connection_for(session.catalog, statement.topic, statement.options, "DESCRIBE TOPIC")
    records = read_records(session, connection, count)
    if not records:
        raise ExecutionError(
            f"{connection.connector}: topic '{connection.topic}' holds no messages to sample",
            hint="produce a few messages first, or check the topic name and the connection",
        )
    position = "the earliest offsets" if connection.connector == "kafka" else "the earliest messages"
    proposal = propose(
        connection.connector,
        connection.topic,
        connection.options,
        [RawMessage(r.key, r.value) for r in records],
        requested=count,
        position=position,
    )
    hidden = secret_keys(proposal.table)
    redacted = {k for k in hidden if "${env:" not in proposal.table.options.get(k, "")}
    text = proposal.text(lambda k, v: REDACTED if k in redacted else v)
    if redacted:
        text = f"-- Secret options are shown as '{REDACTED}': write them back, or use '${{env:NAME}}'.\n" + text
    return Text(text)
