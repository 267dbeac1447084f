"""A job this process runs: its Spark queries, what state it is in, and how it is stopped.

A job is one INSERT's streaming query (replaced by a new one when it restarts) with its side queries, the
writers of bad records it cannot keep itself; a statement set's job is a JobSet of such jobs, one per INSERT, each
with its own checkpoint, stopped, saved and resumed together. All their state lives in Spark (the checkpoints), so
nothing here grows with the data. Its supervisor (supervisor.py) waits for it, watches it for stalls
(stall.py) and restarts it; its record and state on disk are record.py's; the registry lists and controls jobs.

`STOP JOB ... WITH SAVEPOINT` stops a job between two micro-batches (`stop(graceful_s=...)`): Spark's checkpoint
then holds every batch it committed, and a batch cut half-way is written again, by the same query id, on resume.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from shell.engine import stage_cache
from shell.engine.spark_errors import root_cause
from shell.jobs.record import CANCELED, DEGRADED, FAILED, FINISHED, RESTARTING, RUNNING, STOPPED
from shell.jobs.savepoint import CHECKPOINT
from shell.engine.progress_reports import LAST_REPORTS
from shell.jobs.stall import STALL_TRIGGERS, StallSampler
from shell.jobs.supervisor import Supervisor
from shell.restart import RestartStrategy
from shell.results import Progress

Restart = Callable[[], "tuple[Any, list[Any]]"]


@dataclass
class Job:
    """One INSERT job. `query` is Spark's StreamingQuery handle (replaced by the new one when the job restarts).

    `restart` starts the job's query again on the same checkpoint and returns it with its side queries; without
    it a failed job stays FAILED.
    """

    job_id: str
    name: str
    statement: str
    query: Any
    directory: Path
    bounded: bool
    side_queries: list[Any] = field(default_factory=list)  # e.g. the writers of bad records
    started_at: float = field(default_factory=time.time)
    stopped_by_user: bool = False
    restart: Restart | None = None
    strategy: RestartStrategy = field(default_factory=RestartStrategy)
    stall_after_s: float = STALL_TRIGGERS * 1.0
    restarts: int = 0
    failures: list[str] = field(default_factory=list)  # the cause of each failure, the latest last
    savepoint: Path | None = None  # set when the job was stopped with a savepoint
    checkpoint_name: str = CHECKPOINT  # a statement set's INSERTs each have their own
    on_end: Callable[["Job"], None] | None = None  # called once the job has ended for good (its state is written)
    side_failure: str | None = None  # why the bad records of some table are not kept (a side query failed)
    stall: StallSampler = field(default_factory=StallSampler, repr=False, compare=False)
    supervisor: Supervisor | None = field(default=None, repr=False, compare=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    stopping: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    _ended: tuple[Any, BaseException | None] | None = field(default=None, repr=False, compare=False)

    @property
    def checkpoint(self) -> Path:
        return self.directory / self.checkpoint_name

    @property
    def ended(self) -> bool:
        """Whether the job has ended for good (restarts included)."""
        return self.supervisor.done.is_set() if self.supervisor is not None else not self.query.isActive

    @property
    def status(self) -> str:
        watch = self.supervisor
        if watch is not None and watch.restarting:
            return RESTARTING
        query = self.query
        if query.isActive:
            return DEGRADED if self.side_failure is not None else RUNNING
        if self.savepoint is not None:
            return STOPPED
        if self.stopped_by_user:
            return CANCELED
        if self.error_of(query) is None:
            return FINISHED
        if watch is None or watch.gave_up or watch.done.is_set() or not watch.may_restart():
            return FAILED
        return RESTARTING  # the query just failed; the supervisor is about to restart it

    @property
    def failure(self) -> str | None:
        """The cause of the job's last failure in one line (None if it never failed)."""
        if self.failures:
            return self.failures[-1]
        query = self.query
        error = self.error_of(query) if not query.isActive else None
        return root_cause(error) if error is not None else None

    def detail(self, now: float | None = None) -> str | None:
        """What SHOW JOBS says beside the status: a stalled job, the next restart, a kept savepoint."""
        status = self.status
        if status == RESTARTING:
            watch = self.supervisor
            if watch is None or watch.restart_at is None:
                return "restarting"
            wait = max(0.0, watch.restart_at - time.time())
            of = f" of {self.strategy.attempts}" if self.strategy.attempts else ""
            return f"restart {watch.attempt}{of} in {wait:.0f} s" if wait >= 0.5 else f"restart {watch.attempt}{of} now"
        if status in (RUNNING, DEGRADED):
            stalled = self.stall.detail(time.monotonic() if now is None else now, self.stall_after_s)
            return "; ".join(d for d in (self.side_failure, stalled) if d) or None
        if status == STOPPED:
            return f"savepoint kept; RESUME JOB '{self.job_id}' continues it"
        if status == FAILED and self.restarts:
            return f"gave up after {self.restarts} restart{'s' if self.restarts != 1 else ''}"
        if status == FINISHED:
            return self.side_failure
        return None

    def progress(self) -> Progress:
        return Progress.from_spark(LAST_REPORTS.latest(self.query))

    def error_of(self, query: Any) -> BaseException | None:
        """An ended query's failure, asked of Spark once (each call builds the exception again, and may log it)."""
        if self._ended is not None and self._ended[0] is query:
            return self._ended[1]
        error = query.exception()
        self._ended = (query, error)
        return error

    # stopping and waiting --------------------------------------------------------------------------------------

    def stop(self, graceful_s: float = 0.0) -> None:
        """Stop the job's queries (and any restart to come); with `graceful_s`, after the running batch first."""
        self.stopped_by_user = True
        with self.lock:
            if graceful_s > 0:
                self._wait_between_batches(graceful_s)
            for query in (self.query, *self.side_queries):
                try:
                    query.stop()
                except Exception:  # noqa: BLE001 - a query that cannot be stopped has ended already
                    pass
            if self.supervisor is not None:
                self.supervisor.restarting = False
        stage_cache.remove(self.directory)
        self.stopping.set()

    def _wait_between_batches(self, timeout_s: float) -> None:
        """Wait until no micro-batch is writing (a batch stopped half-way is written again on resume)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                status = self.query.status if self.query.isActive else None
            except Exception:  # noqa: BLE001
                return
            if not status or not status.get("isTriggerActive"):
                return
            if str(status.get("message", "")).startswith(("Getting offsets", "Initializing")):
                return  # nothing is written before the offsets are known (and a broker may never answer)
            time.sleep(0.05)

    def await_end(self) -> None:
        """Block until the job has ended for good (restarts included); read the outcome from `status`/`failure`."""
        if self.supervisor is not None:
            while not self.supervisor.done.wait(0.5):  # a timeout keeps Ctrl-C working
                pass
            return
        for query in (self.query, *self.side_queries):
            try:
                query.awaitTermination()
            except Exception:  # noqa: BLE001 - reported through status / failure
                pass

    def watch(self) -> None:
        """Start the job's supervisor (once)."""
        if self.supervisor is None:
            self.supervisor = Supervisor(self)
            self.supervisor.start()


class JobSet:
    """A statement set's job: several INSERTs, one query each, run and stopped as one job (Flink runs them as one
    job graph). Its status is the most telling of its parts' (a failure first), its rates their sum."""

    ORDER = (FAILED, RESTARTING, DEGRADED, RUNNING, STOPPED, CANCELED, FINISHED)

    def __init__(self, parts: list[Job]):
        self.parts = parts
        first = parts[0]
        self.job_id, self.name, self.directory = first.job_id, first.name, first.directory
        self.statement = first.statement
        self.on_end: Callable[["JobSet"], None] | None = None
        self._ended_parts = 0
        self._ended_lock = threading.Lock()
        for part in parts:
            part.on_end = self._part_ended

    def _part_ended(self, _part: Job) -> None:
        with self._ended_lock:
            self._ended_parts += 1
            last = self._ended_parts == len(self.parts)
        if last and self.on_end is not None:
            self.on_end(self)

    @property
    def checkpoint(self) -> Path:
        return self.parts[0].checkpoint

    @property
    def bounded(self) -> bool:
        return all(p.bounded for p in self.parts)

    @property
    def status(self) -> str:
        found = {p.status for p in self.parts}
        if found & {RUNNING, DEGRADED, RESTARTING} and FAILED in found:
            return FAILED if any(p.status == FAILED and not (p.supervisor is not None and p.supervisor.may_restart()) for p in self.parts) else RESTARTING
        return next(s for s in self.ORDER if s in found)

    @property
    def failure(self) -> str | None:
        return next((p.failure for p in self.parts if p.failure), None)

    @property
    def side_failure(self) -> str | None:
        return next((p.side_failure for p in self.parts if p.side_failure), None)

    @property
    def restarts(self) -> int:
        return sum(p.restarts for p in self.parts)

    @property
    def ended(self) -> bool:
        return all(p.ended for p in self.parts)

    @property
    def savepoint(self) -> Path | None:
        return self.parts[0].savepoint

    @savepoint.setter
    def savepoint(self, value: Path | None) -> None:
        for part in self.parts:
            part.savepoint = value

    @property
    def stopped_by_user(self) -> bool:
        return any(p.stopped_by_user for p in self.parts)

    def detail(self, now: float | None = None) -> str | None:
        details = [f"{p.checkpoint_name}: {d}" for p in self.parts if (d := p.detail(now))]
        return "; ".join(details) or None

    def progress(self) -> Progress:
        each = [p.progress() for p in self.parts]
        watermarks = [p.watermark for p in each if p.watermark]
        return Progress(
            batch_id=max(p.batch_id for p in each),
            input_rows_per_second=sum(p.input_rows_per_second for p in each),
            processed_rows_per_second=sum(p.processed_rows_per_second for p in each),
            batch_duration_ms=max(p.batch_duration_ms for p in each),
            watermark=min(watermarks) if watermarks else "",
            late_rows=sum(p.late_rows for p in each),
            state_rows=sum(p.state_rows for p in each),
        )

    def stop(self, graceful_s: float = 0.0) -> None:
        for part in self.parts:
            part.stop(graceful_s)

    def await_end(self) -> None:
        for part in self.parts:
            part.await_end()

    def watch(self) -> None:
        for part in self.parts:
            part.watch()
