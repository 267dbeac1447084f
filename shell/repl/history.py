"""The REPL's history file (`<home>/history`), with secrets removed before anything is kept.

Why it exists: statements carry passwords and tokens in `WITH (...)` and `SET`; the history file outlives the
session and Ctrl-R shows old entries on screen, so values of secret-looking keys are replaced by '****' before a
line reaches memory or disk (`shell.secrets.redact_sql`).
"""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.history import FileHistory

from shell.secrets import redact_sql


class RedactingFileHistory(FileHistory):
    """prompt-toolkit's file history (Ctrl-R, up/down) that stores only redacted text."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        super().__init__(str(path))

    def append_string(self, string: str) -> None:
        super().append_string(redact_sql(string))

    def store_string(self, string: str) -> None:
        try:
            super().store_string(redact_sql(string))
        except OSError:
            pass  # a read-only home must not stop the shell
