"""How a single value is written as text, the same way in every result mode.

Flink's client shows NULL as `<NULL>` and timestamps as `yyyy-MM-dd HH:mm:ss.SSS`; users compare our output with
Flink's, so we match it. JSON output uses `json_value` instead, which keeps numbers and NULL as JSON values.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

NULL_TEXT = "<NULL>"


def format_timestamp(value: dt.datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    return f"{text}.{value.microsecond // 1000:03d}"


def format_value(value: Any) -> str:
    """A value as text for tables and the print sink."""
    if value is None:
        return NULL_TEXT
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return format_timestamp(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return "x'" + bytes(value).hex() + "'"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{format_value(k)}={format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)) and not hasattr(value, "asDict"):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if hasattr(value, "asDict"):  # a nested ROW
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    return str(value)


def json_value(value: Any) -> Any:
    """A value as a JSON-compatible Python value (NULL -> None, timestamps as Flink text)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, decimal.Decimal):
        return float(value) if value == value.to_integral_value() or len(value.as_tuple().digits) < 16 else str(value)
    if isinstance(value, dt.datetime):
        return format_timestamp(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if hasattr(value, "asDict"):
        return {k: json_value(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(json_value(k)): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return str(value)
