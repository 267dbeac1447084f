"""The table of connectors by name, and the validation of a table's WITH clause against it.

Adding a connector is adding one entry here; nothing else branches on connector names. The options the
connectors declare secret are given to shell.secrets here, so every redaction knows them; and a validation
message never shows the value of a secret option, nor a value that came from `${env:NAME}` (it names the
reference instead).
"""

from __future__ import annotations

from shell.catalog.model import TableDef
from shell.connectors.base import Connector, OptionSpec
from shell.connectors.blackhole import BlackholeConnector
import os
import re
from dataclasses import replace

from shell.connectors.datagen import DatagenConnector
from shell.connectors.filesystem import FilesystemConnector
from shell.connectors.jdbc import JdbcConnector
from shell.connectors.kafka import KafkaConnector, UpsertKafkaConnector
from shell.connectors.print import PrintConnector
from shell.connectors.pulsar import PulsarConnector, UpsertPulsarConnector
from shell.errors import CatalogError, OptionError, UnsupportedFeatureError
from shell.formats.registry import format_option_keys
from shell.secrets import REDACTED, declare_secret_keys, is_secret_key, redact_url_passwords
from shell.sql.hints import suggest
from shell.units import parse_duration_ms

CONNECTORS: dict[str, Connector] = {
    c.name: c
    for c in (
        DatagenConnector(),
        KafkaConnector(),
        UpsertKafkaConnector(),
        PulsarConnector(),
        UpsertPulsarConnector(),
        PrintConnector(),
        BlackholeConnector(),
        FilesystemConnector(),
        JdbcConnector(),
    )
}

# Options every connector accepts: the connector itself, and the shell's own bad-record handling.
COMMON_OPTIONS = (OptionSpec("connector", required=True, description="which connector reads and writes the table"),)

declare_secret_keys(s.key for c in CONNECTORS.values() for s in c.options if s.secret)


def connector_for(table: TableDef) -> Connector:
    name = table.options.get("connector")
    if not name:
        raise OptionError(
            f"table '{table.name}' has no 'connector' option",
            hint="add WITH ('connector' = '...'): one of " + ", ".join(sorted(CONNECTORS)),
        )
    connector = CONNECTORS.get(name)
    if connector is None:
        hint = suggest(name, list(CONNECTORS))
        raise OptionError(
            f"unknown connector '{name}'",
            hint=hint or "available connectors: " + ", ".join(sorted(CONNECTORS)),
        )
    return connector


def specs_for(connector: Connector) -> tuple[OptionSpec, ...]:
    return COMMON_OPTIONS + connector.options


ENV_REFERENCE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def resolved(table: TableDef) -> TableDef:
    """`table` with every `${env:NAME}` in its option values replaced by the environment variable's value.

    The catalog keeps the reference, never the value, so a secret passed this way is not written to disk.
    """

    def value_of(match: re.Match) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise OptionError(
                f"table '{table.name}' refers to the environment variable {name}, which is not set",
                hint=f"export {name}=... before starting streamshell",
            )
        return os.environ[name]

    if not any("${env:" in v for v in table.options.values()):
        return table
    return replace(table, options={k: ENV_REFERENCE.sub(value_of, v) for k, v in table.options.items()})


def validate_table(table: TableDef) -> Connector:
    """Check every option of `table` against its connector's declaration; return the connector.

    Messages name a secret option's value as '****' and a substituted `${env:NAME}` by its reference.
    """
    written = table.options
    table = resolved(table)
    try:
        return _validate(table, written)
    except OptionError as exc:
        raise _without_hidden_values(exc, table, written) from None


def _validate(table: TableDef, written: dict[str, str]) -> Connector:
    connector = connector_for(table)
    specs = specs_for(connector)
    columns = {c.name.lower() for c in table.columns}
    formats = format_option_keys(table.options) if connector.has_formats else set()
    for key, value in table.options.items():
        if key in formats:
            continue
        spec = next((s for s in specs if s.matches(key, columns)), None)
        if spec is None:
            names = [s.key for s in specs if "*" not in s.key and "#" not in s.key]
            hint = suggest(key, names)
            raise OptionError(
                f"unsupported option '{key}' for connector '{connector.name}'",
                hint=hint or "supported options: " + ", ".join(s.key for s in specs),
            )
        _check_value(connector, spec, key, value, written.get(key, value))
    for spec in specs:
        if spec.required and spec.key not in table.options:
            raise OptionError(
                f"connector '{connector.name}' needs option '{spec.key}'",
                hint=spec.description or None,
            )
    connector.check(table)
    check_watermark(table)
    return connector


def check_watermark(table: TableDef) -> None:
    """A WATERMARK that cannot run is refused when the table is declared, not at every query that reads it: its
    column is one of the table's, a TIMESTAMP when its type is known, and its delay one Spark can keep."""
    from shell.sql.translate import watermark_delay

    watermark = table.watermark
    if watermark is None:
        return
    column = table.column(watermark.column)
    if column is None:
        raise CatalogError(f"the WATERMARK's column '{watermark.column}' is not a column of table '{table.name}'",
                           hint=suggest(watermark.column, table.column_names()) or None)
    kind = (column.data_type or "").upper()
    if kind and not kind.startswith("TIMESTAMP"):
        raise CatalogError(
            f"the WATERMARK's column '{column.name}' of table '{table.name}' is {column.data_type}, not a time",
            hint="a rowtime column is a TIMESTAMP(3) or TIMESTAMP_LTZ(3): declare one, or compute it "
                 f"(ts AS TO_TIMESTAMP_LTZ({column.name}, 3))")
    if watermark_delay(watermark) is None:
        raise UnsupportedFeatureError(
            f"watermark expression '{watermark.expression}' of table '{table.name}' is not supported",
            hint=f"use WATERMARK FOR {column.name} AS {column.name} - INTERVAL 'n' SECOND (or AS {column.name})")


def _check_value(connector: Connector, spec: OptionSpec, key: str, value: str, written: str) -> None:
    problem = None
    if spec.type == "int":
        if not value.strip().lstrip("-").isdigit():
            problem = "an integer"
    elif spec.type == "float":
        try:
            float(value)
        except ValueError:
            problem = "a number"
    elif spec.type == "bool":
        if value.lower() not in ("true", "false"):
            problem = "true or false"
    elif spec.type == "enum":
        if value not in spec.allowed:
            problem = "one of " + ", ".join(f"'{a}'" for a in spec.allowed)
    elif spec.type == "duration":
        try:
            parse_duration_ms(value)
        except ValueError as exc:
            problem = str(exc)
    if problem:
        shown = _shown(key, value, written, spec.secret)
        raise OptionError(f"option '{key}' of connector '{connector.name}' must be {problem}, got {shown}")


def _shown(key: str, value: str, written: str, secret: bool = False) -> str:
    """How a message shows the value of option `key`: quoted, or '****', or the `${env:...}` it came from."""
    if secret or is_secret_key(key):
        return f"'{REDACTED}'"
    references = ENV_REFERENCE.findall(written)
    if not references:
        return f"'{value}'"
    if ENV_REFERENCE.fullmatch(written):
        return f"the value of {written}"
    return f"'{written}' with " + ", ".join(f"${{env:{name}}}" for name in references) + " substituted"


def _without_hidden_values(exc: OptionError, table: TableDef, written: dict[str, str]) -> OptionError:
    """`exc` with every secret or substituted value in its text shown as `_shown` shows it.

    The checks of connectors and formats quote values (`got '...'`) without knowing where they came from.
    """
    columns = {c.name.lower() for c in table.columns}
    try:
        specs = specs_for(connector_for(table))
    except OptionError:
        specs = COMMON_OPTIONS
    hidden = {}
    for key, value in table.options.items():
        secret = any(s.secret and s.matches(key, columns) for s in specs)
        if value and (value != written.get(key, value) or secret or is_secret_key(key)):
            hidden[value] = _shown(key, value, written.get(key, value), secret)
    for value in sorted(hidden, key=len, reverse=True):
        for name in ("message", "hint"):
            text = getattr(exc, name)
            if text and value in text:
                text = text.replace(f"'{value}'", hidden[value])
                setattr(exc, name, text.replace(value, REDACTED) if len(value) >= 4 else text)
    exc.message = redact_url_passwords(exc.message)
    exc.hint = redact_url_passwords(exc.hint) if exc.hint else exc.hint
    exc.args = (exc.message,)
    return exc


def secret_keys(table: TableDef) -> set[str]:
    """The option keys of `table` whose values must never be shown."""
    try:
        specs = specs_for(connector_for(table))
    except OptionError:
        specs = COMMON_OPTIONS
    columns = {c.name.lower() for c in table.columns}
    return {k for k in table.options if is_secret_key(k) or any(s.secret and s.matches(k, columns) for s in specs)}
