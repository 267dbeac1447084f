"""When Enter submits the input, and how the lines of an unfinished statement are prompted.

Why it exists: the statement splitter (`shell.sql.split.is_complete`) is the one judge of "complete", the same one
script mode uses, so a ';' inside a string, a comment or a BEGIN ... END block never submits half a statement.
This module adapts it to the prompt: a blank input submits (a fresh prompt, as in psql), and the continuation
prompt lines up under `streamshell> `.
"""

from __future__ import annotations

from shell.sql.split import is_complete

PROMPT = "streamshell> "
CONTINUATION = "-> ".rjust(len(PROMPT))


def should_submit(text: str) -> bool:
    """Whether Enter runs `text` (otherwise it starts a new line)."""
    if not text.strip():
        return True
    try:
        return is_complete(text)
    except Exception:  # noqa: BLE001 - let the parser report whatever the splitter chokes on
        return text.rstrip().endswith(";")


def continuation(width: int, line_number: int, wrap_count: int) -> str:
    """The prompt of the second and later lines (prompt-toolkit's `prompt_continuation` signature); a line that
    only wraps because it is long gets blanks, so `->` always marks a real line break."""
    return " " * width if wrap_count else CONTINUATION.rjust(width)
