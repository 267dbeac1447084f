"""Logs under the shell's home stay bounded: each one is rotated by size when a session starts, and Spark's log
also while a session runs.

Why it exists: Spark's log (`<home>/log/spark.log`, written by log4j and by Python's logging) and the JVM's own
stderr (`<home>/log/stderr.log`, see stdio.py) are appended to by every session, and a shell used every day
would fill the disk with them. At the start of each session a log larger than MAX_BYTES moves to `<name>.1`
(the one before to `<name>.2`, and so on); the oldest beyond BACKUPS is removed. While a session runs, Spark's
log rolls over the same way when it reaches MAX_BYTES: log4j's RollingFile appender (engine/log4j2.properties,
given MAX_BYTES by engine/spark.py) and Python's handler (engine/spark.py's SharedLogHandler) both do it. So the
folder holds about (BACKUPS + 1) * MAX_BYTES of Spark's log at most, and stderr.log grows only within a session.
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
            log.with_name(f"{log.name}.{backups}").unlink(missing_ok=True)
            for number in range(backups - 1, 0, -1):
                older = log.with_name(f"{log.name}.{number}")
                if older.exists():
                    os.replace(older, log.with_name(f"{log.name}.{number + 1}"))
            os.replace(log, log.with_name(f"{log.name}.1"))
            rotated.append(log)
        except OSError:
            continue
    if rotated:
        sync_folder(folder)
    return rotated
