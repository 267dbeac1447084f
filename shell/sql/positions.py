"""Character offsets to 1-based line/column positions.

Why it exists: tokens and tree nodes carry character offsets; users read `line:col`. One place
converts, counting line breaks exactly as the tokenizer does (CRLF, CR and LF each end a line).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from shell.errors import LINE_BREAK


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
