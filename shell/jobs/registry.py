"""The jobs a session started with INSERT: their names, status, progress, restarts, checkpoints and savepoints.

An INSERT is a detached, named job, as in Flink: the prompt comes back at once and SHOW JOBS tells how it is
doing. The registry only keeps handles to Spark's streaming queries and reads their progress; all state lives in
Spark (the query's checkpoint directory), so nothing here grows with the data.

Each job has a small watcher thread. It waits for the job's query to end, and meanwhile looks at Spark's status
once a second, so that SHOW JOBS can say when a running job has not completed a batch for a while (a broker that
does not answer, a batch that hangs) and what Spark says it is doing. When the query fails, the watcher restarts
it from its checkpoint after the delay of the job's restart strategy (`restart-strategy.*`, see restart.py)
through the `restart` callable the session gave the job; SHOW JOBS says RESTARTING meanwhile, with the number of
restarts and the last failure's cause. Without a `restart` callable, or when the strategy gives up, the job is
FAILED.

A job's side queries keep the bad records of tables the job cannot keep itself (engine/native.py,
start_dead_letters). One that fails (or cannot start: its folder cannot be written) does not stop the job, but
the job no longer keeps those records: the watcher notices, and the job is DEGRADED (still running) with the
reason in SHOW JOBS' detail, rather than RUNNING as if nothing happened. A restart starts its side queries again.
A bounded job that ended with such a failure is FINISHED with the reason in the detail, and script mode warns.

`STOP JOB ... WITH SAVEPOINT` stops a job between two micro-batches and keeps its directory with a `job.json`
(savepoint.py); `RESUME JOB` runs its statement again on that directory: the session asks `resuming(id)` and its
INSERT path then gets the old job's id and directory from `new_directory()`. A plain STOP JOB removes the
directory, as Flink drops a cancelled job's checkpoints. A savepoint whose `job.json` cannot be read still shows
in SHOW JOBS, with the file and what is wrong with it, rather than vanishing.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from shell.engine import stage_cache
from shell.engine.bad_records import side_failure as side_query_failure
from shell.engine.spark_errors import root_cause
from shell.errors import CatalogError, ExecutionError
from shell.files import FileProblem
from shell.jobs.restart import RestartStrategy
from shell.jobs.savepoint import CHECKPOINT, JOB_FILE, SavedJob, restore, utc_now
from shell.results import Progress
from shell.sql.hints import suggest

if TYPE_CHECKING:
    from shell.config import Settings

RUNNING, FINISHED, FAILED, CANCELED = "RUNNING", "FINISHED", "FAILED", "CANCELED"
RESTARTING = "RESTARTING"  # failed; waiting to be started again from its checkpoint
STOPPED = "STOPPED"  # stopped with a savepoint: RESUME JOB continues it
DEGRADED = "DEGRADED"  # running, but a side query (the writer of a table's bad records) failed
ALIVE = (RUNNING, RESTARTING, DEGRADED)

SAMPLE_S = 1.0  # how often the watcher looks at a running query
STALL_TRIGGERS = 10  # a job that has not completed a batch for this many trigger intervals is reported ...
STALL_MIN_S = 5.0  # ... and for at least this long
STOP_GRACE_S = 60.0  # STOP JOB ... WITH SAVEPOINT waits this long at most for the running batch to complete
KEPT_FAILURES = 20
RESUME_HINT = "STOP JOB 'id' WITH SAVEPOINT keeps a job's state for RESUME JOB"

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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _stopping: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    _thread: threading.Thread | None = field(default=None, repr=False, compare=False)
    _restarting: bool = field(default=False, repr=False, compare=False)
    _gave_up: bool = field(default=False, repr=False, compare=False)
    _attempt: int = field(default=0, repr=False, compare=False)  # restarts since the backoff was last reset
    _restart_at: float | None = field(default=None, repr=False, compare=False)
    _running_since: float = field(default_factory=time.monotonic, repr=False, compare=False)
    _stall: tuple[float, Any, str] | None = field(default=None, repr=False, compare=False)  # (since, batch, message)
    _ended: tuple[Any, BaseException | None] | None = field(default=None, repr=False, compare=False)
    _side_failure: str | None = field(default=None, repr=False, compare=False)  # set by the watcher

    @property
    def checkpoint(self) -> Path:
        return self.directory / CHECKPOINT

    @property
    def status(self) -> str:
        if self._restarting:
            return RESTARTING
        query = self.query
        if query.isActive:
            return DEGRADED if self._side_failure is not None else RUNNING
        if self.savepoint is not None:
            return STOPPED
        if self.stopped_by_user:
            return CANCELED
        if self._error_of(query) is None:
            return FINISHED
        if self._gave_up or self._thread is None or self._done.is_set() or not self._may_restart():
            return FAILED
        return RESTARTING  # the query just failed; the watcher is about to restart it

    @property
    def failure(self) -> str | None:
        """The cause of the job's last failure in one line (None if it never failed)."""
        if self.failures:
            return self.failures[-1]
        query = self.query
        error = self._error_of(query) if not query.isActive else None
        return root_cause(error) if error is not None else None

    def detail(self, now: float | None = None) -> str | None:
        """What SHOW JOBS says beside the status: a stalled job, the next restart, a kept savepoint."""
        status = self.status
        if status == RESTARTING:
            if self._restart_at is None:
                return "restarting"
            wait = max(0.0, self._restart_at - time.time())
            of = f" of {self.strategy.attempts}" if self.strategy.attempts else ""
            return f"restart {self._attempt}{of} in {wait:.0f} s" if wait >= 0.5 else f"restart {self._attempt}{of} now"
        if status in (RUNNING, DEGRADED):
            stall = self._stall
            now = time.monotonic() if now is None else now
            stalled = None
            if stall is not None and now - stall[0] >= self.stall_after_s:
                stalled = f"no batch completed for {now - stall[0]:.0f} s; Spark: {stall[2]}"
            return "; ".join(d for d in (self._side_failure, stalled) if d) or None
        if status == STOPPED:
            return f"savepoint kept; RESUME JOB '{self.job_id}' continues it"
        if status == FAILED and self.restarts:
            return f"gave up after {self.restarts} restart{'s' if self.restarts != 1 else ''}"
        if status == FINISHED:
            return self._side_failure
        return None

    @property
    def side_failure(self) -> str | None:
        """Why the job's bad records of some table are not kept (a side query failed), or None."""
        return self._side_failure

    def progress(self) -> Progress:
        return Progress.from_spark(self.query.lastProgress)

    # stopping and waiting --------------------------------------------------------------------------------------

    def stop(self, graceful_s: float = 0.0) -> None:
        """Stop the job's queries (and any restart to come); with `graceful_s`, after the running batch first."""
        self.stopped_by_user = True
        with self._lock:
            if graceful_s > 0:
                self._wait_between_batches(graceful_s)
            for query in (self.query, *self.side_queries):
                try:
                    query.stop()
                except Exception:  # noqa: BLE001 - a query that cannot be stopped has ended already
                    pass
            self._restarting = False
        stage_cache.remove(self.directory)
        self._stopping.set()

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
        if self._thread is not None:
            while not self._done.wait(0.5):  # a timeout keeps Ctrl-C working
                pass
            return
        for query in (self.query, *self.side_queries):
            try:
                query.awaitTermination()
            except Exception:  # noqa: BLE001 - reported through status / failure
                pass

    # the watcher -----------------------------------------------------------------------------------------------

    def watch(self) -> None:
        """Start the job's watcher thread (once)."""
        if self._thread is None:
            self._running_since = time.monotonic()
            self._thread = threading.Thread(target=self._watch, name=f"job-{self.job_id}", daemon=True)
            self._thread.start()

    def _watch(self) -> None:
        try:
            while True:
                error = self._await_query()
                if self.stopped_by_user:
                    return
                if error is None:  # the input ended: the bad-record writers end with it
                    self._await_side_queries()
                    self._look_at_side_queries()
                    return
                if not self._recover(error):
                    return
        finally:
            self._done.set()

    def _await_query(self) -> BaseException | None:
        """Wait for the current query to end, looking at it once per SAMPLE_S; its failure, or None."""
        query = self.query
        while True:
            try:
                if query.awaitTermination(SAMPLE_S):
                    break
            except Exception:  # noqa: BLE001 - the query failed: read below
                break
            self._sample(time.monotonic())
            self._look_at_side_queries()
        try:
            return self._error_of(query)
        except Exception as exc:  # noqa: BLE001
            return exc

    def _look_at_side_queries(self) -> None:
        """Note the first side query that failed (once: what it says does not change until a restart)."""
        if self._side_failure is not None:
            return
        for query in list(self.side_queries):
            try:
                failure = side_query_failure(query)
            except Exception:  # noqa: BLE001 - the query is ending; looked at again next time
                continue
            if failure is not None:
                self._side_failure = failure
                return

    def _await_side_queries(self) -> None:
        for query in self.side_queries:
            try:
                query.awaitTermination()
            except Exception:  # noqa: BLE001
                pass

    def _recover(self, error: BaseException) -> bool:
        """Restart the failed job per its strategy: True when it runs again, False when it stays ended."""
        while True:
            self._restarting = True
            self.failures = [*self.failures[-(KEPT_FAILURES - 1) :], root_cause(error) or type(error).__name__]
            if self.strategy.resets(time.monotonic() - self._running_since):
                self._attempt = 0
            delay = self.strategy.delay_s(self._attempt + 1) if self.restart is not None else None
            for query in self.side_queries:
                try:
                    query.stop()
                except Exception:  # noqa: BLE001
                    pass
            if delay is None or self.stopped_by_user:
                self._gave_up = not self.stopped_by_user
                self._restarting = False
                return False
            self._attempt += 1
            self._restart_at = time.time() + delay
            if self._stopping.wait(delay):
                return False
            with self._lock:
                if self.stopped_by_user:
                    return False
                try:
                    query, side = self.restart()  # type: ignore[misc]
                except Exception as exc:  # noqa: BLE001 - counts as a failed attempt
                    self.restarts += 1
                    self._running_since = time.monotonic()
                    error = exc
                    continue
                self.query, self.side_queries = query, list(side)
                self._side_failure = None
                self.restarts += 1
                self._running_since = time.monotonic()
                self._stall = None
                self._restart_at = None
                self._restarting = False
                return True

    def _error_of(self, query: Any) -> BaseException | None:
        """An ended query's failure, asked of Spark once (each call builds the exception again, and may log it)."""
        if self._ended is not None and self._ended[0] is query:
            return self._ended[1]
        error = query.exception()
        self._ended = (query, error)
        return error

    def _may_restart(self) -> bool:
        return self.restart is not None and self.strategy.delay_s(self._attempt + 1, rand=lambda: 0.5) is not None

    def _sample(self, now: float) -> None:
        """Note how long a micro-batch has been running without completing (for `detail`)."""
        try:
            status = self.query.status
            if not status.get("isTriggerActive"):
                self._stall = None
                return
            batch = _progress_key(self.query.lastProgress)
        except Exception:  # noqa: BLE001 - the query is ending; the watcher notices
            return
        message = str(status.get("message") or "")
        if self._stall is None or self._stall[1] != batch:
            self._stall = (now, batch, message)
        else:
            self._stall = (self._stall[0], batch, message)


def _progress_key(progress: Any) -> Any:
    """What changes when a batch completes: the last progress report's batch id and time."""
    if progress is None:
        return None
    if not isinstance(progress, dict):
        progress = json.loads(progress.json)
    return (progress.get("batchId"), progress.get("timestamp"))


class JobRegistry:
    """Jobs by id, in start order, and the savepoints under `<home>/jobs/`.

    `settings` (the session's) give each new job its restart strategy and stall threshold, and may name a
    savepoint for the next job (`execution.savepoint.path`).
    """

    def __init__(self, home: Path, settings: "Settings | None" = None):
        self.jobs_dir = home / "jobs"
        self.jobs: dict[str, Job] = {}
        self.settings = settings
        self._resuming: tuple[str, Path] | None = None
        self._restored: Path | None = None  # the directory new_directory() filled from execution.savepoint.path

    # starting ---------------------------------------------------------------------------------------------------

    def new_directory(self) -> tuple[str, Path]:
        """The id and directory of the job about to start (for its checkpoint and anything else it writes).

        A fresh id, unless RESUME JOB is under way (`resuming`): then the resumed job's own. A fresh directory
        starts from a copy of the savepoint that `execution.savepoint.path` names, if any.
        """
        if self._resuming is not None:
            job_id, directory = self._resuming
            directory.mkdir(parents=True, exist_ok=True)
            return job_id, directory
        job_id = uuid.uuid4().hex[:8]
        directory = self.jobs_dir / job_id
        directory.mkdir(parents=True, exist_ok=True)
        savepoint = self.settings.get("execution.savepoint.path") if self.settings is not None else None
        if savepoint:
            try:
                restore(savepoint, directory)
            except Exception:
                shutil.rmtree(directory, ignore_errors=True)
                raise
            self._restored = directory
        return job_id, directory

    @contextmanager
    def resuming(self, job_id: str) -> Iterator[None]:
        """While inside, `new_directory()` gives the job `job_id`'s id and directory (RESUME JOB)."""
        self._resuming = (job_id, self.jobs_dir / job_id)
        try:
            yield
        finally:
            self._resuming = None

    def add(self, job: Job) -> Job:
        """Register a started job and start watching it; it takes the session's restart strategy now."""
        if self.settings is not None:
            job.strategy = RestartStrategy.from_settings(self.settings.get)
            job.stall_after_s = stall_threshold_s(self.settings.get("execution.checkpointing.interval"))
            if self._restored is not None and job.directory == self._restored:
                self.settings.reset("execution.savepoint.path")  # used once
        self._restored = None
        self.jobs[job.job_id] = job
        job.watch()
        return job

    # looking up -------------------------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            known = list(self.jobs) + [s.job_id for s in self.saved_jobs()]
            hint = suggest(job_id, known)
            raise CatalogError(f"unknown job '{job_id}'", hint=hint or "SHOW JOBS lists the jobs of this session")
        return job

    def saved(self, job_id: str) -> SavedJob | None:
        """The savepoint record of job `job_id`, if it was stopped with one (in this shell or an earlier one).

        ExecutionError when the record is there but cannot be read.
        """
        if not job_id or "/" in job_id or job_id.startswith("."):
            return None
        try:
            return SavedJob.read(self.jobs_dir / job_id)
        except FileProblem as problem:
            raise ExecutionError(f"cannot read the savepoint record of job '{job_id}': {problem}") from None

    def saved_jobs(self) -> list[SavedJob]:
        """Savepoints under `<home>/jobs/` of jobs not running in this session, oldest first."""
        return self._savepoints()[0]

    def _savepoints(self) -> tuple[list[SavedJob], list[tuple[str, FileProblem]]]:
        """The savepoints that can be read, oldest first, and (job id, problem) of those whose record cannot."""
        if not self.jobs_dir.is_dir():
            return [], []
        found, unreadable = [], []
        for path in sorted(self.jobs_dir.glob("*/job.json")):
            if path.parent.name in self.jobs:
                continue
            try:
                saved = SavedJob.read(path.parent)
            except FileProblem as problem:
                unreadable.append((path.parent.name, problem))
                continue
            if saved is not None:
                found.append(saved)
        return sorted(found, key=lambda s: (s.stopped_at or "", s.job_id)), unreadable

    def resumable(self, job_id: str) -> SavedJob:
        """What RESUME JOB runs again: a savepoint's record, or a job of this session that FAILED."""
        job = self.jobs.get(job_id)
        status = job.status if job is not None else None
        if status in ALIVE:
            raise ExecutionError(f"job '{job_id}' is {status.lower()}", hint="STOP JOB it first to resume it later")
        saved = self.saved(job_id)
        if saved is not None:
            return saved
        if job is not None and status == FAILED:  # its checkpoint is where it failed
            return SavedJob(job.job_id, job.name, job.statement, None, str(job.checkpoint), utc_now())
        if job is not None:
            what = "finished" if status == FINISHED else "was stopped without a savepoint"
            raise ExecutionError(f"job '{job_id}' {what}: there is nothing to resume", hint=RESUME_HINT)
        self.get(job_id)  # raises: unknown
        raise AssertionError("unreachable")

    def running(self) -> list[Job]:
        """Jobs that are running or about to restart."""
        return [j for j in self.jobs.values() if j.status in ALIVE]

    # stopping ---------------------------------------------------------------------------------------------------

    def stop(self, job_id: str, savepoint: bool = False, target: str | None = None) -> Job:
        """Stop a running job. With `savepoint`, after its running batch, keeping its directory and a `job.json`
        (`target` is recorded there); without, its directory is removed."""
        job = self.jobs.get(job_id)
        if job is None and self.saved(job_id) is not None:
            raise ExecutionError(f"job '{job_id}' is not running (it is {STOPPED})", hint=f"RESUME JOB '{job_id}' continues it")
        job = self.get(job_id)
        if job.status not in ALIVE:
            raise ExecutionError(f"job '{job_id}' is not running (it is {job.status})")
        if not savepoint:
            job.stop()
            shutil.rmtree(job.directory, ignore_errors=True)
            return job
        record = SavedJob(job.job_id, job.name, job.statement, target, str(job.checkpoint), utc_now())
        try:  # the record first: a disk that refuses it leaves the job running, as it was
            record.write(job.directory)
        except OSError as exc:
            raise ExecutionError(
                f"cannot write the savepoint record {job.directory / JOB_FILE}: {exc.strerror or exc}; "
                f"job '{job_id}' keeps running"
            ) from None
        job.stop(graceful_s=STOP_GRACE_S)
        job.savepoint = job.directory
        return job

    def wait_all(self) -> list[Job]:
        """Block until every running job ends (script mode waits for the jobs it started); return failures."""
        for job in list(self.jobs.values()):
            job.await_end()
        return [j for j in self.jobs.values() if j.status == FAILED]

    def stop_all(self) -> None:
        for job in self.running():
            job.stop()

    # SHOW JOBS --------------------------------------------------------------------------------------------------

    def rows(self) -> list[tuple]:
        """SHOW JOBS: one tuple per job of this session, then the savepoints of earlier ones."""
        rows = []
        for job in self.jobs.values():
            p = job.progress()
            status = job.status
            rows.append(
                (
                    job.job_id,
                    job.name,
                    status,
                    job.detail(),
                    round(p.input_rows_per_second, 1),
                    round(p.processed_rows_per_second, 1),
                    p.batch_duration_ms,
                    p.watermark,
                    p.state_rows,
                    p.late_rows,
                    job.restarts,
                    job.failure,
                    str(job.checkpoint),
                )
            )
        saved_jobs, unreadable = self._savepoints()
        for saved in saved_jobs:
            detail = f"savepoint kept; RESUME JOB '{saved.job_id}' continues it"
            rows.append((saved.job_id, saved.name, STOPPED, detail, None, None, None, None, None, None, None, None,
                         saved.checkpoint))  # fmt: skip
        for job_id, problem in unreadable:
            detail = f"savepoint record unreadable: {problem}"
            rows.append((job_id, None, STOPPED, detail, None, None, None, None, None, None, None, None,
                         str(self.jobs_dir / job_id / CHECKPOINT)))  # fmt: skip
        return rows


def stall_threshold_s(interval: str | None) -> float:
    """How long a running job may go without completing a batch before SHOW JOBS says so."""
    from shell.units import parse_duration_ms

    try:
        trigger_s = parse_duration_ms(interval or "1 s") / 1000
    except ValueError:
        trigger_s = 1.0
    return max(STALL_TRIGGERS * trigger_s, STALL_MIN_S)


JOB_COLUMNS = [
    "job id",
    "name",
    "status",
    "detail",
    "input rows/s",
    "processed rows/s",
    "last batch ms",
    "watermark",
    "state rows",
    "late rows",
    "restarts",
    "last failure",
    "checkpoint",
]
