"""The table of formats by name, and how a table's WITH options select a format and its options.

Why it exists: connectors must not know formats. A table names its formats with Flink's keys and this module
finds them and their options, validated against each format's declaration (OptionSpec, as for connectors):

    'format' = 'json'         with  'json.<option>'                        (value; connectors with one format)
    'value.format' = 'json'   with  'value.json.<option>', or 'json.<option>' as Flink also accepts
    'key.format' = 'raw'      with  'key.raw.<option>'

Adding a format is adding one entry to FORMATS; nothing else branches on format names.
"""

from __future__ import annotations

from typing import Callable

from shell.errors import OptionError
from shell.formats.avro import AvroFormat
from shell.formats.base import Format, unescape
from shell.formats.csv import CsvFormat
from shell.formats.debezium import DebeziumJsonFormat
from shell.formats.json import JsonFormat
from shell.formats.raw import RawFormat
from shell.options import OptionSpec
from shell.sql.hints import suggest
from shell.units import parse_duration_ms

FORMATS: dict[str, Format] = {
    f.name: f for f in (JsonFormat(), RawFormat(), CsvFormat(), DebeziumJsonFormat(), AvroFormat())
}

# Role -> the option keys that name its format, and for each the prefixes of that format's options
# ('{}' is the format name), most specific first.
ROLES: dict[str, dict[str, tuple[str, ...]]] = {
    "value": {"value.format": ("value.{}.", "{}."), "format": ("{}.",)},
    "key": {"key.format": ("key.{}.",)},
}


def format_for(name: str) -> Format:
    """The format called `name`; OptionError with a did-you-mean otherwise."""
    fmt = FORMATS.get(name)
    if fmt is None:
        hint = suggest(name, list(FORMATS))
        available = "available formats: " + ", ".join(sorted(FORMATS))
        raise OptionError(f"unknown format '{name}'", hint=f"{hint} ({available})" if hint else available)
    return fmt


def _role_key(table_options: dict[str, str], role: str) -> str | None:
    """Which option names the role's format ('value.format' or 'format' for values), or None."""
    if role not in ROLES:
        raise ValueError(f"unknown format role {role!r}")
    present = [k for k in ROLES[role] if k in table_options]
    if len(present) > 1:
        raise OptionError(
            f"options {' and '.join(repr(k) for k in present)} both set the {role} format",
            hint=f"keep only '{present[0]}'",
        )
    return present[0] if present else None


def _prefixes(role: str, key: str, name: str) -> tuple[str, ...]:
    return tuple(p.format(name) for p in ROLES[role][key])


def _owned(table_options: dict[str, str], prefixes: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """stripped key -> (table key, value) for the options under `prefixes`; the most specific prefix wins,
    and the same option given twice with different values is an error."""
    found: dict[str, tuple[str, str]] = {}
    for prefix in prefixes:
        for key, value in table_options.items():
            if not key.startswith(prefix) or len(key) == len(prefix):
                continue
            stripped = key[len(prefix) :]
            if stripped in found and found[stripped][1] != value:
                raise OptionError(
                    f"options '{found[stripped][0]}' and '{key}' conflict",
                    hint=f"keep only '{found[stripped][0]}'",
                )
            found.setdefault(stripped, (key, value))
    return found


def format_options(table_options: dict[str, str], role: str) -> tuple[Format, dict[str, str]] | None:
    """The role's ('value' or 'key') format and its options (prefix stripped, validated), or None.

    Only options the table gives are returned; formats apply their declared defaults themselves. Enum values
    are returned in their declared spelling ('iso-8601' -> 'ISO-8601').
    """
    key = _role_key(table_options, role)
    if key is None:
        return None
    fmt = format_for(table_options[key])
    if role == "key" and fmt.produces_changelog:
        raise OptionError(
            f"format '{fmt.name}' cannot be a key format", hint="a key format must be insert-only: use 'raw' or 'json'"
        )
    options = {}
    for stripped, (table_key, value) in _owned(table_options, _prefixes(role, key, fmt.name)).items():
        spec = _spec(fmt, stripped, table_key, table_key[: len(table_key) - len(stripped)])
        options[stripped] = _checked_value(fmt, spec, table_key, value)
    fmt.check_options(options)
    return fmt, options


def format_option_keys(table_options: dict[str, str]) -> set[str]:
    """The keys of `table_options` that belong to formats (their names and options), for the connector's
    validator to accept. Options of a format the table does not use are not included."""
    keys: set[str] = set()
    for role, role_keys in ROLES.items():
        for key in role_keys:
            if key not in table_options:
                continue
            keys.add(key)
            prefixes = _prefixes(role, key, table_options[key])
            keys.update(k for k in table_options if any(k.startswith(p) and len(k) > len(p) for p in prefixes))
    return keys


def _spec(fmt: Format, stripped: str, table_key: str, prefix: str) -> OptionSpec:
    spec = next((s for s in fmt.options if s.matches(stripped, set())), None)
    if spec is None:
        names = [prefix + s.key for s in fmt.options]
        hint = suggest(table_key, names)
        listed = "supported options: " + ", ".join(names)
        raise OptionError(
            f"unsupported option '{table_key}' for format '{fmt.name}'",
            hint=f"{hint} ({listed})" if hint else listed,
        )
    return spec


# ---- option values by declared type: None when fine, else what the value must be ------------------------------


def _is_int(spec: OptionSpec, value: str) -> str | None:
    return None if value.strip().lstrip("-").isdigit() else "an integer"


def _is_bool(spec: OptionSpec, value: str) -> str | None:
    return None if value.strip().lower() in ("true", "false") else "true or false"


def _is_enum(spec: OptionSpec, value: str) -> str | None:
    if any(value.strip().lower() == a.lower() for a in spec.allowed):
        return None
    return "one of " + ", ".join(f"'{a}'" for a in spec.allowed)


def _is_char(spec: OptionSpec, value: str) -> str | None:
    return None if len(unescape(value)) == 1 else "a single character"


def _is_duration(spec: OptionSpec, value: str) -> str | None:
    try:
        parse_duration_ms(value)
    except ValueError as exc:
        return str(exc)
    return None


VALUE_CHECKS: dict[str, Callable[[OptionSpec, str], str | None]] = {
    "int": _is_int,
    "bool": _is_bool,
    "enum": _is_enum,
    "char": _is_char,
    "duration": _is_duration,
}


def _checked_value(fmt: Format, spec: OptionSpec, table_key: str, value: str) -> str:
    check = VALUE_CHECKS.get(spec.type)
    problem = check(spec, value) if check else None
    if problem:
        raise OptionError(f"option '{table_key}' of format '{fmt.name}' must be {problem}, got '{value}'")
    if spec.type == "enum":
        return next(a for a in spec.allowed if a.lower() == value.strip().lower())
    return value
