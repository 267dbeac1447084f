"""Starting a job's own process, detached from the shell, and waiting until it runs or says why it cannot.

As in Flink's application mode, a job is its own application: `python -m shell.job_process <job folder>` in a
session of its own (so the shell's Ctrl-C and its end do not reach it), its output in the folder. The shell waits
until the process has started the job's queries (RUNNING) or failed to (the error it wrote, shown as the
statement's error, as Flink's client shows a failed submission), so a script stops at an INSERT that cannot run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from shell import errors
from shell.errors import ExecutionError, StreamshellError
from shell.jobs.record import ALIVE, PROCESS_LOG, STARTING, STOP_FILE, JobState, process_start
from shell.jobs.stored import StoredJob

START_TIMEOUT_S = 600.0  # Spark's start on a loaded machine, resolving jars, a broker slow to answer


def launch(directory: Path) -> int:
    """Start the job process for the job in `directory` (its record written); its pid."""
    (directory / STOP_FILE).unlink(missing_ok=True)
    log = open(directory / PROCESS_LOG, "ab")  # noqa: SIM115 - handed to the child
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "shell.job_process", str(directory)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env={**os.environ, "PYTHONPATH": _python_path()},
        )
    finally:
        log.close()
    JobState(STARTING, pid=process.pid, pid_start=process_start(process.pid)).write(directory)
    return process.pid


def _python_path() -> str:
    """The job process imports this package from where the shell did (a source tree, an installed wheel)."""
    here = str(Path(__file__).resolve().parents[2])
    current = os.environ.get("PYTHONPATH")
    return here if not current else f"{here}{os.pathsep}{current}"


def await_start(job: StoredJob, timeout_s: float = START_TIMEOUT_S) -> None:
    """Wait until the job's process runs it; raise its start error (or why it ended) otherwise."""
    deadline = time.monotonic() + timeout_s
    while True:
        status, state, failure = job.look()
        if status != STARTING:
            break
        if time.monotonic() >= deadline:
            raise ExecutionError(
                f"job '{job.job_id}' did not start within {timeout_s:.0f} s",
                hint=f"see {job.directory / PROCESS_LOG}; SHOW JOBS shows it if it starts later",
            )
        time.sleep(0.1)
    if status in ALIVE:
        return
    if state is not None and state.error:
        raise rebuilt_error(state.error)
    raise ExecutionError(
        f"job '{job.job_id}' ended as it started ({status}): {failure or 'no reason given'}",
        hint=f"see {job.directory / PROCESS_LOG}",
    )


def error_record(exc: BaseException) -> dict:
    """A start failure as the job process writes it in its state, for the shell to raise again."""
    if isinstance(exc, StreamshellError):
        return {"kind": type(exc).__name__, "message": exc.message, "hint": exc.hint}
    return {"kind": "ExecutionError", "message": f"internal error: {exc!r}", "hint": None}


def rebuilt_error(record: dict) -> StreamshellError:
    kind = getattr(errors, str(record.get("kind")), None)
    if not (isinstance(kind, type) and issubclass(kind, StreamshellError)):
        kind = ExecutionError
    return kind(str(record.get("message") or "the job failed to start"), hint=record.get("hint"))
