"""Runs what the user typed: parse, execute each statement through `Session.execute`, show each result.

Why it exists: the prompt loop and demo mode run statements the same way, and neither should know how results
look. This module is the one place that (1) waits for Spark with a spinner when a statement needs it, (2) runs
the statement off the main thread so Ctrl-C is safe, (3) shows the result: `Message` as `[INFO] ...`, `Rows` as a
table, `Text` as it is, a `ChangeStream` in the session's result mode, errors as `line:col: message` with a caret
and hint, and anything unexpected as one `internal error: ...` line, and (4) cancels every SELECT it started
before returning, so no query outlives its view. It returns what happened (`Outcome`) for demo expectations.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable

from rich.console import Console
from rich.text import Text as RichText

from shell.errors import StreamshellError, traceback_text
from shell.render.changelog_view import ChangelogView
from shell.render.keys import terminal_keys
from shell.render.live import LiveTableView
from shell.render.materialize import MaterializingStream, ResultTable
from shell.render.printers import PRINTERS, PrinterOptions
from shell.render.terminal import TerminalRenderer
from shell.repl.background import Abandoned, run_patiently, wait_for_spark
from shell.results import INSERT, Change, ChangeStream, ClearRequested, JobStarted, Message, QuitRequested, Rows, Text
from shell.sql import statements as st
from shell.sql.parse import parse_script


@dataclass
class Outcome:
    """What one statement did."""

    statement: st.Statement | None
    result: object = None
    error: StreamshellError | None = None
    internal: BaseException | None = None
    table: ResultTable | None = None  # a SELECT's result as it stood when its view ended
    cancelled: bool = False
    output: list[str] = field(default_factory=list)  # messages and text shown, for `@expect output`

    @property
    def ok(self) -> bool:
        return self.error is None and self.internal is None

    @property
    def quit(self) -> bool:
        return isinstance(self.result, QuitRequested)


class Executor:
    """`keys`: read keys while a live table shows (the interactive shell; a demo keeps the keys its own)."""

    def __init__(self, session, console: Console, source_name: str | None = None, keys: bool = False):  # noqa: ANN001
        self.session = session
        self.console = console
        self.source_name = source_name
        self.keys = keys

    @property
    def interactive(self) -> bool:
        return self.console.is_terminal

    @property
    def verbose(self) -> bool:
        return bool(self.session.options.verbose) or self.session.settings.get("sql-client.verbose") == "true"

    def renderer(self) -> TerminalRenderer:
        return TerminalRenderer(self.console, self.session.max_column_width())

    # whole inputs ----------------------------------------------------------------------------------------------

    def parse(self, text: str) -> list[st.Statement] | None:
        """The statements of `text`, or None after showing why it does not parse (nothing runs then)."""
        try:
            return parse_script(text)
        except StreamshellError as exc:
            self.show_error(exc.with_source(text))
            return None
        except Exception as exc:  # noqa: BLE001
            self.show_internal(exc)
            return None

    def run_text(self, text: str) -> list[Outcome]:
        """Run every statement of `text` in order, stopping at the first failure or at QUIT."""
        statements = self.parse(text)
        outcomes: list[Outcome] = []
        for statement in statements or ():
            outcome = self.run_statement(statement, text)
            outcomes.append(outcome)
            if not outcome.ok or outcome.quit or outcome.cancelled:
                break
        return outcomes

    # one statement ---------------------------------------------------------------------------------------------

    def run_statement(
        self,
        statement: st.Statement,
        source: str,
        stop: Callable[[ResultTable], bool] | None = None,
    ) -> Outcome:
        """Execute and show one statement. `stop` can end a SELECT's view early (demo mode's @wait)."""
        outcome = Outcome(statement)
        try:
            if self.session.needs_spark(statement):
                wait_for_spark(self.session.runtime, self.console)
            starts_job = isinstance(statement, (st.Insert, st.StatementSet, st.ResumeJob)) and not (
                isinstance(statement, st.Insert) and statement.query is None) and self.session.detached_jobs()
            waiting = "Starting the job's own process and Spark…" if starts_job else "Running…"
            call = run_patiently(
                lambda: self.session.execute(statement), self.console, waiting, on_abandoned=_cancel_stream
            )
            if call.error is not None:
                raise call.error
            outcome.result = call.value
            if call.interrupted:
                _cancel_stream(call.value)
                outcome.cancelled = True
                self.note("Cancelled.", "yellow")
                return outcome
            self.show(outcome, stop)
        except StreamshellError as exc:
            if statement.source is not None and not exc.has_position:
                exc.line, exc.col = statement.source.line, statement.source.col
            outcome.error = exc.with_source(source)
            self.show_error(outcome.error)
        except (KeyboardInterrupt, Abandoned):
            outcome.cancelled = True
            self.note("Cancelled.", "yellow")
        except BrokenPipeError:
            raise  # the reader of our output is gone: the caller stops
        except Exception as exc:  # noqa: BLE001 - the shell goes on after a bug, with one line about it
            outcome.internal = exc
            self.show_internal(exc)
        return outcome

    def show(self, outcome: Outcome, stop: Callable[[ResultTable], bool] | None = None) -> None:
        result = outcome.result
        if isinstance(result, ChangeStream):
            self.show_stream(result, outcome, stop)
            return
        if isinstance(result, JobStarted):
            result = Message(f"Job '{result.name}' started with id {result.job_id}.")
        if isinstance(result, ClearRequested):
            if self.interactive:
                self.console.clear()
            return
        if isinstance(result, QuitRequested):
            return
        if isinstance(result, (Message, Text)):
            outcome.output.append(result.text)
        if isinstance(result, Rows):
            outcome.table = _table_of_rows(result)
        if not self.interactive:  # a pipe: the plain printers of script mode
            printer = PRINTERS[self.mode()](sys.stdout, sys.stderr, PrinterOptions(self.session.max_column_width()))
            {Message: printer.message, Text: printer.text, Rows: printer.rows}[type(result)](result)
            return
        renderer = self.renderer()
        if isinstance(result, Message):
            renderer.message(result)
        elif isinstance(result, Rows):
            renderer.rows(result)
        elif isinstance(result, Text):
            highlighted = None
            if isinstance(outcome.statement, st.ShowCreate):
                from shell.repl.lexer import highlight_rich

                highlighted = highlight_rich(result.text)
            renderer.text(result.text, highlighted)

    def mode(self) -> str:
        return self.session.result_mode(interactive=self.interactive)

    def show_stream(self, stream: ChangeStream, outcome: Outcome, stop: Callable[[ResultTable], bool] | None) -> None:
        cap = int(self.session.settings.get("sql-client.execution.max-table-result.rows") or 10_000)
        table = ResultTable(stream.columns, stream.key, cap)
        outcome.table = table
        view_stream = MaterializingStream(stream, table, stop)
        width = self.session.max_column_width()
        mode = self.mode()
        live = None
        try:
            if mode == "table" and self.interactive:
                live = LiveTableView(self.console, table, width)
                with terminal_keys(self.keys) as keys:  # None when stdin is not a terminal
                    live.changes(view_stream, keys)
            elif mode == "changelog" and self.interactive:
                ChangelogView(self.console, width).changes(view_stream)
            else:
                PRINTERS[mode](sys.stdout, sys.stderr, PrinterOptions(width)).changes(view_stream)
        except KeyboardInterrupt:
            outcome.cancelled = True
            self._stop_stream(stream)
            self.note("Query cancelled.", "yellow")
            return
        except BaseException:
            self._stop_stream(stream)
            raise
        self._stop_stream(stream)
        if view_stream.stopped_early:
            self.note(f"Query stopped after {len(table)} rows.")
        elif live is not None and live.stopped_by_key:
            self.note("Query stopped.", "yellow")

    def _stop_stream(self, stream: ChangeStream) -> None:
        """Stop the query behind a stream (also after it ended: that removes its work directory)."""
        try:
            run_patiently(stream.cancel, self.console, "Stopping the query… (Ctrl-C to stop waiting)", patience=1)
        except Abandoned:
            pass

    # notes and errors ------------------------------------------------------------------------------------------

    def note(self, text: str, style: str = "dim") -> None:
        """A remark about a statement (not a result): on stderr when output goes to a pipe."""
        if self.interactive:
            self.renderer().note(text, style)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def show_error(self, exc: StreamshellError) -> None:
        if self.interactive:
            self.renderer().error(exc, self.source_name)
        else:
            sys.stderr.write(exc.render(self.source_name) + "\n")
        if self.verbose and exc.__cause__ is not None:
            self._traceback(exc.__cause__)

    def show_internal(self, exc: BaseException) -> None:
        if self.interactive:
            self.renderer().internal(exc)
        else:
            sys.stderr.write(f"internal error: {exc!r}\n")
        if self.verbose:
            self._traceback(exc)

    def _traceback(self, exc: BaseException) -> None:
        text = traceback_text(exc)  # redacted: a frame or a message may quote a password
        if self.interactive:
            self.console.print(RichText(text, style="dim"), soft_wrap=True)
        else:
            sys.stderr.write(text)


def _cancel_stream(value: object) -> None:
    if isinstance(value, ChangeStream):
        value.cancel()


def _table_of_rows(rows: Rows) -> ResultTable:
    """A finished table as a result table, so demo expectations read SHOW/DESCRIBE like a SELECT."""
    table = ResultTable(rows.columns, cap=max(len(rows.rows), 1))
    table.apply([Change(INSERT, tuple(row)) for row in rows.rows])
    return table
