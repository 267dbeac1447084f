"""A session's results as what the wire carries: columns, rows pulled one at a time, a command tag and notices.

Why it exists: the session returns `shell.results` values (a message, a finished table, a live ChangeStream, a
started job); a PostgreSQL client expects RowDescription, DataRows and a CommandComplete tag such as `SELECT 3`.
An `Outcome` is that shape, independent of simple or extended protocol: the connection pulls its rows (all of
them, `max_rows` at a time for a portal, or as a COPY), so a live changelog flows while the client reads and
stops when it cancels or goes away.

Bounded queries are materialised as the CSV mode does (their changes applied, the final rows sent). An unbounded
SELECT streams its changelog with the row kind (`+I`, `-U`, `+U`, `-D`) in a first column `op`, as do
`COPY (<query>) TO STDOUT` and a cursor's FETCH (docs/gateway.md, "What a connection runs").
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from shell.engine.path_parts import MAX_ROWS_SETTING, SHOWN_ROWS
from shell.errors import StreamshellError
from shell.gateway import pgtypes
from shell.gateway.protocol import ColumnDescription
from shell.render.materialize import ResultTable
from shell.results import ChangeStream, ClearRequested, JobStarted, Message, QuitRequested, Rows, Text
from shell.sql import statements as st

# statements with effects: an extended-protocol Describe must not run them early (they run at Execute)
WITH_EFFECTS = (
    st.CreateTable, st.CreateView, st.CreateFunction, st.DropTable, st.DropFunction, st.AlterTableSet, st.AlterTable,
    st.AlterView, st.Insert, st.Delete, st.StatementSet, st.Reset, st.CreateCatalog, st.DropCatalog, st.AlterCatalog,
    st.UseCatalog, st.CreateDatabase, st.DropDatabase, st.Use, st.StopJob, st.ResumeJob, st.Quit, st.Clear,
)  # fmt: skip


class Cancelled(Exception):
    """The client's cancel request (57014) stopped the running statement."""


class ResultCut(StreamshellError):
    """A micro-batch had more rows than `sql-client.display.max-rows-per-batch` lets reach the session: the shell
    shows the first ones and says so on its status line, but a client of the gateway would take a cut result (or a
    changelog with changes missing) for the whole one, so the statement fails instead (54000)."""

    sqlstate = "54000"


@dataclass
class Outcome:
    """One statement's answer. `columns` None: no rows (NoData). `rows` yields tuples of Python values; `tag` is
    called once they are all sent (it may count them). `notices` come after the rows, never between them."""

    columns: list[ColumnDescription] | None = None
    rows: Iterator[tuple] = field(default_factory=lambda: iter(()))
    tag: Callable[[int], str] = lambda n: f"SELECT {n}"
    notices: list[tuple[str, str]] = field(default_factory=list)  # (severity, text)
    notes_later: Callable[[], list[str]] = lambda: []  # notes the stream said while its rows were sent
    stream: ChangeStream | None = None
    quit: bool = False
    copy: bool = False  # sent as COPY ... TO STDOUT
    reading: ChangeStream | None = None  # a FETCH reads a cursor's stream: a cancel stops it, the FETCH's end not

    def close(self) -> None:
        """Stop whatever runs behind the rows (a Spark query); harmless when it ended."""
        if self.stream is not None:
            self.stream.cancel()

    def cancel(self) -> None:
        """The client's cancel request: stop the query behind the rows, also a cursor's that a FETCH reads."""
        self.close()
        if self.reading is not None:
            self.reading.cancel()


def rows_outcome(columns: list[str], rows: list[tuple], oids: list[int] | None = None) -> Outcome:
    oids = oids or [pgtypes.oid_of_values([r[i] for r in rows if i < len(r)]) for i in range(len(columns))]
    return Outcome([describe(name, oid) for name, oid in zip(columns, oids)], iter(rows))


def describe(name: str, oid: int, typmod: int = -1) -> ColumnDescription:
    return ColumnDescription(name, oid, pgtypes.SIZES.get(oid, -1), typmod)


def tag_of(statement: st.Statement, count: int | None = None) -> str:
    if isinstance(statement, st.CreateTable):
        return "CREATE TABLE" if statement.query is None else "SELECT 0"
    if isinstance(statement, st.DropTable):
        return "DROP VIEW" if statement.is_view else "DROP TABLE"
    if isinstance(statement, (st.Insert, st.StatementSet)):
        return f"INSERT 0 {count or 0}"
    if isinstance(statement, st.Delete):
        return f"DELETE {count or 0}"
    if isinstance(statement, (st.AlterTable, st.AlterTableSet)):
        return "ALTER TABLE"
    name = "".join(f" {c}" if c.isupper() else c for c in type(statement).__name__).strip().upper()
    return name


def to_outcome(statement: st.Statement, result: Any, check: Callable[[], None], copy: bool = False) -> Outcome:
    """The wire shape of `result`, which `statement` returned. `check` is called while a query waits for its next
    batch: it raises to stop (the client's cancel, or the client gone)."""
    if isinstance(result, Message):
        count = _count_in(result.text)
        return Outcome(None, tag=lambda n: tag_of(statement, count),
                       notices=[("WARNING" if result.level == "warning" else "NOTICE", result.text)])
    if isinstance(result, Text):
        return Outcome([describe("result", pgtypes.TEXT)], iter([(result.text.rstrip("\n"),)]))
    if isinstance(result, Rows):
        return rows_outcome(result.columns, list(result.rows))
    if isinstance(result, JobStarted):
        return Outcome(None, tag=lambda n: tag_of(statement, 0), notices=[(
            "NOTICE", f"Job '{result.name}' started with id {result.job_id}.")])
    if isinstance(result, QuitRequested):
        return Outcome(None, tag=lambda n: "QUIT", quit=True)
    if isinstance(result, ClearRequested):
        return Outcome(None, tag=lambda n: "CLEAR")
    if isinstance(result, ChangeStream):
        return stream_outcome(result, check, copy)
    raise TypeError(f"unexpected result {type(result).__name__}")


def _count_in(text: str) -> int | None:
    """`Wrote 3 rows to t.` -> 3, for INSERT ... VALUES' and DELETE's tags."""
    words = text.split()
    if len(words) > 1 and words[0] in ("Wrote", "Deleted") and words[1].isdigit():
        return int(words[1])
    return None


def stream_outcome(stream: ChangeStream, check: Callable[[], None], copy: bool) -> Outcome:
    oids = [pgtypes.oid_of_spark(t) for t in stream.types] or [pgtypes.TEXT] * len(stream.columns)
    typmods = [pgtypes.typmod_of_spark(t) for t in stream.types] or [-1] * len(stream.columns)  # numeric(p,s)
    seen = {"notes": 0}

    def later() -> list[str]:
        notes, seen["notes"] = stream.new_notes(seen["notes"])
        return notes

    def batches() -> Iterator[list]:
        for batch in stream.batches():
            if batch is None:
                check()
                continue
            if SHOWN_ROWS in stream.notes:
                raise ResultCut(
                    f"the result is cut: {stream.notes[SHOWN_ROWS]}",
                    hint=f"SET '{MAX_ROWS_SETTING}' higher for this connection (the rows of a micro-batch are held in "
                         "the gateway's memory), or make the query return fewer rows")
            yield batch
            check()
        check()  # a cancel stops the query, which ends its stream: the client is told it was cancelled

    if stream.bounded and not copy:
        def final_rows() -> Iterator[tuple]:
            table = ResultTable(stream.columns, key=stream.key or (), cap=sys.maxsize)
            for batch in batches():
                table.apply(list(batch))
            yield from table.rows()

        columns = [describe(c, o, m) for c, o, m in zip(stream.columns, oids, typmods)]
        return Outcome(columns, final_rows(), stream=stream, notes_later=later)

    def changes() -> Iterator[tuple]:
        for batch in batches():
            for change in batch:
                yield (change.op, *change.row)

    columns = [describe("op", pgtypes.TEXT)] + [describe(c, o, m) for c, o, m in zip(stream.columns, oids, typmods)]
    tag = (lambda n: f"COPY {n}") if copy else (lambda n: f"SELECT {n}")
    return Outcome(columns, changes(), tag=tag, stream=stream, notes_later=later, copy=copy)


def copy_line(row: tuple) -> bytes:
    """One row in COPY's text format: tab-separated, `\\N` for NULL, backslash escapes."""
    fields = []
    for value in row:
        encoded = pgtypes.text(value)
        if encoded is None:
            fields.append(b"\\N")
            continue
        fields.append(encoded.replace(b"\\", b"\\\\").replace(b"\t", b"\\t").replace(b"\n", b"\\n").replace(b"\r", b"\\r"))
    return b"\t".join(fields) + b"\n"
