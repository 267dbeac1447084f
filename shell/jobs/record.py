"""A job's folder on disk: what the job runs (`job.json`) and how it is doing (`state.json`).

A job must outlive the shell that started it and survive a crash, so everything about it lives in its folder under
`<home>/jobs/<id>/` from the moment it starts, never only in a process's memory:

* `job.json` (JobRecord): the statement, the job's name and target, its checkpoint, the settings, the catalog
  definitions and the user functions it was planned with, the Spark master. Written once when the job starts (and
  again by RESUME JOB when an older record lacks the catalog), so RESUME JOB can start it again after its process died, from any shell.
* `state.json` (JobState): status, the pid of the process that runs it (and when that process started, so a reused
  pid is not mistaken for it), progress, restarts and failures. Written by whoever runs the job: the job process
  about once a second, the shell for a job it runs itself.

Both are written atomically (shell.files). A record that cannot be read is reported (FileProblem) rather than
passing for no job; a state that cannot be read is treated as unknown (the record still lists the job).
Records written before `state.json` existed carry `stopped_at` instead: they are savepoints (STOPPED).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from shell.files import FileProblem, read_json, write_atomically

JOB_FILE = "job.json"
STATE_FILE = "state.json"
STOP_FILE = "stop.json"  # a request to the job's process: stop (with a savepoint or not)
PRINT_FILE = "print.log"  # what the print connector writes in a job process
PROCESS_LOG = "process.log"  # the job process's own stdout and stderr
FORMAT_VERSION = 2
RECORD_ACTION = "restore the file, or remove the job's directory to drop the job"

STARTING, RUNNING, RESTARTING, DEGRADED = "STARTING", "RUNNING", "RESTARTING", "DEGRADED"
FINISHED, FAILED, CANCELED, STOPPED = "FINISHED", "FAILED", "CANCELED", "STOPPED"
ALIVE = (STARTING, RUNNING, RESTARTING, DEGRADED)


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True)
class JobRecord:
    """What `job.json` records: enough to start the job again, in a new process, from its own checkpoint."""

    job_id: str
    name: str
    statement: str
    target: str | None
    checkpoint: str
    started_at: str = ""  # ISO 8601, UTC
    stopped_at: str | None = None  # only in records written by STOP ... WITH SAVEPOINT before state.json existed
    settings: dict[str, str] = field(default_factory=dict)  # the session's settings that differ from defaults
    catalog: list[dict[str, Any]] | None = None  # [{"kind": "table"|"view", "definition": {...}}]; None: unknown
    master: str | None = None
    functions: list[dict[str, Any]] | None = None  # the user functions it may call (shell/catalog/function_def.py)

    def write(self, directory: Path) -> Path:
        """Write `job.json` atomically, readable by its owner only (it may hold option values such as
        `${env:X}` references); OSError when the disk refuses it."""
        path = directory / JOB_FILE
        write_atomically(path, json.dumps({"version": FORMAT_VERSION, **asdict(self)}, indent=2) + "\n")
        os.chmod(path, 0o600)
        return path

    @classmethod
    def read(cls, directory: Path) -> "JobRecord | None":
        """The record in `directory`, None when there is none; FileProblem when there is one that cannot be read."""
        path = directory / JOB_FILE
        if not path.exists() and not path.is_symlink():
            return None
        try:
            data = read_json(path)
        except FileProblem as problem:
            raise FileProblem(path, problem.reason, RECORD_ACTION, problem.line, problem.col) from None
        if not isinstance(data, dict):
            raise FileProblem(path, "not a job record (not a JSON object)", RECORD_ACTION)
        for key in ("job_id", "name", "statement", "checkpoint"):
            if not isinstance(data.get(key), str):
                raise FileProblem(path, f"not a job record ('{key}' is missing or not a string)", RECORD_ACTION)
        for key in ("target", "stopped_at", "master"):
            if data.get(key) is not None and not isinstance(data.get(key), str):
                raise FileProblem(path, f"not a job record ('{key}' is not a string)", RECORD_ACTION)
        if not isinstance(data.get("settings", {}), dict) or not isinstance(data.get("catalog") or [], list) \
                or not isinstance(data.get("functions") or [], list):
            raise FileProblem(path, "not a job record ('settings' or 'catalog' has the wrong shape)", RECORD_ACTION)
        if data["job_id"] != directory.name:
            reason = f"it records job '{data['job_id']}' but is in the directory of job '{directory.name}'"
            raise FileProblem(path, reason, RECORD_ACTION)
        started = data.get("started_at") or data.get("stopped_at") or ""
        return cls(
            data["job_id"], data["name"], data["statement"], data.get("target"), data["checkpoint"],
            str(started), data.get("stopped_at"), {str(k): str(v) for k, v in (data.get("settings") or {}).items()},
            data.get("catalog"), data.get("master"), data.get("functions"),
        )  # fmt: skip


@dataclass(frozen=True)
class JobState:
    """What `state.json` says about a job now. `pid` runs the job (the job process, or the shell for a job it
    runs itself); `pid_start` is that process's start time as the kernel counts it (None where unknown)."""

    status: str
    pid: int | None = None
    pid_start: int | None = None
    detail: str | None = None
    failure: str | None = None
    restarts: int = 0
    progress: dict[str, Any] | None = None  # shell.results.Progress as a dict
    side_failure: str | None = None
    stopped_at: str | None = None  # when it was stopped with a savepoint
    error: dict[str, Any] | None = None  # a failure to start: {"kind", "message", "hint"}
    ui_url: str | None = None  # the job's Spark UI
    metrics_url: str | None = None  # its Prometheus metrics (metrics.py)
    updated_at: float = field(default_factory=time.time)

    def write(self, directory: Path) -> None:
        write_atomically(directory / STATE_FILE, json.dumps(asdict(self), indent=1) + "\n")

    @classmethod
    def read(cls, directory: Path) -> "JobState | None":
        """The state in `directory`; None when there is none or it cannot be read (mid-write on a full disk)."""
        try:
            data = read_json(directory / STATE_FILE)
        except FileProblem:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("status"), str):
            return None
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        try:
            return cls(**known)
        except TypeError:
            return None


def state_of(job: Any, pid: int, pid_start: int | None, progress: bool = True, **addresses: str) -> JobState:
    """What a job this process runs (a Job or JobSet) says now, as its `state.json` holds it. `progress` asks Spark
    for the last progress report (the job process does; a shell writing the state of its own job does not)."""
    from dataclasses import asdict

    status = job.status
    return JobState(
        status, pid=pid, pid_start=pid_start, detail=job.detail(), failure=job.failure, restarts=job.restarts,
        progress=asdict(job.progress()) if progress else None, side_failure=job.side_failure,
        stopped_at=utc_now() if status == STOPPED else None, **addresses,
    )  # fmt: skip


def process_start(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot (Linux /proc); None when it is not there."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])  # field 22; the name in parentheses may hold spaces
    except (IndexError, ValueError):
        return None


def process_alive(pid: int | None, started: int | None) -> bool:
    """Whether the process that ran a job is still there (the same process, not a later one given its pid)."""
    if not pid:
        return False
    if Path("/proc").is_dir():
        now = process_start(pid)
        if now is None:
            return False
        try:  # a zombie (ended, not yet reaped by its parent) is not running the job
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False
        except (OSError, IndexError):
            return False
        return started is None or now == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe_exit(status: int) -> str:
    """A wait status as words: `killed by signal 9 (SIGKILL)`, `exited with code 1`."""
    import signal

    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "?"
        return f"killed by signal {number} ({name})"
    return f"exited with code {os.WEXITSTATUS(status)}"
