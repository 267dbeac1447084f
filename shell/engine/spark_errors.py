"""Spark's exceptions turned into our one-line errors.

Spark reports problems as long JVM messages with error classes (`[UNRESOLVED_COLUMN.WITH_SUGGESTION] ...`) and
stack traces. The user wants the first sentence, in our words where we know better, and no traceback.
"""

from __future__ import annotations

import re

from shell.errors import CatalogError, ExecutionError, StreamshellError, UnsupportedFeatureError

_ERROR_CLASS = re.compile(r"^\[([A-Z_.]+)\]\s*")
_USER_RAISED = re.compile(r"\[USER_RAISED_EXCEPTION\]\s*(.*?)(?:\s*SQLSTATE|\n|$)")
_UNRESOLVED = re.compile(r"name `?([^`\s]+)`? cannot be resolved\. Did you mean one of the following\? \[(.*?)\]")

# Spark error classes that mean "this query needs the changelog path", with the feature's name.
UPDATING_QUERY_CLASSES = {
    "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION": "a query whose result updates",
    "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING": "OVER windows not ordered by a time attribute",
}


def first_line(text: str) -> str:
    for line in text.strip().splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "JVM stacktrace", "Traceback")):
            return line
    return text.strip()


def from_spark(exc: BaseException) -> StreamshellError:
    """A StreamshellError for an exception raised by Spark (or passed through if it already is one)."""
    if isinstance(exc, StreamshellError):
        return exc
    text = str(getattr(exc, "desc", None) or getattr(exc, "message", None) or exc)
    raised = _USER_RAISED.search(text)  # our own raise_error() somewhere down a failed query
    if raised:
        return ExecutionError(raised.group(1).strip())
    line = first_line(text)
    match = _ERROR_CLASS.match(line)
    error_class = match.group(1) if match else ""
    message = _ERROR_CLASS.sub("", line)
    unresolved = _UNRESOLVED.search(message)
    if unresolved:
        name = unresolved.group(1)
        options = [o.strip().strip("`") for o in unresolved.group(2).split(",") if o.strip()]
        hint = f"did you mean {options[0].split('.')[-1]}?" if options else None
        return CatalogError(f"unknown column '{name}'", hint=hint)
    if "Append output mode not supported" in message or error_class in UPDATING_QUERY_CLASSES:
        return UnsupportedFeatureError(
            f"{UPDATING_QUERY_CLASSES.get(error_class, 'a query whose result updates')} is not supported yet: {message}",
            hint="aggregate over a window (TUMBLE/HOP/SESSION) with a watermark to get an append-only result",
        )
    return ExecutionError(message or type(exc).__name__)
