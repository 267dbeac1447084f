"""Records that do not decode: kept aside with their bytes, position and reason, and the query goes on.

A topic can always hold a message that does not fit its table (a producer's bug, a schema change, garbage).
Flink either fails the job or, with `ignore-parse-errors`, drops the record without a trace. Neither helps the
person debugging the pipeline, so by default (`'errors.mode' = 'dead-letter'`) a bad record is written to a
folder next to the catalog, where `SHOW ERRORS FOR t` finds it, and counted. `'errors.mode' = 'fail'` stops the
query at the first bad record; `'errors.mode' = 'ignore'` (or the format's `ignore-parse-errors`) drops it.
"""

from __future__ import annotations

import heapq
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator
from urllib.parse import unquote, urlparse

from shell.catalog.model import TableDef
from shell.connectors.topic import POSITION, RAW_KEY, RAW_VALUE
from shell.formats.base import ERROR_COLUMN, computed_once

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

CHECKED = "__checked"  # the reason a record is bad, computed once before the split
IGNORE_FLAGS = ("ignore-parse-errors",)  # a format option ending like this drops bad records, as in Flink


def errors_mode(table: TableDef) -> str:
    for key, value in table.options.items():
        if key.endswith(IGNORE_FLAGS) and value.strip().lower() == "true":
            return "ignore"
    return table.options.get("errors.mode", "dead-letter")


def dead_letter_dir(table: TableDef, errors_root: Path) -> Path:
    custom = table.options.get("errors.path")
    return Path(custom) if custom else errors_root / table.name.lower()


def split(frame: "DataFrame", table: TableDef) -> tuple["DataFrame", "DataFrame | None"]:
    """(good rows without the bookkeeping columns, bad records or None) of a decoded frame."""
    from pyspark.sql import functions as F

    # the reason once: otherwise the filters below and the projection after them each inline the whole decode check
    frame = frame.withColumn(CHECKED, computed_once(F.col(ERROR_COLUMN).alias("error")))
    bad = F.col(CHECKED).getField("error").isNotNull()
    mode = errors_mode(table)
    dead = None
    if mode == "fail":
        message = F.concat(F.lit(f"table {table.name}: a record does not decode at "), F.col(POSITION), F.lit(": "), F.col(ERROR_COLUMN))
        good = frame.where(F.when(bad, F.raise_error(message)).otherwise(F.lit(True)))
    else:
        good = frame.where(~bad)
        if mode == "dead-letter":
            dead = frame.where(bad).select(
                F.col(POSITION).alias("position"),
                F.col(ERROR_COLUMN).alias("error"),
                F.base64(F.col(RAW_KEY)).alias("key_base64"),
                F.base64(F.col(RAW_VALUE)).alias("value_base64"),
                F.current_timestamp().alias("seen_at"),
            )
    return good.drop(ERROR_COLUMN, RAW_KEY, RAW_VALUE, POSITION, CHECKED), dead


def with_bad_count(frame: "DataFrame", observation) -> "DataFrame":  # noqa: ANN001 - a name or an Observation
    """`frame` (decoded rows) with its records that did not decode counted, as the observed metric `bad`."""
    from pyspark.sql import functions as F

    return frame.observe(observation, F.count(F.col(ERROR_COLUMN)).alias("bad"))


def write_batch(
    dead: "DataFrame | None", folder: str, owner: str, batch_id: int, known_bad: bool = False, table: str | None = None
) -> None:
    """Write one micro-batch's bad records into a folder of their own, `folder/owner/batch-N`: a batch replayed
    after a failure overwrites its own, so none are doubled. Nothing is written for a batch without any (checked
    first, unless `known_bad` says there are some).

    Spark's writer puts the part file in place, then `_SUCCESS`: SHOW ERRORS reads a batch folder once that is
    there (committed_files). A write that fails is an ExecutionError naming the table and the folder: it fails
    the micro-batch, so the job fails (and restarts, or is FAILED with that reason) rather than lose the
    records; the batch is written again when the job continues."""
    if dead is None or (not known_bad and not dead.limit(1).count()):
        return
    target = f"{folder}/{owner}/batch-{batch_id:012d}"
    try:
        dead.coalesce(1).write.mode("overwrite").json(target)
    except Exception as exc:  # noqa: BLE001 - Spark's (py4j) error, in one line of ours
        from shell.engine.spark_errors import root_cause
        from shell.errors import ExecutionError

        of = f" of table {table}" if table else ""
        raise ExecutionError(
            f"cannot keep the bad records{of} in {folder}: {root_cause(exc)}",
            hint="make the folder writable, or set 'errors.path' on the table to another folder ('errors.mode' ="
            " 'ignore' drops bad records instead)",
        ) from None


@dataclass
class DeadLetterQuery:
    """A side query that keeps one table's bad records (engine/dead_letter_queries.py, start_dead_letters), with the surface
    of Spark's StreamingQuery that the job registry and a SELECT's watcher use; or, when it could not start (its
    folder cannot be written), why not: it then looks like a query that failed at once."""

    table: str
    query: "StreamingQuery | None"
    start_error: BaseException | None = None

    @property
    def isActive(self) -> bool:  # noqa: N802 - Spark's name
        return self.query is not None and self.query.isActive

    def exception(self) -> BaseException | None:
        return self.start_error if self.query is None else self.query.exception()

    def awaitTermination(self, timeout: float | None = None):  # noqa: ANN201, N802 - Spark's name and result
        if self.query is None:
            if self.start_error is not None:
                raise self.start_error
            return True
        return self.query.awaitTermination() if timeout is None else self.query.awaitTermination(timeout)

    def stop(self) -> None:
        if self.query is not None:
            self.query.stop()

    @property
    def status(self) -> dict:
        return self.query.status if self.query is not None else {}

    @property
    def lastProgress(self):  # noqa: ANN201, N802 - Spark's name
        return self.query.lastProgress if self.query is not None else None


def side_failure(query) -> str | None:  # noqa: ANN001 - a DeadLetterQuery (or any StreamingQuery-like)
    """One line saying that a side query no longer keeps its table's bad records, and why: what SHOW JOBS' detail
    and a SELECT's status line say. None while it runs, or when it ended because its input did. It asks Spark
    (py4j): for watchers, not for every display."""
    if query.isActive:
        return None
    error = query.exception()
    if error is None:
        return None
    from shell.engine.spark_errors import root_cause

    table = getattr(query, "table", None)
    of = f" of table {table}" if table else ""
    return f"bad records{of} are not kept: {root_cause(error) or type(error).__name__}"


@dataclass(frozen=True)
class DeadLetter:
    """One kept record, as SHOW ERRORS shows it."""

    seen_at: str
    position: str
    error: str
    key: str | None
    value: str | None


SINK_LOG = "_spark_metadata"  # Spark's file sink: the log of the files each committed batch added
SUCCESS = "_SUCCESS"  # Spark's batch writer: written once the folder's part files are in place
_LOG_FILE = re.compile(r"(\d+)(\.compact)?")


@dataclass(frozen=True)
class KeptFile:
    """A committed file of bad records, and when it was last written (no record in it was seen later)."""

    path: Path
    written_at: float


def committed_files(folder: Path) -> list[KeptFile]:
    """The files of bad records under `folder` that Spark has committed, newest first.

    Two writers put them there, one folder per job or SELECT (`folder/<owner>/`): a dead-letter query (Spark's
    file sink) writes its part files straight into that folder and commits each batch by adding the batch's
    files to the log in `_spark_metadata`; a file the log does not list is still being written, or was left by
    a task that failed. A job that keeps its own bad records (write_batch) writes each micro-batch with Spark's
    batch writer into `batch-N/`, which is committed once `_SUCCESS` is there (before that its part files may be
    half written, or still in `_temporary`). Folders whose names start with `_` or `.` are Spark's own.
    """
    found: list[Path] = []

    def visit(directory: Path) -> None:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        names = {entry.name for entry in entries}
        if SINK_LOG in names:
            found.extend(_logged_files(directory))
        if SUCCESS in names:
            found.extend(Path(e.path) for e in entries if e.name.startswith("part-") and _is_file(e))
        for entry in entries:
            if not entry.name.startswith(("_", ".")) and _is_dir(entry):
                visit(Path(entry.path))

    visit(folder)
    kept = []
    for path in dict.fromkeys(found):
        try:
            kept.append(KeptFile(path, path.stat().st_mtime))
        except OSError:  # removed since (a batch written again): not there to read
            continue
    return sorted(kept, key=lambda f: (f.written_at, str(f.path)), reverse=True)


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _logged_files(directory: Path) -> list[Path]:
    """The files a file sink's log says its committed batches added to `directory`: those of the latest compact
    log file (Spark compacts every few batches; it holds all the files before) and of every batch after it."""
    log = directory / SINK_LOG
    batches: dict[int, Path] = {}
    latest_compact = -1
    try:
        names = [entry.name for entry in os.scandir(log)]
    except OSError:
        return []
    for name in names:
        match = _LOG_FILE.fullmatch(name)
        if match:
            number = int(match.group(1))
            batches[number] = log / name
            if match.group(2):
                latest_compact = max(latest_compact, number)
    added: dict[str, bool] = {}
    for number in sorted(n for n in batches if n >= latest_compact):
        try:
            lines = batches[number].read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines[1:]:  # the first line is the log's version, "v1"
            try:
                entry = json.loads(line)
                name = Path(unquote(urlparse(entry["path"]).path)).name
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            added[name] = entry.get("action", "add") != "delete"
    return [directory / name for name, present in added.items() if present]


def read_lines(path: Path) -> Iterator[str]:
    """The lines of a file of bad records, read as they are needed."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        yield from handle


def read_dead_letters(
    folder: Path, limit: int | None = None, read: Callable[[Path], Iterable[str]] = read_lines
) -> list[DeadLetter]:
    """The records kept in `folder` (JSON lines written by Spark), newest first; at most `limit` of them.

    Only committed files are read (committed_files), newest first, and no more of them than it takes: a record
    is given once no file still unread can hold a newer one (a file was written after every record in it was
    seen, so one written before a record's `seen_at` holds none newer). SHOW ERRORS ... LIMIT 3 over a folder
    of many batches reads the newest one or two. `read` gives a file's lines (a test counts what it opens).
    """
    import base64

    def text(data: str | None) -> str | None:
        if data is None:
            return None
        try:
            raw = base64.b64decode(data)
        except (ValueError, TypeError):  # not what Spark's base64() writes: shown as it is
            return str(data)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return "x'" + raw.hex() + "'"

    wanted = limit if limit is not None else float("inf")
    files = committed_files(folder)
    waiting: list[tuple[float, int, dict]] = []  # (-seen at, order read, record): a heap, the newest first
    letters: list[DeadLetter] = []
    order = 0
    for index in range(len(files) + 1):
        newest_unread = files[index].written_at if index < len(files) else None
        while waiting and len(letters) < wanted and (newest_unread is None or -waiting[0][0] >= newest_unread):
            record = heapq.heappop(waiting)[2]
            letters.append(
                DeadLetter(
                    record.get("seen_at", ""), record.get("position", ""), record.get("error", ""),
                    text(record.get("key_base64")), text(record.get("value_base64")),
                )  # fmt: skip
            )
        if len(letters) >= wanted or newest_unread is None:
            break
        try:
            for line in read(files[index].path):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # not a record (a line cut short): nothing to show
                if not isinstance(record, dict):
                    continue
                heapq.heappush(waiting, (-_seen_at(record.get("seen_at")), order, record))
                order += 1
                if len(waiting) > 2 * (wanted - len(letters)) + 64:  # only the newest can still be shown
                    waiting = heapq.nsmallest(int(wanted - len(letters)), waiting)
                    heapq.heapify(waiting)
        except FileNotFoundError:  # removed between the listing and the read (a batch written again)
            continue
    return letters


def _seen_at(value: object) -> float:
    """When a record was seen, in seconds since the epoch (Spark writes `2026-11-23T10:00:01.000Z`); a value that
    is not a time sorts last."""
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("-inf")
