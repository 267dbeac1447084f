"""A SELECT's result as a table that changes: the changelog applied to rows, as Flink's table mode does.

Why it exists: the live table view shows the current result, not the stream of changes, and demo mode checks
expectations (`-- @expect rows>=5`) against the same current result. Keeping the model here, free of any terminal
library, lets both use it and lets it be tested alone.

Rules. With a key (`ChangeStream.key`), +I and +U insert or replace the row with that key and -U and -D delete it;
an update (-U then +U of one key in a batch) keeps the row's place. Without a key the result is append-only (+I
adds a row at the bottom) unless -U or -D arrive, which retract the most recent equal row (Flink's
materialization); a +U right after a -U takes the retracted row's place. At most `cap` rows are kept; the oldest
go first.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from itertools import islice
from dataclasses import dataclass
from typing import Callable, Iterable

from shell.results import DELETE, UPDATE_BEFORE, Change
from shell.values import format_value

RATE_WINDOW_SECONDS = 5.0


@dataclass
class Entry:
    """One row of the result and when it last changed (monotonic seconds)."""

    row: tuple
    changed_at: float
    op: str


class ResultTable:
    def __init__(
        self,
        columns: list[str],
        key: Iterable[str] = (),
        cap: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.columns = list(columns)
        positions = {c.lower(): i for i, c in enumerate(self.columns)}
        key = [k.lower() for k in key]
        self.key_index = [positions[k] for k in key] if key and all(k in positions for k in key) else []
        self.cap = max(1, cap)
        self.clock = clock
        self._keyed: OrderedDict[tuple, Entry] = OrderedDict()
        self._rows: list[Entry] = []
        self.changes = 0
        self.batches = 0
        self.dropped = 0  # rows pushed out by the cap
        self.last_update: float | None = None  # wall-clock time of the last change
        self._started = clock()
        self._recent: deque[tuple[float, int]] = deque()

    @property
    def keyed(self) -> bool:
        return bool(self.key_index)

    def __len__(self) -> int:
        return len(self._keyed) if self.keyed else len(self._rows)

    def entries(self) -> list[Entry]:
        """The current rows, in display order (oldest first)."""
        return list(self._keyed.values()) if self.keyed else list(self._rows)

    def window(self, start: int, stop: int) -> list[Entry]:
        """The rows from `start` to `stop` (exclusive) in display order, without copying the others: what a view
        draws. A keyed table walks its order from the nearer end, in C (no Python per row skipped)."""
        count = len(self)
        start, stop = max(0, start), min(count, stop)
        if start >= stop:
            return []
        if not self.keyed:
            return self._rows[start:stop]
        if count - stop < start:  # nearer the newest rows, where a following view is
            newest_first = list(islice(reversed(self._keyed.values()), count - stop, count - start))
            newest_first.reverse()
            return newest_first
        return list(islice(self._keyed.values(), start, stop))

    def rows(self) -> list[tuple]:
        return [e.row for e in self.entries()]

    def apply(self, changes: list[Change]) -> None:
        """Apply one batch of changes."""
        if not changes:
            return
        now = self.clock()
        if self.keyed:
            self._apply_keyed(changes, now)
        else:
            self._apply_unkeyed(changes, now)
        self._enforce_cap()
        self.changes += len(changes)
        self.batches += 1
        self.last_update = time.time()
        self._recent.append((now, len(changes)))

    def _apply_keyed(self, changes: list[Change], now: float) -> None:
        retracted: set[tuple] = set()
        for change in changes:
            key = tuple(change.row[i] for i in self.key_index)
            if change.op == UPDATE_BEFORE:
                if key in self._keyed:
                    retracted.add(key)
            elif change.op == DELETE:
                self._keyed.pop(key, None)
                retracted.discard(key)
            else:
                entry = self._keyed.get(key)
                if entry is None:
                    self._keyed[key] = Entry(change.row, now, change.op)
                else:
                    entry.row, entry.changed_at, entry.op = change.row, now, change.op
                retracted.discard(key)
        for key in retracted:  # -U without its +U: the row is gone
            self._keyed.pop(key, None)

    def _apply_unkeyed(self, changes: list[Change], now: float) -> None:
        slot: int | None = None  # where the row retracted by the last -U was
        for change in changes:
            if change.op in (UPDATE_BEFORE, DELETE):
                position = self._find(change.row)
                if position is not None:
                    del self._rows[position]
                slot = position if change.op == UPDATE_BEFORE else None
                continue
            entry = Entry(change.row, now, change.op)
            if slot is not None:
                self._rows.insert(slot, entry)
                slot = None
            else:
                self._rows.append(entry)

    def _find(self, row: tuple) -> int | None:
        for i in range(len(self._rows) - 1, -1, -1):
            if self._rows[i].row == row:
                return i
        return None

    def _enforce_cap(self) -> None:
        excess = len(self) - self.cap
        if excess <= 0:
            return
        self.dropped += excess
        if self.keyed:
            for _ in range(excess):
                self._keyed.popitem(last=False)
        else:
            del self._rows[:excess]

    def age(self) -> float:
        """Seconds since the table was made (the query started)."""
        return self.clock() - self._started

    def changes_per_second(self) -> float:
        now = self.clock()
        while self._recent and now - self._recent[0][0] > RATE_WINDOW_SECONDS:
            self._recent.popleft()
        span = min(RATE_WINDOW_SECONDS, max(now - self._started, 1.0))
        return sum(n for _, n in self._recent) / span

    def contains_text(self, text: str) -> bool:
        """Whether some row shows `text` in one of its cells (as the tables print it)."""
        return any(text in format_value(value) for row in self.rows() for value in row)


class MaterializingStream:
    """A ChangeStream seen through a ResultTable: every batch is applied to `table` before a consumer sees it.

    Renderers and printers consume it like the stream itself (`batches()`, `columns`, `types`, `progress()`).
    `stop` is asked after every batch and tick; when it answers True the iteration ends early (demo mode's
    `-- @wait rows>=N`), and the caller cancels the query.
    """

    def __init__(self, stream, table: ResultTable, stop: Callable[[ResultTable], bool] | None = None):  # noqa: ANN001
        self.stream = stream
        self.table = table
        self.stop = stop
        self.stopped_early = False

    def __getattr__(self, name: str):  # noqa: ANN204 - columns, types, key, bounded, progress, cancel
        return getattr(self.stream, name)

    def batches(self, poll_seconds: float = 0.2):  # noqa: ANN201
        for batch in self.stream.batches(poll_seconds):
            if batch:
                self.table.apply(batch)
            yield batch
            if self.stop is not None and self.stop(self.table):
                self.stopped_early = True
                return
