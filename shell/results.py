"""What executing a statement gives back: plain data the REPL, the script runner and the tests all consume.

The core never prints. It returns one of these, and a renderer decides how it looks (a live table, Flink's
tableau, JSON lines). A running SELECT is a `ChangeStream`: a queue of changelog batches filled by Spark's
micro-batches, which a renderer drains until the query ends or the user cancels it.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

from shell.changes import RowKind
from shell.values import format_timestamp

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE


@dataclass(frozen=True)
class Message:
    """A statement that only reports something (`[INFO] Table has been created.`)."""

    text: str
    level: str = "info"  # info | warning


@dataclass(frozen=True)
class Text:
    """Text shown as it is (SHOW CREATE TABLE, EXPLAIN, HELP)."""

    text: str


@dataclass(frozen=True)
class Rows:
    """A small, finished table: SHOW, DESCRIBE, SET."""

    columns: list[str]
    rows: list[tuple]


@dataclass(frozen=True)
class Change:
    """One row of a result changelog."""

    op: str
    row: tuple


@dataclass(frozen=True)
class Progress:
    """What the status line shows about a running query, taken from Spark's last progress report."""

    batch_id: int = -1
    input_rows_per_second: float = 0.0
    processed_rows_per_second: float = 0.0
    batch_duration_ms: int = 0
    watermark: str | None = ""  # the event-time watermark as a timestamp (UTC); '' while there is none: watermark_text
    late_rows: int = 0
    state_rows: int = 0

    @classmethod
    def from_spark(cls, progress: Any) -> "Progress":
        """From a StreamingQuery's `lastProgress` (a dict, or Spark 4's progress object with `.json`)."""
        if progress is not None and not isinstance(progress, dict):
            import json

            progress = json.loads(progress.json)
        if not progress:
            return cls()
        operators = progress.get("stateOperators") or []
        event_time = progress.get("eventTime") or {}
        return cls(
            batch_id=progress.get("batchId", -1),
            input_rows_per_second=float(progress.get("inputRowsPerSecond") or 0.0),
            processed_rows_per_second=float(progress.get("processedRowsPerSecond") or 0.0),
            batch_duration_ms=int((progress.get("durationMs") or {}).get("triggerExecution", 0)),
            watermark=watermark_text(event_time.get("watermark")),
            late_rows=sum(int(op.get("numRowsDroppedByWatermark", 0)) for op in operators),
            state_rows=sum(int(op.get("numRowsTotal", 0)) for op in operators),
        )


EPOCH = datetime(1970, 1, 1)


def watermark_text(instant: str | None) -> str:
    """Spark's watermark ('2024-05-01T10:00:00.000Z') as a timestamp, '2024-05-01 10:00:00.000'.

    '' when there is none: a query without a watermark reports none, and one whose watermark has not moved yet
    reports the epoch (1970-01-01T00:00:00.000Z), which is not a time to show.
    """
    if not instant:
        return ""
    try:
        moment = datetime.fromisoformat(instant)
    except ValueError:
        return instant
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return "" if moment == EPOCH else format_timestamp(moment)


_END = object()


@dataclass
class ChangeStream:
    """The live result of a SELECT.

    Spark's batch callback calls `publish`; the consumer iterates `batches()`. `key` names the columns that
    identify a row of the result (empty: every change is an append). `cancel` stops the query behind it.

    `note` says something about the result beside its rows (a batch shown in part, bad records that are not
    kept): `notes` holds the latest text of each kind, for a status line; `note_log` every one in order, for a
    printer that writes each once (`new_notes`).
    """

    columns: list[str]
    types: list[str] = field(default_factory=list)  # Spark type names, for column widths
    key: list[str] = field(default_factory=list)
    cancel_callback: Callable[[], None] | None = None
    progress_callback: Callable[[], Progress] | None = None
    bounded: bool = False
    notes: dict[str, str] = field(default_factory=dict)  # kind -> the latest note of that kind
    note_log: list[str] = field(default_factory=list)
    _queue: "queue.Queue[Any]" = field(default_factory=lambda: queue.Queue(maxsize=64))
    _error: BaseException | None = None
    _cancelled: threading.Event = field(default_factory=threading.Event)

    def note(self, kind: str, text: str) -> None:
        """Say `text` about the result (it replaces the last note of the same `kind` on a status line)."""
        self.notes[kind] = text
        self.note_log.append(text)

    def new_notes(self, seen: int) -> tuple[list[str], int]:
        """The notes after the first `seen`, and how many there are now (the next call's `seen`)."""
        log = self.note_log
        count = len(log)
        return log[seen:count], count

    def publish(self, changes: list[Change], note: tuple[str, str] | None = None) -> None:
        """Hand one batch to the consumer, waiting while it is behind (back-pressure on Spark); `note` (kind,
        text) is said about it first."""
        if note is not None:
            self.note(*note)
        while not self._cancelled.is_set():
            try:
                self._queue.put(changes, timeout=0.2)
                return
            except queue.Full:
                continue

    def finish(self, error: BaseException | None = None) -> None:
        """The query ended (its input ended, it failed, or it was cancelled)."""
        self._error = error
        while True:
            try:
                self._queue.put(_END, timeout=0.2)
                return
            except queue.Full:
                if self._cancelled.is_set():
                    self._drain()

    def batches(self, poll_seconds: float = 0.2) -> Iterator[list[Change] | None]:
        """Yield batches as they come; yield None every `poll_seconds` without one (for redraws and Ctrl-C)."""
        while True:
            try:
                item = self._queue.get(timeout=poll_seconds)
            except queue.Empty:
                yield None
                continue
            if item is _END:
                if self._error is not None:
                    raise self._error
                return
            yield item

    def cancel(self) -> None:
        self._cancelled.set()
        if self.cancel_callback is not None:
            self.cancel_callback()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def progress(self) -> Progress:
        return self.progress_callback() if self.progress_callback else Progress()

    def _drain(self) -> None:
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass


@dataclass(frozen=True)
class JobStarted:
    """An INSERT started a detached job."""

    job_id: str
    name: str


@dataclass(frozen=True)
class QuitRequested:
    """QUIT/EXIT: the front end decides whether to ask first (jobs running)."""


@dataclass(frozen=True)
class ClearRequested:
    """CLEAR: the terminal front end clears the screen."""


Result = Message | Text | Rows | ChangeStream | JobStarted | QuitRequested | ClearRequested
