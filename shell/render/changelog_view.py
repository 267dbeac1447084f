"""The `changelog` result mode on a terminal: one line per change, its op coloured, columns aligned.

Why it exists: the plain changelog printer (`+I[1, a]`) is made for pipes and diffs; on a terminal the same
information reads better in columns under a header, with inserts, retractions and updates told apart by colour.
Column widths come from names and types (rows cannot be measured before they are printed), as in tableau.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from shell.render.tableau import column_width
from shell.results import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from shell.values import NULL_TEXT, format_value

OP_STYLES = {INSERT: "green", UPDATE_AFTER: "yellow", UPDATE_BEFORE: "red dim", DELETE: "red"}


class ChangelogView:
    def __init__(self, console: Console, max_column_width: int = 40):
        self.console = console
        self.max_column_width = max_column_width

    def _line(self, op: str, values: list, widths: list[int], header: bool = False) -> Text:
        line = Text()
        line.append(f"{op:<2}", style="bold" if header else OP_STYLES.get(op, ""))
        for value, width in zip(values, widths):
            line.append(" │ ", style="dim")
            if header:
                line.append(f"{value:<{width}}"[:width], style="bold")
                continue
            text = NULL_TEXT if value is None else format_value(value)
            if len(text) > width:
                text = text[: width - 1] + "…"
            line.append(f"{text:<{width}}", style="dim italic" if value is None else None)
        return line

    def changes(self, stream) -> None:  # noqa: ANN001 - a ChangeStream or a view of one
        types = list(stream.types or []) or [None] * len(stream.columns)
        widths = [column_width(c, t, self.max_column_width) for c, t in zip(stream.columns, types)]
        self.console.print(self._line("op", stream.columns, widths, header=True), soft_wrap=True)
        count = 0
        seen = 0
        new_notes = getattr(stream, "new_notes", None)

        def show_notes() -> None:  # a batch shown in part, bad records not kept: once each, after its rows
            nonlocal seen
            if new_notes is not None:
                notes, seen = new_notes(seen)
                for note in notes:
                    self.console.print(Text(note, style="yellow"), soft_wrap=True)

        try:
            for batch in stream.batches():
                for change in batch or ():
                    self.console.print(self._line(change.op, list(change.row), widths), soft_wrap=True)
                    count += 1
                show_notes()
        finally:
            show_notes()
        self.console.print(Text(f"Received a total of {count} change" + ("" if count == 1 else "s"), style="dim"))
