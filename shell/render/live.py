"""The `table` result mode: a rich Live table of the current result, updated in place as changes arrive, and
navigable with keys while it runs.

Why it exists: a continuous query's answer is a table that changes; watching it change is the point of the shell.
The rows come from a `ResultTable` (materialized by the result's key, capped); this view only draws it: the rows
that fit the terminal (newest at the bottom while following), rows changed in the last moment highlighted, and a
status line with where the user is, row count, change rate, last update, watermark, late rows (over the whole
query and in the last batch) and batch duration. The size of the terminal is read at every redraw, so resizing it
mid-query just redraws. Only the rows on the screen are drawn: nothing per row of the result runs in Python at a
redraw.

On a terminal, keys (shell/render/keys.py, read between redraws without waiting) move through the result: Page Up
pauses the view and pages back, `/` searches, `o` opens a row, End follows the newest rows again, `q` stops the
query. What each key does is decided by shell/render/navigation.py, which knows nothing of terminals; this module
only asks it which rows to draw. A query that ends while the user is reading, or whose result does not fit the
screen, stays on screen to be read until `q` (as a pager does); one that fits ends the view at once, as before.

The query's progress is a Spark call, so it is read on a thread of its own, never on the main thread, where Ctrl-C
lands: one landing inside a Py4J call breaks that thread's connection to the JVM (its next call fails), and one
landing inside the finalizer with which Py4J releases a Java object would be dropped by Python, leaving the query
running after Ctrl-C. Keys never call Spark either: `q` ends the view, and the caller stops the query off the main
thread, as it does after Ctrl-C.
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
from shell.render.navigation import Action, Frame, Navigation, find_row
from shell.results import INSERT, Progress, watermark_text
from shell.values import NULL_TEXT, format_value

HIGHLIGHT_SECONDS = 1.5
NO_DATA_SECONDS = 5.0
PROGRESS_EVERY_SECONDS = 1.0
REDRAW_EVERY_SECONDS = 0.5
POLL_SECONDS = 0.2  # the longest the view waits for a batch before it redraws or looks at the keys
KEYS_POLL_SECONDS = 0.1  # the same while keys are read, so a key is answered within it
HEADER_LINES = 2  # the column names and the rule under them
SPARE_LINES = 1  # the line the cursor rests on
NUMERIC_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "long", "short", "byte")
BROWSING = "finished · q returns to the prompt"


def cell(value, width: int) -> Text:  # noqa: ANN001 - any result value
    """One value as styled text: NULL dimmed, long values cut with an ellipsis."""
    if value is None:
        return Text(NULL_TEXT, style="dim italic")
    text = format_value(value)
    if len(text) > width:
        text = text[: max(width - 1, 1)] + "…"
    return Text(text)


class LateRowTally:
    """Late rows over the whole query. Spark reports the rows dropped behind the watermark per micro-batch, and
    the same report may be read more than once: each batch id counts once (batch ids only grow)."""

    def __init__(self) -> None:
        self.total = 0
        self.last_batch = -1

    def add(self, progress: Progress) -> int:
        """Count `progress`'s batch if it is a new one; the total so far."""
        if progress.batch_id > self.last_batch:
            self.total += progress.late_rows
            self.last_batch = progress.batch_id
        return self.total


def status_text(
    table: ResultTable,
    progress: Progress,
    position: str,
    state: str,
    notes: list[str] = (),
    late_total: int = 0,
    prompt: str = "",
) -> Text:
    """The line under the rows. `position` says where the user is (Navigation.position); `prompt` (a search being
    typed, what a search found) comes first, in bold; `notes` (ChangeStream.notes: a batch shown in part, bad
    records not kept) come last, in the warning colour."""
    parts = [position]
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
    late = max(late_total, progress.late_rows)
    if late:
        parts.append(f"late rows {late} ({progress.late_rows} in the last batch)")
    if progress.batch_id >= 0:
        parts.append(f"batch {progress.batch_duration_ms} ms")
    line = Text()
    if prompt:
        line.append(prompt, style="bold")
        line.append(" · ", style="dim")
    line.append(" · ".join(parts), style="dim")
    line.append("  ")
    line.append(state, style="bold" if state != "running" else "dim")
    for note in notes:
        line.append(" · ", style="dim")
        line.append(note, style="yellow")
    return line


class ProgressPoller:
    """Reads a stream's progress every `every` seconds on its own thread; `latest` is the last one read and
    `late_rows` the late rows of every batch read so far."""

    def __init__(self, stream, every: float = PROGRESS_EVERY_SECONDS):  # noqa: ANN001 - a ChangeStream
        self.stream = stream
        self.every = every
        self.reading = (Progress(), 0)  # (the last progress, the late rows so far): replaced whole, never torn
        self._tally = LateRowTally()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="streamshell-progress", daemon=True)

    @property
    def latest(self) -> Progress:
        return self.reading[0]

    @property
    def late_rows(self) -> int:
        return self.reading[1]

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
                progress = self.stream.progress()
                self.reading = (progress, self._tally.add(progress))
            except Exception:  # noqa: BLE001 - progress is decoration; the query may be stopping
                pass
            if last:
                return
            self._stopping.wait(self.every)


class LiveTableView:
    """Draws a materialized result while the stream runs; `changes(stream, keys)` returns when the stream ends, or
    when `q` is pressed (`stopped_by_key`)."""

    def __init__(self, console: Console, table: ResultTable, max_column_width: int = 40):
        self.console = console
        self.table = table
        self.max_column_width = max_column_width
        self.types: list[str] = []
        self.progress = Progress()
        self.late_rows = 0  # over the whole query (ProgressPoller.late_rows)
        self.notes: dict[str, str] = {}  # the stream's notes (ChangeStream.notes), shown on the status line
        self.navigation = Navigation()
        self.keys_read = False  # keys are read: the status line gives hints
        self.stopped_by_key = False
        self._dropped = table.dropped
        self._page = max(3, console.size.height - HEADER_LINES - 1 - SPARE_LINES)  # rows that fit; set by render
        self._fields = 1  # columns of an open row that fit; set by render

    # drawing ----------------------------------------------------------------------------------------------------

    def render(self, state: str = "running") -> Group:
        self._follow_the_cap()
        if state == "running" and self.table.changes == 0 and self.table.age() > NO_DATA_SECONDS:
            state = "running · no data yet (" + ("q or " if self.keys_read else "") + "Ctrl-C stops)"
        if self.navigation.opened and len(self.table):
            return self._render_row(state)
        height = self.console.size.height
        rows = len(self.table)
        page = max(3, height - HEADER_LINES - 1 - SPARE_LINES)
        status = self._status(state, self.navigation.position(rows, page, self.keys_read))
        page = max(3, height - HEADER_LINES - self._lines(status) - SPARE_LINES)  # a long status line wraps
        status = self._status(state, self.navigation.position(rows, page, self.keys_read))
        self._page = page
        start, stop = self.navigation.window(rows, page)
        shown = self.table.window(start, stop)
        selected = None if self.navigation.follow else self.navigation.selected - start
        now = self.table.clock()
        grid = Table(box=box.SIMPLE_HEAD, header_style="bold", show_edge=False, pad_edge=False)
        for i, name in enumerate(self.table.columns):
            numeric = i < len(self.types) and self.types[i].split("(")[0].lower() in NUMERIC_TYPES
            grid.add_column(
                name, justify="right" if numeric else "left", no_wrap=True, overflow="ellipsis",
                max_width=max(self.max_column_width, len(name)),
            )
        for i, entry in enumerate(shown):
            fresh = now - entry.changed_at < HIGHLIGHT_SECONDS
            style = ("bold green" if entry.op == INSERT else "bold yellow") if fresh else None
            if i == selected:
                style = f"{style} reverse" if style else "reverse"
            grid.add_row(*(cell(v, self.max_column_width) for v in entry.row), style=style)
        return Group(grid, status)

    def _render_row(self, state: str) -> Group:
        """The selected row, one `column: value` line per column (long values fold), as many as fit."""
        width, height = self.console.size
        rows = len(self.table)
        self.navigation.window(rows, self._page)  # keeps the selected row inside the result
        index = self.navigation.selected
        [entry] = self.table.window(index, index + 1)
        columns = self.table.columns
        texts = [format_value(v) for v in entry.row]
        name_width = max((len(c) for c in columns), default=0) + 1
        value_width = max(10, width - name_width - 2)
        position = self.navigation.position(rows, self._page, self.keys_read)
        status = self._status(state, position)
        room = max(1, height - 1 - self._lines(status) - SPARE_LINES)
        first = min(self.navigation.field_top, max(0, len(columns) - 1))
        last = first
        used = 0
        while last < len(columns):
            need = sum(max(1, -(-len(part) // value_width)) for part in texts[last].split("\n"))
            if used + need > room and last > first:
                break
            used += need
            last += 1
        self._fields = last - first
        if first > 0 or last < len(columns):
            position += f" · columns {first + 1}-{last} of {len(columns)} (PgUp/PgDn)"
            status = self._status(state, position)
        title = Text(f"row {index + 1} of {rows}", style="bold")
        block = Table.grid(padding=(0, 2))
        block.add_column(style="bold", no_wrap=True)
        block.add_column(overflow="fold", max_width=value_width)
        for name, value, text in zip(columns[first:last], entry.row[first:last], texts[first:last]):
            block.add_row(f"{name}:", Text(text, style="dim italic") if value is None else Text(text))
        return Group(title, block, status)

    def _status(self, state: str, position: str) -> Text:
        return status_text(self.table, self.progress, position, state, list(self.notes.values()), self.late_rows,
                           self.navigation.prompt())  # fmt: skip

    def _lines(self, text: Text) -> int:
        return len(text.wrap(self.console, max(1, self.console.size.width)))

    def _follow_the_cap(self) -> None:
        """Rows the cap dropped since the last look: a paused view keeps showing the same rows."""
        dropped = self.table.dropped - self._dropped
        if dropped:
            self.navigation.rows_dropped(dropped)
            self._dropped = self.table.dropped

    # keys -------------------------------------------------------------------------------------------------------

    def press(self, keys: list[str]) -> Action:
        """Hand typed keys to the navigation; REDRAW when the screen must change, QUIT for `q`."""
        result = Action.NOTHING
        for key in keys:
            self._follow_the_cap()
            frame = Frame(len(self.table), self._page, len(self.table.columns), self._fields)
            action = self.navigation.press(key, frame, self._find)
            if action is Action.QUIT:
                return action
            if action is Action.REDRAW:
                result = action
                if self.navigation.opened:
                    self.render()  # the open row's columns that fit, for the next key's paging
        return result

    def _find(self, text: str, start: int, forward: bool) -> int | None:
        return find_row(self.table.rows(), text, start, forward)

    # the loop ---------------------------------------------------------------------------------------------------

    def changes(self, stream, keys=None) -> None:  # noqa: ANN001 - a MaterializingStream over self.table, a KeyReader
        """Consume `stream` (whose batches are applied to self.table) and keep the view current; with `keys` (a
        shell.render.keys.KeyReader), answer the keys typed meanwhile."""
        self.types = list(getattr(stream, "types", []) or [])
        notes = getattr(stream, "notes", None)
        self.notes = notes if isinstance(notes, dict) else {}  # the stream's own dict: later notes show too
        self.keys_read = keys is not None
        state = "cancelled"
        with Live(
            self.render(), console=self.console, auto_refresh=False, transient=False,
            redirect_stdout=True, redirect_stderr=True, vertical_overflow="crop",
        ) as live:
            last_draw = 0.0
            poller = ProgressPoller(stream).start()
            try:
                for batch in stream.batches(KEYS_POLL_SECONDS if keys is not None else POLL_SECONDS):
                    self.progress, self.late_rows = poller.reading
                    action = self.press(keys.read()) if keys is not None else Action.NOTHING
                    if action is Action.QUIT:
                        self.stopped_by_key = True
                        break
                    now = time.monotonic()
                    if batch or action is Action.REDRAW or now - last_draw >= REDRAW_EVERY_SECONDS:
                        live.update(self.render(), refresh=True)
                        last_draw = now
                state = "stopped" if self.stopped_by_key or getattr(stream, "stopped_early", False) else "finished"
            except Exception:
                state = "failed"
                raise
            finally:
                self.progress = poller.stop()
                self.late_rows = poller.late_rows
                if state != "finished" or keys is None or not self._worth_reading():
                    self.navigation.close()
                    self.keys_read = False  # no hint about keys that are no longer read
                live.update(self.render(state), refresh=True)
            if state == "finished" and keys is not None and self._worth_reading():
                self._read_until_q(live, keys)

    def _worth_reading(self) -> bool:
        """Whether an ended result stays on screen: the user is reading it, or it did not fit."""
        return not self.navigation.follow or len(self.table) > self._page

    def _read_until_q(self, live: Live, keys) -> None:  # noqa: ANN001 - a KeyReader
        """The query has ended; its result stays to be read, as a pager's does, until `q` (or Ctrl-C)."""
        size = self.console.size
        live.update(self.render(BROWSING), refresh=True)
        try:
            while True:
                action = self.press(keys.read(wait=REDRAW_EVERY_SECONDS))
                if action is Action.QUIT:
                    break
                if action is Action.REDRAW or self.console.size != size:
                    size = self.console.size
                    live.update(self.render(BROWSING), refresh=True)
        except KeyboardInterrupt:
            pass
        finally:
            self.navigation.close()
            self.keys_read = False
            live.update(self.render("finished"), refresh=True)
