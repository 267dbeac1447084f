"""Keeping stderr readable: the JVM's own output goes to a log file, ours stays on the terminal.

The JVM and Spark's Python workers write straight to file descriptor 2 (JDK warnings such as "Using incubator
modules", crash reports). In a script, stderr must start with our `file:line:col: message`; in the shell, that
output would draw over the prompt. So descriptor 2 is pointed at `<home>/log/stderr.log` before Spark starts (the
JVM inherits it), while Python's `sys.stderr` keeps writing to the real stderr. `-v` leaves everything alone.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def divert_native_stderr(log_file: Path, enabled: bool = True) -> Iterator[None]:
    """Send descriptor 2 to `log_file` while keeping `sys.stderr` on the terminal; restore both after."""
    if not enabled:
        yield
        return
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log_fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
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
        sys.stderr = previous
        with contextlib.suppress(OSError):
            terminal.close()
