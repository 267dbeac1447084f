"""The meta dict of parsed nodes: positions (and flags) that a tree copy copies without deep-copying.

Why it exists: sqlglot deep-copies each node's meta with `copy.deepcopy`, item by item, and the parser puts
a meta dict (line, col, start, end) on every name, literal and function it reads, so that was half the time of
copying a tree, and the planner copies a query's tree a few times. The values in a node's meta are plain
(ints, strings, flags), so a shallow copy is the same copy. Kept out of the compiled modules
(scripts/compile_sql.py): a compiled class cannot subclass dict.
"""

from __future__ import annotations

from typing import Any


class NodeMeta(dict):
    """A node's meta; `copy.deepcopy` makes a shallow copy (its values are plain: never put a mutable value in)."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> NodeMeta:
        return NodeMeta(self)
