"""A job seen through its folder: the view any shell has of a job it does not run itself.

A detached job runs in a process of its own (process.py), and a job that another shell started, or that ran in a
shell that has since ended, is known only by its folder (record.py). This view reads the folder and says what SHOW
JOBS, STOP JOB, RESUME JOB and script mode need: the status (checked against the process that runs the job, so a
job whose process died is FAILED with the reason, never RUNNING forever), progress, failure; and it asks the
job's process to stop by leaving a request in the folder, then waits for the process to say it did.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from shell.errors import ExecutionError
from shell.files import write_atomically
from shell.jobs.record import (
    ALIVE,
    FAILED,
    STARTING,
    STATE_FILE,
    STOP_FILE,
    STOPPED,
    JobRecord,
    JobState,
    process_alive,
)
from shell.results import Progress

START_GRACE_S = 120.0  # a job that says STARTING without a process this long is FAILED


@dataclass
class StoredJob:
    """`record` is the job's `job.json`; the state is read again on every look (the job's process rewrites it)."""

    directory: Path
    record: JobRecord
    held: JobState | None = None  # the state read once (read_once), or None: read on every look
    holds: bool = False

    @property
    def job_id(self) -> str:
        return self.record.job_id

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def statement(self) -> str:
        return self.record.statement

    @property
    def checkpoint(self) -> Path:
        return Path(self.record.checkpoint)

    def state(self) -> JobState | None:
        return self.held if self.holds else JobState.read(self.directory)

    def read_once(self) -> "StoredJob":
        """This job with its state read now and kept: a listing asks it several things that must agree."""
        return StoredJob(self.directory, self.record, self.state(), True)

    def look(self) -> tuple[str, JobState | None, str | None]:
        """(status, state, the failure to show): a job whose process is gone is FAILED, with why."""
        state = self.state()
        if state is None:
            if self.record.stopped_at is not None:
                return STOPPED, None, None
            return FAILED, None, f"{STATE_FILE} is missing or unreadable: the job's process never said how it is"
        if state.status not in ALIVE:
            return state.status, state, state.failure
        if process_alive(state.pid, state.pid_start):
            return state.status, state, state.failure
        if state.status == STARTING and state.pid is None and time.time() - state.updated_at < START_GRACE_S:
            return STARTING, state, None
        gone = f"the process that ran it (pid {state.pid}) is gone: killed, or its machine restarted"
        return FAILED, state, gone

    @property
    def status(self) -> str:
        return self.look()[0]

    @property
    def failure(self) -> str | None:
        return self.look()[2]

    @property
    def side_failure(self) -> str | None:
        state = self.state()
        return state.side_failure if state is not None else None

    @property
    def restarts(self) -> int:
        state = self.state()
        return state.restarts if state is not None else 0

    def detail(self) -> str | None:
        status, state, _ = self.look()
        if status == STOPPED:
            return f"savepoint kept; RESUME JOB '{self.job_id}' continues it"
        if status == FAILED and state is not None and state.status in ALIVE:
            return f"RESUME JOB '{self.job_id}' continues it from its last checkpoint"
        return state.detail if state is not None else None

    def progress(self) -> Progress:
        state = self.state()
        if state is None or not state.progress:
            return Progress()
        known = {k: v for k, v in state.progress.items() if k in Progress.__dataclass_fields__}
        try:
            return Progress(**known)
        except TypeError:
            return Progress()

    @property
    def alive(self) -> bool:
        return self.status in ALIVE

    # asking its process to stop ----------------------------------------------------------------------------------

    def request_stop(self, savepoint: bool) -> None:
        """Leave a stop request for the job's process (it looks for one about once a second)."""
        try:
            write_atomically(self.directory / STOP_FILE, json.dumps({"savepoint": savepoint, "at": time.time()}))
        except OSError as exc:
            raise ExecutionError(
                f"cannot ask job '{self.job_id}' to stop: {self.directory / STOP_FILE}: {exc.strerror or exc}; "
                "it keeps running"
            ) from None

    def await_end(self, timeout_s: float | None = None, every_s: float = 0.2, tick=None) -> bool:  # noqa: ANN001
        """Wait until the job is no longer alive; False when `timeout_s` passed first. `tick` runs each round."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self.alive:
            if tick is not None:
                tick()
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(every_s)
        if tick is not None:
            tick()
        return True
