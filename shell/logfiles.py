"""Logs under the shell's home stay bounded: each one is rotated by size when a session starts, and while it runs.

Why it exists: Spark's log (`<home>/log/spark.log`, written by log4j and by Python's logging) and the JVM's own
stderr (`<home>/log/stderr.log`, see stdio.py) are appended to by every session, and a shell used every day
would fill the disk with them. At the start of each session a log larger than MAX_BYTES moves to `<name>.1`
(the one before to `<name>.2`, and so on); the oldest beyond BACKUPS is removed. While a session runs, Spark's
log rolls over the same way when it reaches MAX_BYTES: log4j's RollingFile appender (engine/log4j2.properties,
given MAX_BYTES by engine/spark.py) and Python's handler (engine/spark.py's SharedLogHandler) both do it; the
JVM's own output (stderr.log, a job's process.log) is written by a `LogWriter` (stdio.py), which rolls it over the
same way. So the folder holds about (BACKUPS + 1) * MAX_BYTES of each log at most.
"""

from __future__ import annotations

import os
from pathlib import Path

from shell.files import sync_folder

MAX_BYTES = 10 * 1024 * 1024
BACKUPS = 3


def rotate_logs(folder: Path, max_bytes: int | None = None, backups: int | None = None) -> list[Path]:
    """Rotate every `*.log` file in `folder` larger than `max_bytes` (MAX_BYTES), keeping `backups` (BACKUPS) old
    ones; return the logs that were rotated. A log that cannot be moved (a read-only home) is left as it is."""
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    backups = BACKUPS if backups is None else backups
    rotated = []
    for log in sorted(folder.glob("*.log")) if folder.is_dir() else []:
        try:
            if not log.is_file() or log.stat().st_size <= max_bytes:
                continue
            roll_over(log, backups)
            rotated.append(log)
        except OSError:
            continue
    if rotated:
        sync_folder(folder)
    return rotated


def roll_over(log: Path, backups: int = BACKUPS) -> None:
    """`log` -> `log.1` -> ... -> `log.<backups>`, the oldest removed. OSError when a file cannot be moved."""
    log.with_name(f"{log.name}.{backups}").unlink(missing_ok=True)
    for number in range(backups - 1, 0, -1):
        older = log.with_name(f"{log.name}.{number}")
        if older.exists():
            os.replace(older, log.with_name(f"{log.name}.{number + 1}"))
    os.replace(log, log.with_name(f"{log.name}.1"))


class LogWriter:
    """Appends text to a log file, every line redacted (shell/secrets.py), rolling the file over at `max_bytes`.

    Used for output no logging library formats (the JVM's own stderr, a job process's stdout): it arrives through
    a pipe (stdio.py), so nothing reaches the disk before it has been redacted.
    """

    def __init__(self, path: Path, max_bytes: int | None = None, backups: int | None = None):
        self.path = path
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        self.backups = BACKUPS if backups is None else backups
        self._file = None
        self._open()

    def _open(self) -> None:
        """Open (or create, readable by its owner only) the log for appending; left closed if it cannot be."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._file = os.fdopen(descriptor, "a", encoding="utf-8", errors="replace")
            self._file.seek(0, os.SEEK_END)
        except OSError:
            self._file = None

    def write_lines(self, text: str) -> None:
        """Write `text` (whole lines) redacted; a write that fails (disk full) is dropped, never raised."""
        from shell.secrets import redact

        try:
            for line in redact(text).splitlines(keepends=True):
                if self._file is None:
                    self._open()
                    if self._file is None:
                        return
                self._file.write(line)
                if self._file.tell() > self.max_bytes:
                    self._file.close()
                    self._file = None
                    roll_over(self.path, self.backups)
                    self._open()
            if self._file is not None:
                self._file.flush()
        except (OSError, ValueError):
            self.close()

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
