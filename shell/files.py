"""Reading and writing the shell's own files without tracebacks and without half-written files.

Why it exists: the shell keeps state in plain files (catalog entries, savepoint records, the config file) and
reads files the user points it at (`-f`, `-i`, `--demo`). Any of them can be damaged, be in another encoding, or
be a directory; and a disk can fill up in the middle of a write. One writer (`write_atomically`) and one way to
say what is wrong with a file (`read_problem`) keep the catalog, the job records and the scripts in agreement.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from pathlib import Path


class FileProblem(Exception):
    """A file that cannot be used: `reason` says what is wrong with it, `action` what the user can do.

    Shown as `path[:line:col]: reason; action`, one line.
    """

    def __init__(self, path: Path | str, reason: str, action: str, line: int | None = None, col: int | None = None):
        where = f"{path}:{line}:{col}" if line is not None else f"{path}"
        super().__init__(f"{where}: {reason}; {action}")
        self.path = path
        self.reason = reason
        self.action = action
        self.line = line
        self.col = col


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` by `text` (UTF-8): readers see the old content or the new one, never a part of it.

    The text goes to a temporary file in the same folder, which is flushed and synced to disk, renamed over
    `path`, and then the folder is synced so the rename itself survives a crash. On failure (a full disk, a
    read-only folder) the OSError is raised, `path` is as it was, and no temporary file is left behind.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    sync_folder(folder)


def sync_folder(folder: Path) -> None:
    """Make a rename or removal in `folder` durable (best effort: the change itself is already made)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def decode_utf8(data: bytes, name: str) -> str:
    """`data` as text; FileProblem at the line and column (in bytes) of the first byte that is not UTF-8.

    A UTF-8 byte order mark at the start is dropped (editors on Windows write one).
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        offset = exc.start
        line = data.count(b"\n", 0, offset) + 1
        col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        reason = f"not UTF-8 text: byte 0x{data[offset]:02x} at byte offset {offset}"
        raise FileProblem(name, reason, "save the file as UTF-8", line, col) from None


def read_text(path: Path) -> str:
    """The UTF-8 text of the file at `path`; FileProblem when it cannot be read or is not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise os_problem(path, exc) from None
    return decode_utf8(data, str(path))


def read_json(path: Path) -> object:
    """The JSON value in the file at `path`; FileProblem when it cannot be read, is not UTF-8, or not JSON."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:  # the message never quotes the file's content
        reason = f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        raise FileProblem(path, reason, "fix the file or move it away") from None
    except RecursionError:
        raise FileProblem(path, "not valid JSON (nested too deeply)", "fix the file or move it away") from None


def os_problem(path: Path | str, exc: OSError) -> FileProblem:
    """What an OSError from reading `path` means to the user, and what to do about it."""
    if isinstance(exc, IsADirectoryError) or exc.errno == errno.EISDIR:
        return FileProblem(path, "it is a directory, not a file", "move it away")
    if isinstance(exc, PermissionError):
        return FileProblem(path, "permission denied", "make it readable (chmod u+r)")
    if isinstance(exc, FileNotFoundError):
        return FileProblem(path, "no such file", "check the path")
    return FileProblem(path, f"cannot read it ({exc.strerror or exc})", "check the file and the disk")
