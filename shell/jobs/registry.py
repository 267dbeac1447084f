"""The jobs a session started with INSERT: their names, status, progress and checkpoints.

An INSERT is a detached, named job, as in Flink: the prompt comes back at once and SHOW JOBS tells how it is
doing. The registry only keeps handles to Spark's streaming queries and reads their progress; all state lives in
Spark (the query's checkpoint directory), so nothing here grows with the data.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shell.errors import CatalogError, ExecutionError
from shell.results import Progress
from shell.sql.hints import suggest

RUNNING, FINISHED, FAILED, CANCELED = "RUNNING", "FINISHED", "FAILED", "CANCELED"


@dataclass
class Job:
    """One INSERT job. `query` is Spark's StreamingQuery handle."""

    job_id: str
    name: str
    statement: str
    query: Any
    directory: Path
    bounded: bool
    side_queries: list[Any] = field(default_factory=list)  # e.g. the writers of bad records
    started_at: float = field(default_factory=time.time)
    stopped_by_user: bool = False

    @property
    def checkpoint(self) -> Path:
        return self.directory / "checkpoint"

    @property
    def status(self) -> str:
        if self.query.isActive:
            return RUNNING
        if self.stopped_by_user:
            return CANCELED
        return FAILED if self.query.exception() is not None else FINISHED

    @property
    def failure(self) -> str | None:
        error = self.query.exception() if not self.query.isActive else None
        if error is None:
            return None
        text = str(getattr(error, "desc", None) or error)
        return text.strip().splitlines()[0] if text.strip() else repr(error)

    def progress(self) -> Progress:
        return Progress.from_spark(self.query.lastProgress)

    def stop(self) -> None:
        self.stopped_by_user = True
        for query in (self.query, *self.side_queries):
            query.stop()

    def await_end(self) -> None:
        """Block until the job's queries end; failures are read from `status` and `failure`."""
        for query in (self.query, *self.side_queries):
            try:
                query.awaitTermination()
            except Exception:  # noqa: BLE001 - reported through status / failure
                pass


class JobRegistry:
    """Jobs by id, in start order."""

    def __init__(self, home: Path):
        self.jobs_dir = home / "jobs"
        self.jobs: dict[str, Job] = {}

    def new_directory(self) -> tuple[str, Path]:
        """A fresh id and its directory (for the checkpoint and anything else the job writes)."""
        job_id = uuid.uuid4().hex[:8]
        directory = self.jobs_dir / job_id
        directory.mkdir(parents=True, exist_ok=True)
        return job_id, directory

    def add(self, job: Job) -> Job:
        self.jobs[job.job_id] = job
        return job

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            hint = suggest(job_id, list(self.jobs))
            raise CatalogError(f"unknown job '{job_id}'", hint=hint or "SHOW JOBS lists the jobs of this session")
        return job

    def running(self) -> list[Job]:
        return [j for j in self.jobs.values() if j.status == RUNNING]

    def stop(self, job_id: str) -> Job:
        job = self.get(job_id)
        if job.status != RUNNING:
            raise ExecutionError(f"job '{job_id}' is not running (it is {job.status})")
        job.stop()
        return job

    def wait_all(self) -> list[Job]:
        """Block until every running job ends (script mode waits for the jobs it started); return failures."""
        for job in list(self.jobs.values()):
            job.await_end()
        return [j for j in self.jobs.values() if j.status == FAILED]

    def stop_all(self) -> None:
        for job in self.running():
            job.stop()

    def rows(self) -> list[tuple]:
        """SHOW JOBS: one tuple per job."""
        rows = []
        for job in self.jobs.values():
            p = job.progress()
            rows.append(
                (
                    job.job_id,
                    job.name,
                    job.status,
                    round(p.input_rows_per_second, 1),
                    round(p.processed_rows_per_second, 1),
                    p.batch_duration_ms,
                    p.watermark,
                    p.state_rows,
                    p.late_rows,
                    str(job.checkpoint),
                )
            )
        return rows


JOB_COLUMNS = [
    "job id",
    "name",
    "status",
    "input rows/s",
    "processed rows/s",
    "last batch ms",
    "watermark",
    "state rows",
    "late rows",
    "checkpoint",
]
