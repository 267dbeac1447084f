"""Keeping stderr readable: the JVM's own output goes to a log file, ours stays on the terminal.

The JVM and Spark's Python workers write straight to file descriptor 2 (JDK warnings such as "Using incubator
modules", crash reports). In a script, stderr must start with our `file:line:col: message`; in the shell, that
output would draw over the prompt. So descriptor 2 is pointed at a pipe before Spark starts (the JVM inherits it),
whose other end a thread reads into `<home>/log/stderr.log`, each line redacted (a JVM exception may quote a
connection string) and the file rolled over by size (shell/logfiles.py), while Python's `sys.stderr` keeps writing
to the real stderr. `-v` leaves everything alone. A job's process sends its output through the same kind of pipe,
read by its monitor (`LogCopier`, shell/jobs/process.py).
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
from pathlib import Path
from typing import Iterator

from shell.logfiles import LogWriter

CHUNK = 65536
DRAIN_S = 2.0  # at most this long, when the shell ends, for what its JVM wrote last to reach the log


def pipe_into_log(log_file: Path) -> tuple[int, "LogCopier"]:
    """A pipe whose writes end up in `log_file`, redacted line by line and rolled over by size: (the write end,
    the copier reading the other end until every writer has closed it). OSError if no pipe can be made."""
    read_fd, write_fd = os.pipe()
    return write_fd, LogCopier(read_fd, log_file)


class LogCopier:
    """A daemon thread copying what `read_fd` gives into `log_file` (redacted, rolled over) until its end; it
    closes `read_fd`. `drain` waits until what was written so far is in the file."""

    def __init__(self, read_fd: int, log_file: Path):
        self.read_fd = read_fd
        self.writer = LogWriter(log_file)
        self.pending = b""
        self.wake_read, self.wake_write = os.pipe()  # drain asks through it
        self.drained = threading.Event()
        self.thread = threading.Thread(target=self._copy, name=f"log {log_file.name}", daemon=True)
        self.thread.start()

    def _copy(self) -> None:
        both, output_only = select.poll(), select.poll()  # poll, not select: any descriptor number
        both.register(self.read_fd, select.POLLIN)
        both.register(self.wake_read, select.POLLIN)
        output_only.register(self.read_fd, select.POLLIN)
        try:
            while True:
                ready = {descriptor for descriptor, _ in both.poll()}
                if self.wake_read in ready:
                    os.read(self.wake_read, 64)
                    while output_only.poll(0):  # everything already in the pipe
                        if not self._read_once():
                            return
                    self.drained.set()
                elif not self._read_once():
                    return
        except OSError:
            pass
        finally:
            if self.pending:
                self.writer.write_lines(self.pending.decode("utf-8", errors="replace") + "\n")
            self.writer.close()
            for descriptor in (self.read_fd, self.wake_read, self.wake_write):
                with contextlib.suppress(OSError):
                    os.close(descriptor)
            self.drained.set()

    def _read_once(self) -> bool:
        """Read one chunk and write its whole lines; False at the end of the pipe."""
        chunk = os.read(self.read_fd, CHUNK)
        if not chunk:
            return False
        self.pending += chunk
        whole, newline, rest = self.pending.rpartition(b"\n")
        if newline:
            self.writer.write_lines((whole + newline).decode("utf-8", errors="replace"))
            self.pending = rest
        elif len(self.pending) >= CHUNK:  # a very long line: written in pieces
            self.writer.write_lines(self.pending.decode("utf-8", errors="replace"))
            self.pending = b""
        return True

    def drain(self, timeout_s: float = DRAIN_S) -> None:
        """Wait (at most `timeout_s`) until everything written to the pipe so far is in the file: a JVM that still
        runs keeps the pipe open, so its end cannot be waited for."""
        if not self.thread.is_alive():
            return
        self.drained.clear()
        try:
            os.write(self.wake_write, b"!")
        except OSError:
            return
        self.drained.wait(timeout_s)


@contextlib.contextmanager
def divert_native_stderr(log_file: Path, enabled: bool = True) -> Iterator[None]:
    """Send descriptor 2 to `log_file` while keeping `sys.stderr` on the terminal; restore both after."""
    if not enabled:
        yield
        return
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log_fd, copier = pipe_into_log(log_file)
        saved_fd = os.dup(2)
    except OSError:
        yield  # no log file: leave descriptor 2 alone
        return
    sys.stderr.flush()
    terminal = os.fdopen(saved_fd, "w", buffering=1, encoding="utf-8", errors="replace")
    previous = sys.stderr
    os.dup2(log_fd, 2)
    os.close(log_fd)
    sys.stderr = terminal
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            terminal.flush()
        os.dup2(terminal.fileno(), 2)
        copier.drain()
        sys.stderr = previous
        with contextlib.suppress(OSError):
            terminal.close()
