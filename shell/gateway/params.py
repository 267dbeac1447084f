"""The extended protocol's parameters ($1, $2, ...) put into the statement's text as SQL literals.

Why it exists: drivers send values apart from the text (JDBC always, psycopg whenever a query has parameters),
while streamshell's statements are text parsed by its own front end. A value becomes a literal of the kind its
declared type says (a number unquoted, a boolean TRUE/FALSE, anything else a quoted string with its quotes
doubled), and a `$n` inside a string, a quoted name or a comment is left alone.
"""

from __future__ import annotations

import decimal
import math
import re
import struct
from datetime import datetime, timedelta

from shell.gateway import pgtypes
from shell.gateway.protocol import ProtocolError

PLACEHOLDER = re.compile(r"\$(\d+)")


class ParameterError(Exception):
    """A parameter that cannot be used (a number that is not one, a binary value of a type not read). `sqlstate`:
    22P02 (invalid_text_representation) for a value that is not of its declared type, else 22023."""

    def __init__(self, message: str, sqlstate: str = "22023", hint: str | None = None):
        super().__init__(message)
        self.sqlstate = sqlstate
        self.hint = hint

    def about(self, number: int) -> "ParameterError":
        """The same error, naming the parameter ($n) it is about."""
        return ParameterError(f"parameter ${number}: {self}", self.sqlstate, self.hint)


def placeholders(sql: str) -> int:
    """The highest `$n` in the text outside strings, quoted names and comments (0 when there is none)."""
    highest = 0
    for start, end in _code_spans(sql):
        for match in PLACEHOLDER.finditer(sql, start, end):
            highest = max(highest, int(match.group(1)))
    return highest


def substitute(sql: str, values: list[str | None]) -> str:
    """`sql` with each `$n` (outside strings and comments) replaced by the n-th literal of `values`."""
    out, last = [], 0
    for start, end in _code_spans(sql):
        for match in PLACEHOLDER.finditer(sql, start, end):
            number = int(match.group(1))
            if not 1 <= number <= len(values):
                raise ParameterError(f"there is no parameter ${number}: {len(values)} were given")
            out.append(sql[last : match.start()])
            out.append("NULL" if values[number - 1] is None else values[number - 1])
            last = match.end()
    out.append(sql[last:])
    return "".join(out)


def literal(raw: bytes | None, oid: int, binary: bool) -> str | None:
    """One Bind value as a SQL literal (None for NULL)."""
    if raw is None:
        return None
    if binary and oid == pgtypes.BYTEA:
        return f"X'{raw.hex()}'"  # Flink's (and Spark's) binary literal
    if binary:
        value = _from_binary(raw, oid)
    else:
        try:
            value = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("a text parameter is not UTF-8") from None
    if oid in pgtypes.NUMERIC_PARAMETER_TYPES:
        text = str(value).strip()
        try:
            number = decimal.Decimal(text)
        except decimal.InvalidOperation:
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise ParameterError(
                f'invalid input syntax for type {pgtypes.display_name(oid)}: "{shown}"', "22P02",
                hint=f"bind a value of type {pgtypes.display_name(oid)}, or declare the parameter as text and CAST it") from None
        if oid in (pgtypes.FLOAT4, pgtypes.FLOAT8):  # a DOUBLE (or FLOAT) literal: 1.5 alone is a DECIMAL
            return _float_literal(float(number) if number.is_finite() else float(text), oid)
        if number.is_nan() or number.is_infinite():
            raise ParameterError(f'invalid input syntax for type {pgtypes.display_name(oid)}: "{text}"', "22P02")
        return f"({text})" if text.startswith("-") else text  # `1-$1` must not become `1--7`, a comment
    if oid == pgtypes.BOOL:
        return "TRUE" if str(value).lower() in ("t", "true", "1", "y", "yes", "on") else "FALSE"
    return "'" + str(value).replace("'", "''") + "'"


def _float_literal(value: float, oid: int) -> str:
    """`1.5E0` (DOUBLE), `CAST('NaN' AS DOUBLE)`; FLOAT for float4."""
    if math.isnan(value) or math.isinf(value):
        shown = "'NaN'" if math.isnan(value) else ("'Infinity'" if value > 0 else "'-Infinity'")
        literal = f"CAST({shown} AS DOUBLE)"
    else:
        literal = repr(value)
        if "e" not in literal:
            literal += "E0"
        literal = f"({literal})" if literal.startswith("-") else literal
    return literal if oid == pgtypes.FLOAT8 else f"CAST({literal} AS FLOAT)"


EPOCH = datetime(2000, 1, 1)  # PostgreSQL's binary dates and timestamps count from here


def _from_binary(raw: bytes, oid: int) -> object:
    formats = {pgtypes.INT2: "!h", pgtypes.INT4: "!i", pgtypes.INT8: "!q", pgtypes.FLOAT4: "!f", pgtypes.FLOAT8: "!d",
               pgtypes.OID: "!I"}  # fmt: skip
    try:
        if oid in formats:
            return struct.unpack(formats[oid], raw)[0]
        if oid == pgtypes.BOOL:
            return "true" if raw == b"\x01" else "false"
        if oid in (pgtypes.TEXT, pgtypes.VARCHAR, pgtypes.NAME, pgtypes.UNKNOWN, 0):
            return raw.decode("utf-8")
        if oid == pgtypes.DATE:  # days since 2000-01-01
            return (EPOCH.date() + timedelta(days=struct.unpack("!i", raw)[0])).isoformat()
        if oid in (pgtypes.TIMESTAMP, pgtypes.TIMESTAMPTZ):  # microseconds since 2000-01-01 (UTC for TIMESTAMPTZ)
            return (EPOCH + timedelta(microseconds=struct.unpack("!q", raw)[0])).isoformat(sep=" ")
    except (struct.error, UnicodeDecodeError):
        raise ProtocolError(f"a binary parameter of type {pgtypes.TYPE_NAMES.get(oid, oid)} is malformed") from None
    raise ParameterError(f"binary parameters of type {pgtypes.TYPE_NAMES.get(oid, oid)} are not supported; send it as text")


def _code_spans(sql: str):
    """(start, end) of the parts of `sql` that are code: not in '...', "...", `...`, -- or /* */."""
    i, start, n = 0, 0, len(sql)
    while i < n:
        ch = sql[i]
        closing = None
        if ch in "'\"`":
            closing = ch
        elif sql.startswith("--", i):
            closing = "\n"
        elif sql.startswith("/*", i):
            closing = "*/"
        if closing is None:
            i += 1
            continue
        yield start, i
        end = sql.find(closing, i + (2 if closing == "*/" else 1))
        while closing in "'\"`" and end != -1 and sql.startswith(closing * 2, end):  # a doubled quote inside
            end = sql.find(closing, end + 2)
        i = n if end == -1 else end + len(closing)
        start = i
    yield start, n
