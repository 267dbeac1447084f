"""The REPL's history file (`<home>/history`), private to the user and with secrets removed before anything is kept.

Why it exists: statements carry passwords and tokens in `WITH (...)` and `SET`; the history file outlives the
session and Ctrl-R shows old entries on screen, so every line passes through `shell.secrets.redact` before it
reaches memory or disk (lines an older version kept in clear are redacted when loaded). The file is readable by
its owner only (0600), also when it existed with wider permissions.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from prompt_toolkit.history import FileHistory

from shell.secrets import redact

FILE_MODE = 0o600


class RedactingFileHistory(FileHistory):
    """prompt-toolkit's file history (Ctrl-R, up/down) that stores only redacted text, in an owner-only file."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        make_private(path)
        super().__init__(str(path))

    def load_history_strings(self) -> Iterable[str]:
        try:
            strings = list(super().load_history_strings())
        except OSError:  # e.g. a directory in its place: start with an empty history
            return
        for string in strings:
            yield redact(string)

    def append_string(self, string: str) -> None:
        super().append_string(redact(string))

    def store_string(self, string: str) -> None:
        try:
            make_private(Path(self.filename))
            super().store_string(redact(string))
        except OSError:
            pass  # a read-only home must not stop the shell


def make_private(path: Path) -> None:
    """Create `path` readable and writable by its owner only, or take other users' access from an existing one."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE))
        if os.stat(path).st_mode & 0o777 != FILE_MODE:
            os.chmod(path, FILE_MODE)
    except OSError:
        pass  # a read-only home: the history stays in memory (store_string gives up quietly)
