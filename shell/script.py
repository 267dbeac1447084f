"""Script mode: run a file or string of statements in order, the way CI and deployments need it.

The whole script is parsed before anything runs, so a typo on the last line does not leave half a pipeline
deployed. Then each statement runs; the first failure prints `file:line:col: message` (with the line and a
caret) on stderr and the exit code is 1. As in Flink's SQL client (`table.dml-sync` is false unless set), an
INSERT returns once its job runs and the script ends once its statements have run: its jobs run on in processes
of their own (SHOW JOBS in any shell on the same home lists them), and a line on stderr says which. `SET
'table.dml-sync' = 'true'` waits for each job before the next statement, passes on what its print sink writes,
and fails the script if the job failed. Jobs run inside the shell (`execution.target` = 'embedded') would end
with it, so the script waits for those at its end.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import TextIO

from shell.errors import StreamshellError
from shell.exitcodes import EXIT_BROKEN_PIPE, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from shell.files import FileProblem, decode_utf8
from shell.jobs.output import PrintedRows
from shell.jobs.registry import ALIVE
from shell.render.printers import PRINTERS, PrinterOptions
from shell.results import ChangeStream, ClearRequested, JobStarted, Message, QuitRequested, Rows, Text
from shell.secrets import redact
from shell.sql.parse import parse_script



def quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so nothing (not even the final flush) complains."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


class ScriptRunner:
    def __init__(self, session, out: TextIO | None = None, err: TextIO | None = None):  # noqa: ANN001
        self.session = session
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def run_file(self, path: str, wait_for_jobs: bool = True) -> int:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            self.err.write(f"streamshell: cannot read {path}: {exc.strerror or exc}\n")
            return EXIT_USAGE
        return self.run_bytes(data, path, wait_for_jobs)

    def run_bytes(self, data: bytes, name: str, wait_for_jobs: bool = True) -> int:
        """Run a script read as bytes (a file, stdin): text that is not UTF-8 is a usage error naming the byte."""
        try:
            text = decode_utf8(data, name)
        except FileProblem as exc:
            self.err.write(f"{exc}\n")
            return EXIT_USAGE
        return self.run_text(text, name, wait_for_jobs)

    def run_text(self, source: str, name: str, wait_for_jobs: bool = True) -> int:
        try:
            statements = parse_script(source)
        except StreamshellError as exc:
            return self._fail(exc.with_source(source), source, name)
        if any(self.session.needs_spark(s) for s in statements):
            self.session.start_spark()
        for statement in statements:
            try:
                result = self.session.execute(statement)
                if isinstance(result, QuitRequested):
                    return EXIT_OK
                self._show(result)
                if isinstance(result, JobStarted) and self.session.settings.get("table.dml-sync") == "true":
                    code = self._wait_for_jobs()
                    if code != EXIT_OK:
                        return code
            except StreamshellError as exc:
                if not exc.has_position:
                    exc.line, exc.col = statement.source.line, statement.source.col
                return self._fail(exc.with_source(source), source, name)
            except KeyboardInterrupt:
                self.err.write("streamshell: interrupted\n")
                return EXIT_INTERRUPTED
            except BrokenPipeError:  # the reader went away (`| head`): stop quietly
                quiet_stdout()
                return EXIT_BROKEN_PIPE
            except Exception as exc:  # noqa: BLE001 - a bug must still end with a clear line, not a traceback
                if self.session.options.verbose:
                    traceback.print_exc(file=self.err)
                self.err.write(f"{name}:{statement.source.line}:{statement.source.col}: internal error: {redact(repr(exc))}\n")
                return EXIT_FAILED
        if not wait_for_jobs:
            return EXIT_OK
        self._say_running_jobs()
        if self.session.jobs.jobs and self.session.settings.get("table.dml-sync") != "false":
            return self._wait_for_jobs(in_process_only=True)  # jobs inside this process end with it
        return EXIT_OK

    def _say_running_jobs(self) -> None:
        """One line on stderr naming the detached jobs the script started that run on after it."""
        jobs = self.session.jobs
        running = [job for job in jobs.started_jobs() if job.status in ALIVE and job not in jobs.jobs.values()]
        if running:
            names = ", ".join(f"{job.job_id} ({job.name})" for job in running)
            self.err.write(f"streamshell: {len(running)} job{'s' if len(running) != 1 else ''} run{'s' if len(running) == 1 else ''} "
                           f"on after the script: {names}; SHOW JOBS follows them, STOP JOB 'id' stops one "
                           f"(SET 'table.dml-sync' = 'true' waits for each job instead)\n")

    def _show(self, result) -> None:  # noqa: ANN001 - one of shell.results.Result
        mode = self.session.result_mode(interactive=False)
        printer = PRINTERS[mode](self.out, self.err, PrinterOptions(self.session.max_column_width()))
        if isinstance(result, Message):
            printer.message(result)
        elif isinstance(result, Text):
            printer.text(result)
        elif isinstance(result, Rows):
            printer.rows(result)
        elif isinstance(result, ChangeStream):
            try:
                printer.changes(result)
            except (KeyboardInterrupt, BrokenPipeError):
                result.cancel()
                raise
        elif isinstance(result, JobStarted):
            printer.message(Message(f"Job '{result.name}' started with id {result.job_id}."))
        elif isinstance(result, ClearRequested):
            pass

    def _wait_for_jobs(self, in_process_only: bool = False) -> int:
        printed = PrintedRows(self.session.options.print_stream or self.err)
        jobs = self.session.jobs
        try:
            failed = jobs.wait_all(tick=lambda: printed.pass_on(jobs.started_jobs()), in_process_only=in_process_only)
        except KeyboardInterrupt:
            if in_process_only:
                jobs.stop_all()  # those in this process; the detached ones run on
            else:
                jobs.stop_started()
            self.err.write("streamshell: interrupted; running jobs were stopped\n")
            return EXIT_INTERRUPTED
        for job in failed:
            self.err.write(redact(f"streamshell: job {job.job_id} ({job.name}) failed: {job.failure}") + "\n")
        for job in jobs.started_jobs():  # it ended, but without some of its bad records
            if job.side_failure and not any(job.job_id == f.job_id for f in failed):
                self.err.write(redact(f"streamshell: warning: job {job.job_id} ({job.name}): {job.side_failure}") + "\n")
        jobs.started.clear()
        return EXIT_FAILED if failed else EXIT_OK

    def _fail(self, exc: StreamshellError, source: str, name: str) -> int:
        self.err.write(exc.render(name) + "\n")
        if self.session.options.verbose and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__, file=self.err)
        self.err.flush()
        return EXIT_FAILED
