"""Character offsets to 1-based line/column positions.

Why it exists: tokens and tree nodes carry character offsets; users read `line:col`. One place
converts, counting line breaks exactly as the tokenizer does (CRLF, CR and LF each end a line),
and reads the position of a name in a parsed tree (so "unknown column" points at the column).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TypeVar

from sqlglot import exp

from shell.errors import LINE_BREAK, StreamshellError

E = TypeVar("E", bound=exp.Expr)


@dataclass(frozen=True)
class Position:
    """1-based line and column of an offset, and the text of that line (without its break)."""

    line: int
    col: int
    line_text: str


class LineIndex:
    """Offsets of line starts in one text, for O(log n) lookups."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]

    def line_of(self, offset: int) -> int:
        """0-based line index containing `offset` (clamped into the text)."""
        return bisect.bisect_right(self.starts, max(offset, 0)) - 1

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of `offset` (clamped into the text), without the line's text."""
        offset = min(max(offset, 0), len(self.text))
        index = self.line_of(offset)
        return index + 1, offset - self.starts[index] + 1

    def locate(self, offset: int) -> Position:
        offset = min(max(offset, 0), len(self.text))
        index = self.line_of(offset)
        start = self.starts[index]
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.text)
        line_text = LINE_BREAK.split(self.text[start:end], maxsplit=1)[0]
        return Position(line=index + 1, col=offset - start + 1, line_text=line_text)


def locate(text: str, offset: int) -> Position:
    """Position of `offset` in `text` (one-off; build a LineIndex for many lookups)."""
    return LineIndex(text).locate(offset)


# --- positions of names in trees ---------------------------------------------------------------------------------
# sqlglot puts `line`, `col` (of the last character), `start` and `end` on the identifiers and literals it parses;
# parse.py makes line/col whole-source for the statements a user runs and removes them from trees parsed from
# other texts (forget_positions), so a position found on a node is always one in the user's text.

_POSITION_KEYS = ("line", "col", "start", "end")


def forget_positions(tree: E) -> E:
    """`tree` without the positions of its nodes (a tree parsed from a text other than the one being run)."""
    for node in tree.walk():
        meta = node._meta
        if meta is not None and "line" in meta:
            for key in _POSITION_KEYS:
                meta.pop(key, None)
    return tree


def name_position(node: exp.Expr | None) -> tuple[int, int, int] | None:
    """Whole-source (line, column, length) of the name `node` is (an Identifier, or the name of a Column or
    Table: for `t.x` the column `x`), or None when it carries no position."""
    if isinstance(node, (exp.Column, exp.Table)):
        node = node.this
    meta = node._meta if isinstance(node, exp.Expr) else None
    if not meta or "line" not in meta or "start" not in meta:
        return None
    length = meta["end"] - meta["start"] + 1
    col = meta["col"] - length + 1  # sqlglot's col is the column of the name's last character
    if col < 1:
        return None  # a quoted name broken over lines: no single column to point at
    return meta["line"], col, length


def at_name(error: StreamshellError, node: exp.Expr | None) -> StreamshellError:
    """`error` pointed at the name `node` (see name_position), unless it already has a position or the node has
    none; returns the error. Its source line is filled in by whoever knows the whole text (`with_source`)."""
    if error.has_position:
        return error
    found = name_position(node)
    if found is not None:
        error.line, error.col, error.length = found
    return error


def at_first_name(error: StreamshellError, tree: exp.Expr | None) -> StreamshellError:
    """`error` pointed at the first name or literal in `tree` that has a position (`x` of `x NOT IN (..)`, the first
    key of an ORDER BY), unless it already has a position or none has one."""
    if error.has_position or tree is None:
        return error
    for node in tree.walk(bfs=False):  # in the order they are written
        if isinstance(node, (exp.Identifier, exp.Literal)) and name_position(node) is not None:
            return at_name(error, node)
    return error


def at_named_object(error: StreamshellError, tree: exp.Expr | None) -> StreamshellError:
    """`error` pointed at the first name in `tree` that its message quotes (`unknown table 'ordrs'`), for the
    session's errors about a statement's tables, views and jobs; unchanged when it has a position or none fits."""
    if error.has_position or tree is None:
        return error
    import re

    quoted = re.search(r"'([^']+)'", error.message)
    if quoted is None:
        return error
    wanted = quoted.group(1).lower()
    for node in tree.walk():
        if isinstance(node, (exp.Table, exp.Identifier)) and node.name.lower() == wanted:
            return at_name(error, node)
    return error


def at_option(error: StreamshellError, tree: exp.Expr | None) -> StreamshellError:
    """`error` pointed at the WITH option its message is about (`'key' = 'value'`, or the key when the value is on
    another line): the first option whose key the message quotes, else one whose key it names and whose value it
    quotes (`scan.startup.mode 'group-offsets' is not supported`); unchanged when it has a position or none fits."""
    if error.has_position or tree is None:
        return error
    import re

    from shell.sql.nodes import TableOption

    options = [node for node in tree.walk() if isinstance(node, TableOption)]
    quoted = re.findall(r"'([^']+)'", error.message)
    chosen = next((o for word in quoted for o in options if o.this.name == word), None)
    if chosen is None:
        chosen = next((o for o in options if o.this.name in error.message and o.expression is not None
                       and o.expression.name in quoted), None)
    if chosen is None:
        return error
    key = name_position(chosen.this)
    if key is None:
        return error
    error.line, error.col, error.length = key
    value = name_position(chosen.expression) if chosen.expression is not None else None
    if value is not None and value[0] == key[0]:
        error.length = value[1] + value[2] - key[1]
    return error
