"""The job process: one job, its own Spark application, outliving the shell that started it.

`python -m shell.job_process <home>/jobs/<id>` (so `ps` names the job's folder) reads the job's record, opens a
session of its own on the same home with the record's settings and catalog, runs the job's statement (an INSERT
or a statement set) and supervises it as the shell would (restart strategy, dead-letter side queries), writing
its state to the folder when it changes (looked at about once a second), and each micro-batch's progress report to its batch log
(batch_log.py). A stop request in the folder (STOP JOB from any shell), or SIGTERM,
stops it: with a savepoint, after the running batch. It ends when its job ends.

It forks first: the parent is a small monitor that waits for the job process and, if that dies without saying
how it ended (kill -9, out of memory), writes FAILED with the signal or exit code, so SHOW JOBS tells why and
RESUME JOB continues the job from its last checkpoint.

The session is opened by the caller's `open_session` (shell/job_process.py, the entry point, which sits above the
session as this package sits below it).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from shell.connectors.registry import resolved
from shell.files import FileProblem
from shell.jobs.batch_log import BatchLog
from shell.jobs.metrics import JobMetrics, serve
from shell.jobs.record import (
    ALIVE,
    FAILED,
    PROCESS_LOG,
    STARTING,
    STOP_FILE,
    JobRecord,
    JobState,
    describe_exit,
    process_start,
    state_of,
)
from shell.stdio import LogCopier

STATE_EVERY_S = 1.0
OUTPUT_DRAIN_S = 5.0  # how long the monitor waits, after the job process ended, for the rest of its output
JOB_SPARK_CONF = {"spark.ui.enabled": "true", "spark.ui.port": "0"}  # a job serves Spark's UI on a free port

OpenSession = Callable[[JobRecord, Path], Any]  # the job's record and folder -> a Session whose INSERT runs here


def main(open_session: OpenSession, argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m shell.job_process <job folder>", file=sys.stderr)
        return 2
    folder = Path(args[0]).resolve()
    try:
        read_fd, write_fd = os.pipe()  # the job's stdout and stderr, read by the monitor (see _copy_output)
    except OSError:
        read_fd = write_fd = -1  # output straight to the log, unredacted
    child = os.fork()
    if child:
        if write_fd >= 0:
            os.close(write_fd)
            copying = _copy_output(folder, read_fd)
        code = monitor(folder, child)
        if write_fd >= 0:
            copying.drain(OUTPUT_DRAIN_S)  # what the job and its JVM wrote last
        return code
    if write_fd >= 0:
        os.close(read_fd)
        for descriptor in (1, 2):
            os.dup2(write_fd, descriptor)
        os.close(write_fd)
    try:
        code = run(folder, open_session)
    except BaseException:  # noqa: BLE001 - the monitor reports the exit code; the traceback goes to the log
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # noqa: SLF001 - skip the JVM gateway's atexit work; the job has ended


def _copy_output(folder: Path, read_fd: int) -> LogCopier:
    """The job's stdout and stderr (its own and its JVM's) copied by the monitor into the folder's log, redacted
    with the secrets of the job's record too, and rolled over by size."""
    from shell.catalog.model import TableDef
    from shell.catalog.store import Catalog
    from shell.errors import OptionError
    from shell.secrets import remember_secret_options

    try:
        record = JobRecord.read(folder)
        if record is not None:
            remember_secret_options(record.settings)
            for table in Catalog.from_snapshot(record.catalog or []).objects.values():
                if isinstance(table, TableDef):
                    with contextlib.suppress(OptionError):  # an unset variable: the job process says so
                        resolved(table)  # a table, as it is built, has its secret values remembered (model.py)
    except (FileProblem, KeyError, TypeError, ValueError, AttributeError):
        pass  # a record that cannot be read: the job process says why it cannot run
    return LogCopier(read_fd, folder / PROCESS_LOG)


def monitor(folder: Path, child: int) -> int:
    """Wait for the job process; record how it ended when it could not say so itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: _forward(child, signal.SIGTERM))
    _, status = os.waitpid(child, 0)
    state = JobState.read(folder)
    if folder.is_dir() and speaks_for(state, child):
        reason = f"the job process (pid {child}) {describe_exit(status)}"
        JobState(
            FAILED,
            pid=child,
            failure=reason,
            restarts=state.restarts if state else 0,
            progress=state.progress if state else None,
        ).write(folder)
    return 0


def speaks_for(state: JobState | None, child: int) -> bool:
    """Whether the folder's state is still the ended child's to correct: alive by its own word, and its own. A job
    stopped with a savepoint may be resumed while its old process tears Spark down; the new process's state is
    then not the old monitor's to overwrite."""
    if state is None:
        return True
    return state.status in ALIVE and state.pid in (child, os.getpid())


def _forward(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


class StopRequests:
    """A stop asked for by a file in the folder (STOP JOB from a shell) or by SIGTERM (= with a savepoint).

    SIGTERM's handler only sets a flag: it runs between two bytecodes of the main thread, wherever that is, and a
    lock it took (an Event's) could be one the main thread holds, or one the handler itself held when a second
    SIGTERM came (the monitor forwards one, a session's end sends another): the job process then hung for ever in
    its shutdown."""

    POLL_S = 0.1  # how soon `wait` notices SIGTERM

    def __init__(self, folder: Path):
        self.folder = folder
        self.signalled = False

    def on_sigterm(self, *_: object) -> None:
        self.signalled = True

    def wait(self, seconds: float) -> None:
        """Sleep `seconds`, or less once SIGTERM came."""
        deadline = time.monotonic() + seconds
        while not self.signalled and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, self.POLL_S))

    def asked(self) -> bool | None:
        """None: keep running; True: stop with a savepoint; False: stop and drop the state."""
        if self.signalled:
            return True
        path = self.folder / STOP_FILE
        if not path.is_file():
            return None
        try:
            return bool(json.loads(path.read_text()).get("savepoint"))
        except (OSError, ValueError, AttributeError):
            return True  # a request that cannot be read is a request all the same; keeping the state loses nothing


def run(folder: Path, open_session: OpenSession) -> int:
    from shell.jobs.launcher import error_record

    requests = StopRequests(folder)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, requests.on_sigterm)
    me = dict(pid=os.getpid(), pid_start=process_start(os.getpid()))
    JobState(STARTING, **me).write(folder)
    record = JobRecord.read(folder)
    assert record is not None, f"no job record in {folder}"
    session = None
    try:
        session = open_session(record, folder)
        job = start(session, record)
    except BaseException as exc:  # noqa: BLE001 - the shell shows it as the statement's error
        JobState(FAILED, **me, failure=str(getattr(exc, "message", exc)), error=error_record(exc)).write(folder)
        if session is not None:
            session.runtime.stop()
        return 1
    metrics = JobMetrics(record.job_id, record.name)
    server, me["metrics_url"] = serve(metrics)
    me["ui_url"] = ui_url(session)
    try:
        supervise(job, folder, requests, me, metrics)
    finally:
        server.shutdown()
        me = {"pid": me["pid"], "pid_start": me["pid_start"]}  # the job's ports close with it
        final = state_of(job, **me)  # STOPPED, with its time, when it was stopped with a savepoint
        if folder.is_dir():
            final.write(folder)
            (folder / STOP_FILE).unlink(missing_ok=True)
        session.runtime.stop()
    return 1 if final.status == FAILED else 0


def start(session, record: JobRecord):  # noqa: ANN001, ANN201 - a Session; the started Job
    """Run the record's statement in `session` on the job's own folder and checkpoint; the job it started."""
    from shell.sql.parse import parse_script

    statements = parse_script(record.statement)
    if len(statements) != 1:
        raise ValueError(f"the job record holds {len(statements)} statements, not one")
    session.settings.set("pipeline.name", record.name)
    with session.jobs.resuming(record.job_id):
        session.execute(statements[0])
    return session.jobs.jobs[record.job_id]


def supervise(job, folder: Path, requests: StopRequests, me: dict, metrics: JobMetrics) -> bool | None:  # noqa: ANN001
    """Look at the job about once a second, writing its state when it changed, until it ends or is asked to stop;
    the stop asked, if any. Each micro-batch's progress report goes to the folder's batch log."""
    from shell.jobs.registry import STOP_GRACE_S

    batches = BatchLog(folder)

    def look() -> None:
        for place, report in metrics.observe(job):
            batches.append(place, report)

    written = None
    while True:
        look()
        if not folder.is_dir():  # the job's folder was removed: nothing is left to write to
            job.stop()
            return False
        asked = requests.asked()
        if asked is not None:
            job.stop(graceful_s=STOP_GRACE_S if asked else 0.0)
            look()
            if asked:
                job.savepoint = folder
            return asked
        state = state_of(job, **me)
        if written is None or replace(state, updated_at=written.updated_at) != written:
            state.write(folder)  # unchanged, it is not written again: an idle job costs no disk syncs
            written = state
        if job.ended:
            look()
            return None
        requests.wait(STATE_EVERY_S)


def ui_url(session) -> str | None:  # noqa: ANN001 - a Session
    try:
        return session.runtime.get().sparkContext.uiWebUrl
    except Exception:  # noqa: BLE001 - no UI (turned off with spark.ui.enabled = false)
        return None

