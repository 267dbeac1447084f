"""The `table` result mode: a rich Live table of the current result, updated in place as changes arrive.

Why it exists: a continuous query's answer is a table that changes; watching it change is the point of the shell.
The rows come from a `ResultTable` (materialized by the result's key, capped); this view only draws it: the rows
that fit the terminal (newest at the bottom), rows changed in the last moment highlighted, and a status line with
row count, change rate, last update, watermark, late rows and batch duration. The size of the terminal is read at
every redraw, so resizing it mid-query just redraws.

The query's progress is a Spark call, so it is read on a thread of its own, never on the main thread, where Ctrl-C
lands: one landing inside a Py4J call breaks that thread's connection to the JVM (its next call fails), and one
landing inside the finalizer with which Py4J releases a Java object would be dropped by Python, leaving the query
running after Ctrl-C.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime

from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from shell.render.materialize import ResultTable
from shell.results import INSERT, Progress, watermark_text
from shell.values import NULL_TEXT, format_value

HIGHLIGHT_SECONDS = 1.5
NO_DATA_SECONDS = 5.0
PROGRESS_EVERY_SECONDS = 1.0
CHROME_LINES = 7  # borders, header, status line and a spare line, around the rows
NUMERIC_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "long", "short", "byte")


def cell(value, width: int) -> Text:  # noqa: ANN001 - any result value
    """One value as styled text: NULL dimmed, long values cut with an ellipsis."""
    if value is None:
        return Text(NULL_TEXT, style="dim italic")
    text = format_value(value)
    if len(text) > width:
        text = text[: max(width - 1, 1)] + "…"
    return Text(text)


def status_text(table: ResultTable, progress: Progress, shown: int, state: str, notes: list[str] = ()) -> Text:
    """The line under the rows. `notes` (ChangeStream.notes: a batch shown in part, bad records not kept) come
    last, in the warning colour."""
    parts = [f"{len(table)} row" + ("" if len(table) == 1 else "s")]
    if shown < len(table):
        parts[0] += f" (last {shown} shown)"
    if table.dropped:
        parts.append(f"{table.dropped} dropped by the row cap")
    parts.append(f"{table.changes_per_second():.1f} changes/s")
    if progress.batch_id >= 0:  # what the query reads, beside what the result shows: a filter that drops every row
        parts.append(f"input {progress.input_rows_per_second:.1f} rows/s")
    if table.last_update is not None:
        parts.append("last update " + datetime.fromtimestamp(table.last_update).strftime("%H:%M:%S"))
    watermark = watermark_text(progress.watermark)  # already text from Spark's report; a Progress made by hand too
    if watermark:
        parts.append(f"watermark {watermark}")
    if progress.late_rows:
        parts.append(f"late rows {progress.late_rows} in the last batch")
    if progress.batch_id >= 0:
        parts.append(f"batch {progress.batch_duration_ms} ms")
    line = Text(" · ".join(parts), style="dim")
    line.append("  ")
    line.append(state, style="bold" if state != "running" else "dim")
    for note in notes:
        line.append(" · ", style="dim")
        line.append(note, style="yellow")
    return line


class ProgressPoller:
    """Reads a stream's progress every `every` seconds on its own thread; `latest` is the last one read."""

    def __init__(self, stream, every: float = PROGRESS_EVERY_SECONDS):  # noqa: ANN001 - a ChangeStream
        self.stream = stream
        self.every = every
        self.latest = Progress()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="streamshell-progress", daemon=True)

    def start(self) -> "ProgressPoller":
        self._thread.start()
        return self

    def stop(self, wait: float = 2.0) -> Progress:
        """Stop polling after one last read (the progress of the batch the query ended on); the last one read."""
        self._stopping.set()
        self._thread.join(wait)
        return self.latest

    def _run(self) -> None:
        while True:
            last = self._stopping.is_set()
            try:
                self.latest = self.stream.progress()
            except Exception:  # noqa: BLE001 - progress is decoration; the query may be stopping
                pass
            if last:
                return
            self._stopping.wait(self.every)


class LiveTableView:
    """Draws a materialized result while the stream runs; `changes(stream)` returns when the stream ends."""

    def __init__(self, console: Console, table: ResultTable, max_column_width: int = 40):
        self.console = console
        self.table = table
        self.max_column_width = max_column_width
        self.types: list[str] = []
        self.progress = Progress()
        self.notes: dict[str, str] = {}  # the stream's notes (ChangeStream.notes), shown on the status line

    def render(self, state: str = "running") -> Group:
        height = self.console.size.height
        visible = max(3, height - CHROME_LINES)
        entries = self.table.entries()
        shown = entries[-visible:]
        now = self.table.clock()
        grid = Table(box=box.SIMPLE_HEAD, header_style="bold", show_edge=False, pad_edge=False)
        for i, name in enumerate(self.table.columns):
            numeric = i < len(self.types) and self.types[i].split("(")[0].lower() in NUMERIC_TYPES
            grid.add_column(
                name, justify="right" if numeric else "left", no_wrap=True, overflow="ellipsis",
                max_width=max(self.max_column_width, len(name)),
            )
        for entry in shown:
            fresh = now - entry.changed_at < HIGHLIGHT_SECONDS
            style = ("bold green" if entry.op == INSERT else "bold yellow") if fresh else None
            grid.add_row(*(cell(v, self.max_column_width) for v in entry.row), style=style)
        if state == "running" and self.table.changes == 0 and self.table.age() > NO_DATA_SECONDS:
            state = "running · no data yet (Ctrl-C stops)"
        return Group(grid, status_text(self.table, self.progress, len(shown), state, list(self.notes.values())))

    def changes(self, stream) -> None:  # noqa: ANN001 - a MaterializingStream over self.table
        """Consume `stream` (whose batches are applied to self.table) and keep the view current."""
        self.types = list(getattr(stream, "types", []) or [])
        notes = getattr(stream, "notes", None)
        self.notes = notes if isinstance(notes, dict) else {}  # the stream's own dict: later notes show too
        state = "cancelled"
        with Live(
            self.render(), console=self.console, auto_refresh=False, transient=False,
            redirect_stdout=True, redirect_stderr=True, vertical_overflow="crop",
        ) as live:
            last_draw = 0.0
            poller = ProgressPoller(stream).start()
            try:
                for batch in stream.batches():
                    self.progress = poller.latest
                    now = time.monotonic()
                    if batch or now - last_draw >= 0.5:
                        live.update(self.render(), refresh=True)
                        last_draw = now
                state = "stopped" if getattr(stream, "stopped_early", False) else "finished"
            except Exception:
                state = "failed"
                raise
            finally:
                self.progress = poller.stop()
                live.update(self.render(state), refresh=True)
