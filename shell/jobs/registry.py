"""The jobs of a home: listing them (SHOW JOBS, DESCRIBE JOB), starting their folders, stopping and resuming them.

Every job has a folder under `<home>/jobs/<id>/` with its record and state (record.py) from the moment it starts,
whether it runs in a job process of its own (process.py: the default, `execution.target` = 'detached') or in this
process ('embedded', and inside a job process itself). The registry holds the jobs this process runs (job.py) and
sees every other one through its folder (stored.py), so any shell on the same home lists and controls them all:
a job another shell started, a savepoint, a job whose process died (FAILED with the reason).

`STOP JOB ... WITH SAVEPOINT` stops a job between two micro-batches and keeps its folder, its state STOPPED;
`RESUME JOB` runs its statement again on that folder, so Spark continues from the checkpoint under the same query
id: the session asks `resuming(id)` and its INSERT path then gets the old job's id and directory from
`new_directory()`. A job that FAILED (its restarts gave up, or its process was killed) is resumed the same way,
from its last checkpoint. A plain STOP JOB removes the folder, as Flink drops a cancelled job's checkpoints. A
record that cannot be read still shows in SHOW JOBS, with the file and what is wrong with it, rather than vanishing.
"""

from __future__ import annotations

import os
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from shell.errors import CatalogError, ExecutionError
from shell.files import FileProblem
from shell.jobs.record import (
    ALIVE,
    CANCELED,
    DEGRADED,
    FAILED,
    FINISHED,
    JOB_FILE,
    RESTARTING,
    RUNNING,
    STARTING,
    STATE_FILE,
    STOPPED,
    JobRecord,
    process_start,
    state_of,
    utc_now,
)
from shell.jobs.job import Job, JobSet
from shell.jobs.savepoint import restore
from shell.jobs.stall import stall_threshold_s
from shell.jobs.stored import StoredJob
from shell.restart import RestartStrategy
from shell.sql.hints import suggest

if TYPE_CHECKING:
    from shell.config import Settings

__all__ = ["ALIVE", "CANCELED", "DEGRADED", "FAILED", "FINISHED", "RESTARTING", "RUNNING", "STARTING", "STOPPED",
           "Job", "JobSet", "JobRegistry", "stall_threshold_s"]

STOP_GRACE_S = 60.0  # STOP JOB ... WITH SAVEPOINT waits this long at most for the running batch to complete
STOP_WAIT_S = STOP_GRACE_S + 60.0  # a shell waits this long for a job process to say it stopped
RESUME_HINT = "STOP JOB 'id' WITH SAVEPOINT keeps a job's state for RESUME JOB"


class JobRegistry:
    """The jobs of a home: those this process runs (`jobs`), and every other one through its folder under
    `<home>/jobs/` (stored.py): detached jobs in their own processes, savepoints, jobs whose process died.

    `settings` (the session's) give each new job its restart strategy and stall threshold, and may name a
    savepoint for the next job (`execution.savepoint.path`). `started` holds the ids of the detached jobs this
    session started (script mode waits for them).
    """

    def __init__(self, home: Path, settings: "Settings | None" = None, write_state: bool = True):
        self.jobs_dir = home / "jobs"
        self.jobs: dict[str, Job | JobSet] = {}
        self.started: list[str] = []
        self.settings = settings
        self.write_state = write_state  # False in a job process: its supervisor writes the state
        self._resuming: tuple[str, Path] | None = None
        self._restored: Path | None = None  # the directory new_directory() filled from execution.savepoint.path
        self._ended: dict[str, tuple[int, int]] = {}  # job id -> its state file (inode, time) when seen ended

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

    def used_savepoint(self, directory: Path) -> None:
        """A job started in `directory`: a savepoint that `execution.savepoint.path` named is used once."""
        if self.settings is not None and self._restored is not None and directory == self._restored:
            self.settings.reset("execution.savepoint.path")
        self._restored = None

    def add(self, job: Job | JobSet, record: JobRecord | None = None) -> Job | JobSet:
        """Register a job this process runs and start watching it; it takes the session's restart strategy now.

        `record` is written to the job's folder first (with the state RUNNING under this process), so the job is
        known from any shell and can be resumed after this process dies.
        """
        if self.settings is not None:
            for part in getattr(job, "parts", [job]):
                part.strategy = RestartStrategy.from_settings(self.settings.get)
                part.stall_after_s = stall_threshold_s(self.settings.get("execution.checkpointing.interval"))
        self.used_savepoint(job.directory)
        self.jobs[job.job_id] = job
        if record is not None:
            record.write(job.directory)
        if self.write_state:
            self._write_state(job)
            job.on_end = self._write_state
        job.watch()
        return job

    def _write_state(self, job: Job | JobSet) -> None:
        """The state of a job this process runs, for other shells (no progress: they ask nothing of Spark here)."""
        if not job.directory.is_dir():
            return
        me = os.getpid()
        state_of(job, me, process_start(me), progress=False).write(job.directory)

    def detached(self, directory: Path) -> StoredJob:
        """A detached job this session just started (its record and state written): waited for by a script with
        `table.dml-sync` true."""
        job = self.stored(directory.name)
        assert job is not None
        if job.job_id not in self.started:
            self.started.append(job.job_id)
        return job

    # looking up -------------------------------------------------------------------------------------------------

    def stored(self, job_id: str) -> StoredJob | None:
        """The job `job_id` as its folder tells it; None when there is no record. ExecutionError when the record
        is there but cannot be read."""
        if not job_id or "/" in job_id or job_id.startswith("."):
            return None
        directory = self.jobs_dir / job_id
        try:
            record = JobRecord.read(directory)
        except FileProblem as problem:
            raise ExecutionError(f"cannot read the record of job '{job_id}': {problem}") from None
        return StoredJob(directory, record) if record is not None else None

    def get(self, job_id: str) -> "Job | JobSet | StoredJob":
        """The job with this id, or else with this name (`pipeline.name`): the running one, or the latest."""
        job = self.jobs.get(job_id) or self.stored(job_id) or self._named(job_id)
        if job is None:
            everything = self._every_job()
            hint = suggest(job_id, [j.job_id for j in everything] + [j.name for j in everything])
            raise CatalogError(f"unknown job '{job_id}'", hint=hint or "SHOW JOBS lists the jobs of this home")
        return job

    def _named(self, name: str) -> "Job | JobSet | StoredJob | None":
        named = [j for j in self._every_job() if j.name == name]
        running = [j for j in named if j.status in ALIVE]
        if len(running) > 1:
            ids = ", ".join(j.job_id for j in running)
            raise ExecutionError(f"{len(running)} running jobs are named '{name}' ({ids})", hint="use the job's id")
        return running[0] if running else named[-1] if named else None

    def running_named(self, name: str) -> "Job | JobSet | StoredJob | None":
        """A running job of the home with this name (names are unique among running jobs), or None."""
        return next((j for j in self._every_job() if j.name == name and j.status in ALIVE), None)

    def _every_job(self) -> list:
        """The jobs this process runs, then every other job of the home, oldest first."""
        return list(self.jobs.values()) + self.stored_jobs()[0]

    def stored_jobs(self) -> tuple[list[StoredJob], list[tuple[str, FileProblem]]]:
        """The jobs under `<home>/jobs/` that this process does not run, oldest first, and (job id, problem) of
        those whose record cannot be read."""
        if not self.jobs_dir.is_dir():
            return [], []
        found, unreadable = [], []
        for path in sorted(self.jobs_dir.glob(f"*/{JOB_FILE}")):
            if path.parent.name in self.jobs:
                continue
            try:
                record = JobRecord.read(path.parent)
            except FileProblem as problem:
                unreadable.append((path.parent.name, problem))
                continue
            if record is not None:
                found.append(StoredJob(path.parent, record))
        return sorted(found, key=lambda s: (s.record.started_at or "", s.job_id)), unreadable

    def resumable(self, job_id: str) -> JobRecord:
        """What RESUME JOB runs again: the record of a job stopped with a savepoint, or of one that FAILED (its
        process died, or its restarts gave up): its checkpoint is where it stopped."""
        job = self.get(job_id)
        job_id = job.job_id  # it may have been named
        status = job.status
        if status in ALIVE:
            raise ExecutionError(f"job '{job_id}' is {status.lower()}", hint="STOP JOB it first to resume it later")
        if status == FINISHED:
            raise ExecutionError(f"job '{job_id}' finished: there is nothing to resume", hint=RESUME_HINT)
        if status == CANCELED:
            raise ExecutionError(f"job '{job_id}' was stopped without a savepoint: there is nothing to resume", hint=RESUME_HINT)
        stored = job if isinstance(job, StoredJob) else self.stored(job_id)
        record = stored.record if stored is not None else None
        if record is None:  # a job of this process whose record could not be written
            record = JobRecord(job.job_id, job.name, job.statement, None, str(job.checkpoint), utc_now())
        self.jobs.pop(job_id, None)
        return record

    def running(self) -> list[Job | JobSet]:
        """Jobs this process runs that are running or about to restart."""
        return [j for j in self.jobs.values() if j.status in ALIVE]

    def running_in_home(self) -> int:
        """How many jobs of the home are running or about to restart: this process's and the detached ones (each
        checked against its process, as SHOW JOBS does), for the shell's status line, which asks every second. A
        job seen ended is not read again until its state file changes (RESUME JOB), so a home with a long history
        costs a directory listing and a stat per job."""
        count = len(self.running())
        if not self.jobs_dir.is_dir():
            return count
        for folder in self.jobs_dir.iterdir():
            if folder.name in self.jobs or not (folder / JOB_FILE).is_file():
                continue
            try:  # the state file is replaced whole (written aside, renamed): a new inode each time
                stat = (folder / STATE_FILE).stat()
                changed = (stat.st_ino, stat.st_mtime_ns)
            except OSError:
                changed = None
            if changed is not None and self._ended.get(folder.name) == changed:
                continue
            try:
                job = self.stored(folder.name)
            except FileProblem:
                continue
            if job is not None and job.alive:
                count += 1
            elif changed is not None:
                self._ended[folder.name] = changed
        return count

    # stopping ---------------------------------------------------------------------------------------------------

    def stop(self, job_id: str, savepoint: bool = False) -> "Job | JobSet | StoredJob":
        """Stop a running job. With `savepoint`, after its running batch, keeping its directory; without, its
        directory is removed (as Flink drops a cancelled job's checkpoints)."""
        job = self.get(job_id)
        job_id = job.job_id  # it may have been named
        status = job.status
        if status not in ALIVE:
            hint = f"RESUME JOB '{job_id}' continues it" if status == STOPPED else None
            raise ExecutionError(f"job '{job_id}' is not running (it is {status})", hint=hint)
        if isinstance(job, StoredJob):
            return self._stop_detached(job, savepoint)
        if not savepoint:
            job.on_end = None  # nothing of it is to be written again: its folder goes
            job.stop()
            shutil.rmtree(job.directory, ignore_errors=True)
            return job
        try:  # the disk first: one that refuses the state leaves the job running, as it was
            self._write_state(job)
        except OSError as exc:
            raise ExecutionError(
                f"cannot write the state of job '{job_id}' ({job.directory / STATE_FILE}): {exc.strerror or exc}; "
                "it keeps running"
            ) from None
        job.savepoint = job.directory  # before it ends: the state written as it ends says STOPPED
        job.stop(graceful_s=STOP_GRACE_S)
        try:
            self._write_state(job)
        except OSError:  # written a moment ago; the job's record still lets RESUME JOB continue it
            pass
        return job

    def _stop_detached(self, job: StoredJob, savepoint: bool) -> StoredJob:
        job.request_stop(savepoint)
        if not job.await_end(STOP_WAIT_S):
            raise ExecutionError(
                f"job '{job.job_id}' did not stop within {STOP_WAIT_S:.0f} s; its stop request stays",
                hint="SHOW JOBS tells when it stops; its process log is in its folder",
            )
        if not savepoint:
            shutil.rmtree(job.directory, ignore_errors=True)
        elif job.status != STOPPED:
            raise ExecutionError(f"job '{job.job_id}' ended {job.status} before its savepoint: {job.failure}")
        return job

    def wait_all(self, tick: Callable[[], None] | None = None, in_process_only: bool = False) -> list:
        """Block until every job this session started ends (a script with `table.dml-sync` true waits for its
        jobs), or with `in_process_only` every job it runs in this process (a script waits for those at its end,
        since they end with it); the failed ones. `tick` runs now and then while waiting (to pass a job's printed
        rows on)."""
        jobs = list(self.jobs.values()) if in_process_only else self.started_jobs()
        for job in jobs:
            job.await_end(**({"tick": tick} if isinstance(job, StoredJob) else {}))
        return [j for j in jobs if j.status == FAILED]

    def started_jobs(self) -> list:
        """Every job this session started, live or detached."""
        return list(self.jobs.values()) + [s for s in (self.stored(i) for i in self.started) if s is not None]

    def stop_all(self) -> None:
        """Stop the jobs this process runs (they end with it)."""
        for job in self.running():
            job.stop()

    def stop_started(self) -> None:
        """Stop the jobs this session started, detached ones too (a script interrupted, a demo at its end)."""
        self.stop_all()
        for stored in self.started_jobs():
            if isinstance(stored, StoredJob) and stored.alive:
                try:
                    self._stop_detached(stored, savepoint=False)
                except ExecutionError:
                    pass

    # DESCRIBE JOB -----------------------------------------------------------------------------------------------

    def describe(self, job_id: str) -> list[tuple[str, Any]]:
        """DESCRIBE JOB: one (property, value) pair per line; settings and the statement are redacted by the caller."""
        job = self.get(job_id)
        job_id = job.job_id  # it may have been named
        if isinstance(job, StoredJob):
            job = job.read_once()
        stored = job if isinstance(job, StoredJob) else self.stored(job_id)
        record = stored.record if stored is not None else None
        state = stored.state() if stored is not None else None
        status, _, failure = job.look() if isinstance(job, StoredJob) else (job.status, None, job.failure)
        p = job.progress()
        where = "this shell" if job_id in self.jobs else f"process {state.pid}" if state and state.pid else None
        pairs: list[tuple[str, Any]] = [
            ("job id", job.job_id),
            ("name", job.name),
            ("status", status),
            ("detail", job.detail()),
            ("statement", job.statement),
            ("target", record.target if record else None),
            ("started at", record.started_at if record else None),
            ("stopped at", (state.stopped_at if state else None) or (record.stopped_at if record else None)),
            ("runs in", where),
            ("spark master", record.master if record else None),
            ("spark ui", state.ui_url if state and status in ALIVE else None),
            ("metrics", state.metrics_url if state and status in ALIVE else None),
            ("input rows/s", round(p.input_rows_per_second, 1)),
            ("processed rows/s", round(p.processed_rows_per_second, 1)),
            ("last batch", p.batch_id if p.batch_id >= 0 else None),
            ("last batch ms", p.batch_duration_ms if p.batch_id >= 0 else None),
            ("watermark", p.watermark or None),  # none yet: <NULL>, as every other empty cell
            ("state rows", p.state_rows if p.batch_id >= 0 else None),
            ("late rows (last batch)", p.late_rows if p.batch_id >= 0 else None),
            ("restarts", job.restarts),
            ("last failure", failure),
            ("bad records not kept", job.side_failure),
            ("checkpoint", str(job.checkpoint)),
            ("folder", str(self.jobs_dir / job_id)),
        ]
        for failure_text in getattr(job, "failures", [])[:-1][-5:]:
            pairs.append(("earlier failure", failure_text))
        for key, value in sorted((record.settings if record else {}).items()):
            pairs.append((f"setting {key}", value))
        return pairs

    # SHOW JOBS --------------------------------------------------------------------------------------------------

    def rows(self) -> list[tuple]:
        """SHOW JOBS: the jobs this process runs, then every other job of the home, oldest first."""
        rows = []
        for job in self.jobs.values():
            rows.append(_row(job, job.status, job.failure))
        stored, unreadable = self.stored_jobs()
        for job in stored:
            job = job.read_once()  # status, detail, progress and restarts from one reading of state.json
            status, _, failure = job.look()
            rows.append(_row(job, status, failure))
        for job_id, problem in unreadable:
            detail = f"job record unreadable: {problem}"
            rows.append((job_id, None, FAILED, None, None, None, None, None, None, detail, None))
        return rows


def _row(job, status: str, failure: str | None) -> tuple:  # noqa: ANN001 - a Job, JobSet or StoredJob
    p = job.progress()
    running = status in ALIVE
    return (
        job.job_id,
        job.name,
        status,
        round(p.input_rows_per_second, 1) if running else None,
        round(p.processed_rows_per_second, 1) if running else None,
        p.batch_duration_ms if p.batch_id >= 0 else None,
        p.watermark or None,  # none yet: <NULL>, as every other empty cell
        p.late_rows if p.batch_id >= 0 else None,
        job.restarts,
        job.detail(),
        failure,
    )


# What SHOW JOBS lists, narrow enough for a terminal; DESCRIBE JOB has the rest (state rows, checkpoint, ...).
JOB_COLUMNS = [
    "job id",
    "name",
    "status",
    "input rows/s",
    "processed rows/s",
    "last batch ms",
    "watermark",
    "late rows",
    "restarts",
    "detail",
    "last failure",
]
