"""Finished results and errors as the interactive shell shows them: coloured, measured, never a traceback.

Why it exists: script mode prints plain text for pipes (printers.py); on a terminal the same results read better
with colour: `[INFO]` messages, tables of SHOW/DESCRIBE/SET drawn by rich with NULL dimmed, and errors as
`line:col: message`, the faulty line and a caret, and the hint, each part in its own colour.
"""

from __future__ import annotations

from decimal import Decimal

from rich import box
from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from shell.errors import StreamshellError
from shell.results import Message, Rows
from shell.secrets import redact
from shell.values import NULL_TEXT, format_value


SHORT_COLUMN = 24
COLUMN_GAP = 3  # what a table puts between two columns: a space, the (blank) divider, a space


def _cell(value: object, text: str) -> Text:
    return Text(text, style="dim italic") if value is None else Text(text)


class ShellConsole(Console):
    """rich's console, except that a closed pipe (`| head`) raises BrokenPipeError for the shell to handle
    (rich would exit the process on its own, skipping the shell's clean-up)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError()


def make_console(**kwargs) -> Console:  # noqa: ANN003
    """A console on the current sys.stdout (looked up at each write, so prompt-toolkit's patching works)."""
    return ShellConsole(highlight=False, emoji=False, markup=False, **kwargs)


class TerminalRenderer:
    def __init__(self, console: Console, max_column_width: int = 40):
        self.console = console
        self.max_column_width = max_column_width

    def message(self, message: Message) -> None:
        warning = message.level == "warning"
        line = Text("[WARNING] " if warning else "[INFO] ", style="bold yellow" if warning else "bold blue")
        line.append(message.text)
        self.console.print(line)

    def text(self, text: str, renderable=None) -> None:  # noqa: ANN001 - optional rich renderable of the same text
        self.console.print(renderable if renderable is not None else Text(text.rstrip("\n")), soft_wrap=True)

    def rows(self, rows: Rows) -> None:
        if not rows.rows:
            self.console.print(Text("Empty set", style="dim"))
            return
        texts = [[NULL_TEXT if v is None else format_value(v) for v in row] for row in rows.rows]
        # Short columns keep their width; the long ones (paths, expressions) fold when space runs out.
        widths = [min(max([len(name)] + [len(r[i]) for r in texts if i < len(r)]), SHORT_COLUMN)
                  for i, name in enumerate(rows.columns)]  # fmt: skip
        if sum(widths) + COLUMN_GAP * (len(widths) - 1) > self.console.width:
            self._vertical(rows, texts)  # a table this wide would lose its last columns at the terminal's edge
        else:
            self._table(rows, texts, widths)
        count = len(rows.rows)
        self.console.print(Text(f"{count} row{'' if count == 1 else 's'} in set", style="dim"))

    def _table(self, rows: Rows, texts: list[list[str]], widths: list[int]) -> None:
        table = Table(box=box.SIMPLE_HEAD, header_style="bold", show_edge=False, pad_edge=False)
        for i, (name, width) in enumerate(zip(rows.columns, widths)):
            numeric = all(isinstance(r[i], (int, float, Decimal)) and not isinstance(r[i], bool)
                          for r in rows.rows if i < len(r) and r[i] is not None)
            table.add_column(name, overflow="fold", min_width=width, justify="right" if numeric else "left")
        for row, text_row in zip(rows.rows, texts):
            table.add_row(*(_cell(v, t) for v, t in zip(row, text_row)))
        self.console.print(table)

    def _vertical(self, rows: Rows, texts: list[list[str]]) -> None:
        """One block per row, a `column: value` line per column (psql's `\\x`): every column stays visible."""
        for number, (row, text_row) in enumerate(zip(rows.rows, texts), start=1):
            self.console.print(Rule(Text(f"row {number}", style="bold"), align="left", style="dim"))
            block = Table.grid(padding=(0, 2))
            block.add_column(style="bold", no_wrap=True)
            block.add_column(overflow="fold")
            for name, value, text in zip(rows.columns, row, text_row):
                block.add_row(f"{name}:", _cell(value, text))
            self.console.print(block)

    def error(self, exc: StreamshellError, source_name: str | None = None) -> None:
        """`exc.render()`, line by line: the head in red, the caret under the fault, the hint."""
        lines = exc.render(source_name).split("\n")
        has_caret = exc.has_position and exc.source_line is not None
        for i, line in enumerate(lines):
            if i == 0:
                style = "bold red"
            elif has_caret and i == 2:
                style = "bold red"
            elif line.startswith("hint: "):
                style = "yellow"
            else:
                style = None
            self.console.print(Text(line, style=style), soft_wrap=True)

    def internal(self, exc: BaseException) -> None:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        text = f"internal error: {type(exc).__name__}" + (f": {redact(detail)}" if detail else "")
        self.console.print(Text(text, style="bold red"), soft_wrap=True)

    def note(self, text: str, style: str = "dim") -> None:
        self.console.print(Text(text, style=style), soft_wrap=True)
