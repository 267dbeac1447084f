"""Durations as users write them in options and settings ('1 s', '500ms', '5 min', '2 h').

Flink's options take durations in this form; Spark wants either milliseconds or its own interval strings.
One parser keeps both sides consistent.
"""

from __future__ import annotations

import re

_UNITS_MS = {
    "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}  # fmt: skip

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_duration_ms(text: str) -> int:
    """'1 s' -> 1000. A bare number is milliseconds, as in Flink. Raises ValueError naming the accepted form."""
    match = _DURATION.match(text)
    unit = (match.group(2).lower() or "ms") if match else ""
    if not match or unit not in _UNITS_MS:
        raise ValueError("a duration such as '500 ms', '1 s', '5 min' or '2 h'")
    return int(float(match.group(1)) * _UNITS_MS[unit])


def spark_interval(ms: int) -> str:
    """Milliseconds as a Spark interval string ('1500 milliseconds')."""
    return f"{ms} milliseconds"
