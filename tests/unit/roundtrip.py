"""The round-trip check the parser tests share: parse, print in our dialect, parse again, compare."""

from __future__ import annotations

from shell.sql import parse_script
from shell.sql.parse import generate


def assert_roundtrip(sql: str):
    """Parse one statement, print it in our dialect (flat and pretty), parse again: same tree and statement."""
    [first] = parse_script(sql)
    for printed in (generate(first.node), generate(first.node, pretty=True)):
        [second] = parse_script(printed)
        assert second.node == first.node, f"tree changed:\n{sql}\n->\n{printed}"
        assert second == first, f"statement changed:\n{sql}\n->\n{printed}"
    return first
