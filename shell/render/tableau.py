"""Flink's `tableau` result mode: boxed rows appended as they arrive, the default when stdout is not a terminal.

Streaming rows cannot be measured before they are printed, so column widths come from the column names and
types (as Flink does), and longer values are cut with `...`. Finished tables (SHOW, DESCRIBE) are measured.
"""

from __future__ import annotations

from typing import Iterable, TextIO

from shell.changes import RowKind
from shell.values import format_value

TYPE_WIDTHS = {"boolean": 5, "tinyint": 4, "smallint": 6, "int": 11, "bigint": 20, "float": 15, "double": 24,
               "date": 10, "timestamp": 23}  # fmt: skip


def column_width(name: str, spark_type: str | None, cap: int) -> int:
    kind, _, size = (spark_type or "").lower().partition("(")
    if kind == "decimal" and size:
        base = int(size.split(",")[0]) + 2  # digits, sign and point
    else:
        base = TYPE_WIDTHS.get(kind, cap)
    return max(len(name), min(base, cap), 2)


def fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 3, 0)] + "..."


class TableauWriter:
    """Writes one boxed table incrementally: `header()`, `row()` any number of times, `footer()`."""

    def __init__(self, out: TextIO, columns: list[str], widths: list[int], with_op: bool):
        self.out = out
        self.columns = (["op"] if with_op else []) + columns
        self.widths = ([2] if with_op else []) + widths
        self.count = 0
        self.with_op = with_op

    def _border(self) -> str:
        return "+" + "+".join("-" * (w + 2) for w in self.widths) + "+"

    def _line(self, cells: list[str]) -> str:
        return "|" + "|".join(f" {fit(c, w):>{w}} " for c, w in zip(cells, self.widths)) + "|"

    def header(self) -> None:
        self.out.write("\n".join([self._border(), self._line(self.columns), self._border()]) + "\n")
        self.out.flush()

    def row(self, values: Iterable, op: str | None = None) -> None:
        cells = ([op or RowKind.INSERT] if self.with_op else []) + [format_value(v) for v in values]
        self.out.write(self._line(cells) + "\n")
        self.count += 1

    def flush(self) -> None:
        self.out.flush()

    def footer(self) -> None:
        if self.count:
            self.out.write(self._border() + "\n")
        rows = f"{self.count} row" + ("" if self.count == 1 else "s")
        self.out.write(f"Received a total of {rows}\n" if self.with_op else f"{rows} in set\n")
        self.out.flush()


def write_table(out: TextIO, columns: list[str], rows: list[tuple], cap: int) -> None:
    """A finished table, with widths measured from its content."""
    texts = [[format_value(v) for v in row] for row in rows]
    widths = [min(max([len(c)] + [len(r[i]) for r in texts]), max(cap, len(c))) for i, c in enumerate(columns)]
    writer = TableauWriter(out, columns, widths, with_op=False)
    if not rows:
        out.write("Empty set\n")
        return
    writer.header()
    for row in rows:
        writer.row(row)
    writer.footer()
