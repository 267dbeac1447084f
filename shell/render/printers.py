"""Result printers for script mode and pipes: tableau, changelog, JSON lines and CSV, chosen from a table by mode.

Each printer gets every result of a script in order. Results go to `out`; anything that is not a result
(informational messages) goes to `out` too, except in JSON and CSV modes, where stdout carries nothing but the
results (one JSON object per change; CSV rows) and messages go to `err`.
"""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import dataclass
from typing import TextIO

from shell.changes import RowKind
from shell.render.materialize import ResultTable
from shell.render.tableau import TableauWriter, column_width, write_table
from shell.results import ChangeStream, Message, Rows, Text
from shell.values import format_value, json_value


@dataclass
class PrinterOptions:
    max_column_width: int = 40


class Notes:
    """A stream's notes (ChangeStream.note: a batch shown in part, bad records not kept), each written once to
    `err` as a warning line, after the rows of the batch it is about."""

    def __init__(self, stream, err: TextIO):  # noqa: ANN001 - a ChangeStream or a view of one
        self.stream, self.err, self.seen = stream, err, 0

    def write(self) -> None:
        new_notes = getattr(self.stream, "new_notes", None)
        if new_notes is None:
            return
        notes, self.seen = new_notes(self.seen)
        for note in notes:
            self.err.write(f"[WARNING] {note}\n")
        if notes:
            self.err.flush()


class TableauPrinter:
    """Flink's tableau mode: boxed rows, appended, with an op column for changing results."""

    def __init__(self, out: TextIO, err: TextIO, options: PrinterOptions):
        self.out, self.err, self.options = out, err, options

    def message(self, message: Message) -> None:
        tag = "[WARNING]" if message.level == "warning" else "[INFO]"
        self.out.write(f"{tag} {message.text}\n")
        self.out.flush()

    def text(self, text: Text) -> None:
        self.out.write(text.text.rstrip("\n") + "\n")
        self.out.flush()

    def rows(self, rows: Rows) -> None:
        write_table(self.out, rows.columns, rows.rows, self.options.max_column_width)

    def changes(self, stream: ChangeStream) -> None:
        types = stream.types or [None] * len(stream.columns)
        widths = [column_width(c, t, self.options.max_column_width) for c, t in zip(stream.columns, types)]
        writer = TableauWriter(self.out, stream.columns, widths, with_op=True)
        writer.header()
        notes = Notes(stream, self.err)
        try:
            for batch in stream.batches():
                for change in batch or ():
                    writer.row(change.row, change.op)
                writer.flush()
                notes.write()
            writer.footer()
        finally:
            notes.write()


class ChangelogPrinter(TableauPrinter):
    """One line per change, `+I[v1, v2]`, like Flink's print sink: easy to grep and to diff."""

    def changes(self, stream: ChangeStream) -> None:
        notes = Notes(stream, self.err)
        try:
            for batch in stream.batches():
                for change in batch or ():
                    self.out.write(f"{change.op}[{', '.join(format_value(v) for v in change.row)}]\n")
                self.out.flush()
                notes.write()
        finally:
            notes.write()


class JsonPrinter:
    """Exactly one JSON object per result change on `out`: {"op": "+I", "row": {...}}; messages on `err`."""

    def __init__(self, out: TextIO, err: TextIO, options: PrinterOptions):
        self.out, self.err = out, err

    def message(self, message: Message) -> None:
        self.err.write(f"[{'WARNING' if message.level == 'warning' else 'INFO'}] {message.text}\n")
        self.err.flush()

    def text(self, text: Text) -> None:
        self.err.write(text.text.rstrip("\n") + "\n")
        self.err.flush()

    def _emit(self, columns: list[str], op: str, row: tuple) -> None:
        record = {"op": op, "row": {c: json_value(v) for c, v in zip(columns, row)}}
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def rows(self, rows: Rows) -> None:
        for row in rows.rows:
            self._emit(rows.columns, RowKind.INSERT, row)
        self.out.flush()

    def changes(self, stream: ChangeStream) -> None:
        notes = Notes(stream, self.err)
        try:
            for batch in stream.batches():
                for change in batch or ():
                    self._emit(stream.columns, change.op, change.row)
                self.out.flush()
                notes.write()
        finally:
            notes.write()


class CsvPrinter(JsonPrinter):
    """RFC 4180 CSV (Python's csv module: fields quoted when they hold a comma, a quote or a line break; CRLF
    line ends), a header row per result, for spreadsheets and scripts; messages on `err`.

    A bounded result is written once it is complete, one line per row of the final result (its changes applied,
    as the table view applies them). An unbounded one is its changelog as it comes, with Flink's row kind in an
    `op` column first (`+I`, `-U`, `+U`, `-D`), flushed after each micro-batch. NULL is an empty field; so is an
    empty string (the json mode tells them apart). Values are written as the table shows them. A bounded query
    that fails or is interrupted writes no rows: its final result was never known."""

    def __init__(self, out: TextIO, err: TextIO, options: PrinterOptions):
        super().__init__(out, err, options)
        self.writer = csv.writer(out)

    def _line(self, values: tuple) -> None:
        self.writer.writerow(["" if v is None else format_value(v) for v in values])

    def rows(self, rows: Rows) -> None:
        self.writer.writerow(rows.columns)
        for row in rows.rows:
            self._line(row)
        self.out.flush()

    def changes(self, stream: ChangeStream) -> None:
        notes = Notes(stream, self.err)
        try:
            if stream.bounded:
                self._final_rows(stream, notes)
            else:
                self._changelog(stream, notes)
        finally:
            notes.write()

    def _final_rows(self, stream: ChangeStream, notes: Notes) -> None:
        table = ResultTable(stream.columns, key=stream.key or (), cap=sys.maxsize)
        for batch in stream.batches():
            table.apply(list(batch or ()))
            notes.write()
        self.writer.writerow(stream.columns)
        for row in table.rows():
            self._line(row)
        self.out.flush()

    def _changelog(self, stream: ChangeStream, notes: Notes) -> None:
        self.writer.writerow(["op", *stream.columns])
        self.out.flush()
        for batch in stream.batches():
            for change in batch or ():
                self._line((change.op, *change.row))
            self.out.flush()
            notes.write()


PRINTERS = {"tableau": TableauPrinter, "changelog": ChangelogPrinter, "json": JsonPrinter, "csv": CsvPrinter}
