"""A streamshell error as PostgreSQL's ErrorResponse fields: SQL state, message, hint and position.

Why it exists: drivers act on the SQL state (42601 is the user's typo, 57014 a cancel, 08P01 a broken client),
and psql draws its caret from the position, a 1-based character offset into the query text, where streamshell's
errors carry a line and a column. Messages and hints are redacted as everywhere else (shell/secrets.py).
"""

from __future__ import annotations

import re

from shell import errors
from shell.errors import LINE_BREAK
from shell.secrets import redact

SYNTAX = "42601"
UNDEFINED_TABLE = "42P01"
UNDEFINED_COLUMN = "42703"
UNDEFINED_OBJECT = "42704"
DUPLICATE = "42710"
FEATURE_NOT_SUPPORTED = "0A000"
INVALID_PARAMETER = "22023"
PROGRAM_LIMIT = "54000"
QUERY_CANCELED = "57014"
ADMIN_SHUTDOWN = "57P01"
STATEMENT_TOO_COMPLEX = "54001"
INVALID_TEXT_REPRESENTATION = "22P02"
DIVISION_BY_ZERO = "22012"
PROTOCOL_VIOLATION = "08P01"
INVALID_PASSWORD = "28P01"
IN_FAILED_TRANSACTION = "25P02"
INTERNAL = "XX000"
SYSTEM = "58000"

BY_CLASS: list[tuple[type, str]] = [
    (errors.InputLimitError, PROGRAM_LIMIT),
    (errors.SqlSyntaxError, SYNTAX),
    (errors.UnsupportedFeatureError, FEATURE_NOT_SUPPORTED),
    (errors.OptionError, INVALID_PARAMETER),
    (errors.ExecutionError, SYSTEM),
]


# Failures while a statement ran (ExecutionError) that PostgreSQL has a state of its own for, told by their message
TOO_COMPLEX = re.compile(r"too complex to parse|StackOverflowError")
BAD_TEXT = re.compile(r"cannot be cast to|^CAST of .* failed|CAST_INVALID_INPUT", re.S)
BY_ZERO = re.compile(r"division by zero|divide by zero", re.I)
TOO_COMPLEX_MESSAGE = "statement too complex: Spark ran out of stack reading or planning it"
TOO_COMPLEX_HINT = ("split the expression: compute parts of it in a view or a WITH query, or group parts of a long "
                    "chain in parentheses")
RUNTIME_STATES = ((TOO_COMPLEX, STATEMENT_TOO_COMPLEX), (BAD_TEXT, INVALID_TEXT_REPRESENTATION),
                  (BY_ZERO, DIVISION_BY_ZERO))


def sqlstate_of(exc: errors.StreamshellError) -> str:
    if getattr(exc, "sqlstate", None):  # an error of the gateway's own that knows its state
        return exc.sqlstate
    if isinstance(exc, errors.ExecutionError):
        for pattern, state in RUNTIME_STATES:
            if pattern.search(exc.message):
                return state
    if isinstance(exc, errors.CatalogError):
        text = exc.message.lower()
        if "already exists" in text:
            return DUPLICATE
        if "column" in text:
            return UNDEFINED_COLUMN
        if "table" in text or "view" in text:
            return UNDEFINED_TABLE
        return UNDEFINED_OBJECT
    for kind, state in BY_CLASS:
        if isinstance(exc, kind):
            return state
    return INTERNAL


def offset_of(source: str, line: int, col: int) -> int:
    """The 1-based character offset of (line, col) in `source`, as PostgreSQL's Position field counts."""
    offset = 0
    for number, match in enumerate([*LINE_BREAK.finditer(source), None], start=1):
        if number == line:
            return offset + col
        if match is None:
            break
        offset = match.end()
    return len(source) + 1


def error_fields(exc: errors.StreamshellError, source: str | None = None, severity: str = "ERROR") -> dict[str, str]:
    """The ErrorResponse fields of `exc`. The position is sent only when the error has one of its own (a runtime
    failure, such as a division by zero, has none, so psql draws no caret)."""
    state = sqlstate_of(exc)
    message, hint = exc.message, exc.hint
    if state == STATEMENT_TOO_COMPLEX:  # Spark's parser or planner ran out of stack: not a failure of the system
        message, hint = TOO_COMPLEX_MESSAGE, hint or TOO_COMPLEX_HINT
    fields = {"S": severity, "V": severity, "C": state, "M": redact(message)}
    if hint:
        fields["H"] = redact(hint)
    if source is not None and exc.has_position:
        fields["P"] = str(offset_of(source, exc.line or 1, exc.col or 1))
    return fields


CAST_VALUE = (re.compile(r"The value '(?P<value>.*?)' of the type \"\w+\" cannot be cast to \"(?P<type>\w+)\"", re.S),
              re.compile(r"^CAST of '?(?P<value>.*?)'? to (?P<type>\w+) failed", re.S))


def about_parameter(fields: dict[str, str], parameters: list[str | None]) -> dict[str, str]:
    """A value that could not be read as a number (22P02) that is one of the statement's parameters: the message
    names it ($n) and what was given, in one line."""
    for pattern in CAST_VALUE:
        match = pattern.search(fields.get("M", ""))
        if match is None:
            continue
        for number, value in enumerate(parameters, start=1):
            if value is not None and value == match.group("value"):
                shown = value if len(value) <= 40 else value[:40] + "..."
                kind = match.group("type").lower()
                return {**fields, "M": redact(f'parameter ${number}: invalid input syntax for type {kind}: "{shown}"'),
                        "H": f"bind a value of type {kind} for ${number}, or CAST it in the statement"}
    return fields


def plain_error(state: str, message: str, hint: str | None = None, severity: str = "ERROR") -> dict[str, str]:
    fields = {"S": severity, "V": severity, "C": state, "M": redact(message)}
    if hint:
        fields["H"] = redact(hint)
    return fields


def notice(message: str, severity: str = "NOTICE") -> dict[str, str]:
    return {"S": severity, "V": severity, "C": "00000" if severity != "WARNING" else "01000", "M": redact(message)}
