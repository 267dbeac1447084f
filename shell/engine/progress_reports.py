"""Reading a running query's progress reports without paying for the ones already read.

A job's watchers look at its queries about once a second: the metrics count each micro-batch's report, the stall
sampler and the state file want the last one. PySpark's `recentProgress` turns every report Spark keeps (up to
`spark.sql.streaming.numRecentProgressUpdates`, 100) into JSON through py4j on every call, and `lastProgress` the
last one: on a job with no input that was most of what the job cost (about 0.04 of the 0.06 cores an idle
three-source join took, in its JVM's py4j threads and its Python). Here a look asks the JVM for the last report's
batch id and time only (three small calls) and turns into a dict only the reports it has not read before; a
report is told by its batch id and time, since Spark reports an idle trigger under the id the next batch will have.

Query objects without a JVM handle (Spark Connect, tests' stand-ins) are read through PySpark's own properties.
"""

from __future__ import annotations

import json
import threading
from typing import Any


def _as_dict(report: Any) -> dict:
    """A report as a dict: PySpark gives dicts or objects with `.json`; the JVM's objects have `json()`."""
    if isinstance(report, dict):
        return report
    text = report.json
    return json.loads(text() if callable(text) else text)


def _key_of(report: dict) -> tuple:
    return (report.get("batchId"), report.get("timestamp"))


KEPT = 256  # queries whose reading is kept (a job's parts and side queries, the shell's SELECTs)


class _Seen:
    """What was read of one query: the last report taken by `unread`, and the last report seen by either."""

    __slots__ = ("query", "unread_key", "last_key", "last")

    def __init__(self, query: Any):
        self.query = query  # held, so the id() it is filed under is not reused while it is
        self.unread_key: tuple | None = None
        self.last_key: tuple | None = None
        self.last: dict | None = None

    def keep_last(self, report: dict) -> None:
        self.last_key, self.last = _key_of(report), report


class ProgressReader:
    """Per query, the reports not read yet and the last one, each report turned into a dict once."""

    def __init__(self) -> None:
        self._seen: dict[int, _Seen] = {}
        self._lock = threading.Lock()

    def latest(self, query: Any) -> dict | None:
        """The query's last progress report (None before its first)."""
        with self._lock:
            seen = self._filed(query)
            jsq = getattr(query, "_jsq", None)
            if jsq is None:
                last = query.lastProgress
                return _as_dict(last) if last is not None else None
            last = jsq.lastProgress()
            if last is None:
                return None
            if _jvm_key(last) != seen.last_key:
                seen.keep_last(_as_dict(last))
            return seen.last

    def last_read(self, query: Any) -> dict | None:
        """The last report `unread` or `latest` took of `query` (None before one), asking Spark nothing."""
        with self._lock:
            seen = self._seen.get(id(query))
            return seen.last if seen is not None and seen.query is query else None

    def unread(self, query: Any) -> list[dict]:
        """The reports of `query` that no call of `unread` returned before, oldest first."""
        with self._lock:
            seen = self._filed(query)
            before = seen.unread_key
            jsq = getattr(query, "_jsq", None)
            if jsq is None:
                reports = [_as_dict(r) for r in (query.recentProgress or [])]
                fresh = reports[_after(reports, before, _key_of):]
            else:
                last = jsq.lastProgress()
                if last is None or _jvm_key(last) == before:
                    return []
                recent = jsq.recentProgress()  # the JVM's objects: only those after the last read become dicts
                fresh = [_as_dict(recent[i]) for i in range(_after(recent, before, _jvm_key), len(recent))]
            if fresh:
                seen.unread_key = _key_of(fresh[-1])
                seen.keep_last(fresh[-1])
            return fresh

    def _filed(self, query: Any) -> _Seen:
        seen = self._seen.pop(id(query), None)  # taken out and put back last: the least recently looked at go first
        if seen is None or seen.query is not query:
            seen = _Seen(query)
        self._seen[id(query)] = seen
        if len(self._seen) > KEPT:  # queries of earlier runs (restarts), ended SELECTs: not looked at again
            for old in list(self._seen)[: len(self._seen) - KEPT]:
                del self._seen[old]
        return seen


def _jvm_key(report: Any) -> tuple:
    """A JVM progress report's batch id and time, as its JSON has them (the time is a string in both)."""
    return (report.batchId(), str(report.timestamp()))


def _after(reports, key: tuple | None, key_of) -> int:  # noqa: ANN001 - dicts or the JVM's array; a key function
    """The index after the report with `key`, looked for newest first (0 when it is not among them)."""
    for i in range(len(reports) - 1, -1, -1):
        if key_of(reports[i]) == key:
            return i + 1
    return 0


LAST_REPORTS = ProgressReader()  # the process's reader of queries' last reports (job status, stall sampling)
