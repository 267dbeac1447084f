"""The one exception hierarchy every layer of streamshell raises to the user.

Why it exists: the shell must never show a Python traceback. Anything that goes wrong in a
statement (syntax, unsupported feature, unknown table, bad option, runtime failure) is raised as a
`StreamshellError` subclass that knows where in the user's text the fault is and renders itself as

    [source:]line:col: message
    <the faulty source line>
    <caret line under the fault>
    hint: ...

Positions are 1-based and refer to the whole source text (the script or the REPL buffer), never
to a single statement; `rebase` moves a statement-relative position onto the whole text.
Other engineers add subclasses here so the hierarchy stays in one file.
"""

from __future__ import annotations

import re
import traceback
from typing import TextIO

from shell.secrets import redact, redact_with_positions

# Line breaks as the SQL tokenizer counts them: CRLF, lone CR and LF each end one line.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


class StreamshellError(Exception):
    """Base of all user-facing errors.

    Fields: `message`, `line`/`col` (1-based, whole source, None when unknown), `hint`,
    `source_line` (text of the faulty line, without its line break) and `length` (how many
    characters the caret underlines, at least 1).
    """

    def __init__(
        self,
        message: str,
        line: int | None = None,
        col: int | None = None,
        hint: str | None = None,
        source_line: str | None = None,
        length: int = 1,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.hint = hint
        self.source_line = source_line
        self.length = max(1, length)

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        return f"{self.line}:{self.col}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, line={self.line}, col={self.col}, "
            f"hint={self.hint!r})"
        )

    @property
    def has_position(self) -> bool:
        return self.line is not None and self.col is not None

    def render(self, source_name: str | None = None) -> str:
        """The multi-line text shown to the user (see the module docstring for the layout).

        Everything in it passes through shell.secrets' redaction: the faulty line is the user's own text and may
        hold a password or a token (`'auth-params' = '...'` next to the option that is wrong); the caret stays
        under the fault in the redacted line."""
        message = redact(self.message)
        if not self.has_position:
            head = message
        else:
            prefix = f"{source_name}:" if source_name else ""
            head = f"{prefix}{self.line}:{self.col}: {message}"
        lines = [head]
        if self.has_position and self.source_line is not None:
            start = (self.col or 1) - 1
            shown, (start, end) = redact_with_positions(self.source_line, (start, start + self.length))
            lines.append(shown)
            lines.append(caret_line(shown, start + 1, end - start))
        if self.hint:
            lines.append(f"hint: {redact(self.hint)}")
        return "\n".join(lines)

    def with_source(self, source: str) -> StreamshellError:
        """Fill `source_line` from the whole source text; returns self for chaining."""
        if self.line is not None:
            lines = LINE_BREAK.split(source)
            if 1 <= self.line <= len(lines):
                self.source_line = lines[self.line - 1]
        return self

    def rebase(self, line: int, col: int) -> StreamshellError:
        """Move a position relative to a statement starting at (line, col) onto the whole text."""
        if self.line is not None and self.col is not None:
            if self.line == 1:
                self.col += col - 1
                if self.source_line is not None:
                    self.source_line = " " * (col - 1) + self.source_line
            self.line += line - 1
        return self


def caret_line(source_line: str, col: int, length: int = 1) -> str:
    """Spaces (tabs kept, so terminals align) up to `col`, then `length` carets."""
    prefix = "".join("\t" if ch == "\t" else " " for ch in source_line[: max(col - 1, 0)])
    prefix += " " * max(col - 1 - len(source_line), 0)
    room = max(len(source_line) - (col - 1), 1)
    return prefix + "^" * max(1, min(length, room))


class SqlSyntaxError(StreamshellError):
    """The text is not valid SQL for our dialect (or is unterminated)."""


class UnsupportedFeatureError(StreamshellError):
    """Valid Flink SQL that streamshell does not support (yet); the message names the feature."""


class CatalogError(StreamshellError):
    """Unknown or duplicate table, view, function or column."""


class OptionError(StreamshellError):
    """A bad, missing or conflicting option in WITH (...) or SET."""


class ExecutionError(StreamshellError):
    """A runtime failure while running a statement or a job."""


class InputLimitError(SqlSyntaxError):
    """A statement beyond one of the front end's limits: nesting depth, depth of its tree, its size or its
    number of tokens (shell/sql/limits.py). Positioned where the limit is crossed; the hint says how to stay
    within it."""


# --- -v: tracebacks, redacted ---------------------------------------------------------------------------------------


def traceback_text(exc: BaseException) -> str:
    """The traceback `-v` shows for `exc`, redacted as everything else the shell shows (shell/secrets.py): an
    exception's message, a chained cause or a frame's source line may quote the user's text, a password in it."""
    return redact("".join(traceback.format_exception(exc)))


class RedactedStream:
    """A text stream that writes everything through shell.secrets' redaction to `stream`.

    `-v` puts one in place of sys.stderr (shell/cli.py), where tracebacks are printed (script mode's
    `traceback.print_exc(file=...)`, the REPL's executor on a pipe). Each write is redacted as it comes: a
    traceback is written a line or a frame at a time, and nothing waits for the end of a line (a prompt does not).
    Anything else (isatty, fileno, encoding, buffer) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(redact(text))
        return len(text)

    def writelines(self, lines) -> None:  # noqa: ANN001 - an iterable of str
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str):  # noqa: ANN204 - whatever the wrapped stream has
        return getattr(self.stream, name)
