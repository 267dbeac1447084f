"""Spark's exceptions turned into our one-line errors.

Spark reports problems as long JVM messages with error classes (`[UNRESOLVED_COLUMN.WITH_SUGGESTION] ...`),
Python tracebacks of its workers and chains of Java causes. The user wants the cause in one line, in our words
where we know better, and no traceback: `root_cause` finds that line (the last exception line of a Python
traceback, or the innermost Java cause, or our own error's message), and `from_spark` makes it an error of ours.
Both a failed SELECT and a failed job (SHOW JOBS, script mode) show it.
"""

from __future__ import annotations

import re

from shell.errors import CatalogError, ExecutionError, StreamshellError, UnsupportedFeatureError
from shell.sql.text_casts import failed_literal_cast

_ERROR_CLASS = re.compile(r"^\[([A-Z_.]+)\]\s*")
_REAL_TIME_REFUSAL = re.compile(r"\[STREAMING_REAL_TIME_MODE[A-Z_.]*\]\s*(?:Streaming real-time mode has the following "
                                r"limitation:\s*)?(.*)", re.S)
_REAL_TIME_BYPASS = re.compile(r"To bypass this check.*?(?=SQLSTATE|$)|SQLSTATE: \w+")  # Spark's advice to turn its check off
_USER_RAISED = re.compile(r"\[USER_RAISED_EXCEPTION\]\s*(.*?)(?:\s*SQLSTATE|\n|$)")
_UNRESOLVED = re.compile(r"name `?([^`\s]+)`? cannot be resolved\. Did you mean one of the following\? \[(.*?)\]")
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+\s*$")
_TRACEBACK = "Traceback (most recent call last):"
# The exception line that ends a Python traceback: `ValueError: bad`, `pkg.mod.Error: x`, `KeyboardInterrupt`.
_PYTHON_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")
# A Java exception as toString() prints it, anywhere in a line: `java.net.ConnectException: Connection refused`.
_NESTED_JAVA = re.compile(r"(?<![\w.$])(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)(?=: |$)")
_STREAMING_QUERY = "=== Streaming Query ==="  # Spark appends the query's description to its failure
# Wrapper exceptions whose name says nothing; their message is kept without it.
_WRAPPERS = ("org.apache.spark.", "java.util.concurrent.ExecutionException", "java.lang.RuntimeException")
OUR_PACKAGE = "shell."  # exceptions raised by our own code in a Python worker: their message alone

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


def root_cause(error: BaseException | str) -> str:
    """The cause of a failure in one line, for a user: no traceback, no error class, no SQLSTATE.

    * our own errors (StreamshellError, a `shell.*` exception in a Python worker, raise_error() in a query):
      their message;
    * a Python traceback in Spark's message or in one of its causes: the traceback's last exception line
      (the innermost cause that has one);
    * otherwise the innermost Java cause (`Caused by:`, or the chain of Spark's captured causes), its class
      without the package;
    * otherwise the first line of the message.
    """
    if isinstance(error, StreamshellError):
        return error.message
    texts = _texts(error)
    for text in texts:
        raised = _USER_RAISED.search(text) if isinstance(text, str) else None
        if raised:  # our own raise_error() (or the query's) somewhere down the failed query: its message
            return raised.group(1).strip()
        failed_cast = failed_literal_cast(text) if isinstance(text, str) else None
        if failed_cast:  # a CAST of text written in the statement that Flink cannot read
            return failed_cast
    for text in reversed(texts):
        if isinstance(text, StreamshellError):
            return text.message
        line = _python_exception_line(text)
        if line:
            return line
    for text in reversed(texts):
        line = _java_line(text)
        if line:
            return line
    first = next((t for t in texts if isinstance(t, str)), "")
    return _clean(first_line(first)) or (type(error).__name__ if isinstance(error, BaseException) else "")


def _texts(error: BaseException | str) -> list:
    """The messages of `error` and of its causes, outermost first, each cut before Spark's query description.

    Spark's captured exceptions carry their message in `_desc`, their JVM stack trace in `_stackTrace` and their
    converted Java cause in `_cause`; a plain Python exception is written as its traceback's last line would be.
    Our own errors are kept as they are.
    """
    texts: list = []
    seen: set[int] = set()
    current: object = error
    while current is not None and id(current) not in seen and len(texts) < 20:
        seen.add(id(current))
        if isinstance(current, StreamshellError):
            texts.append(current)
            break
        if isinstance(current, str):
            text = current
        elif getattr(current, "_desc", None) is not None:  # Spark's CapturedException
            text = str(current._desc)
            stack = getattr(current, "_stackTrace", None)
            if isinstance(stack, str) and "Caused by:" in stack:
                text += "\n" + stack
        else:
            text = _python_text(current)
        texts.append(text.split(_STREAMING_QUERY, 1)[0])
        if isinstance(current, str):
            break
        current = getattr(current, "_cause", None) or getattr(current, "__cause__", None)
    return texts


def _python_text(exc: object) -> str:
    """A Python exception as the last line of its traceback (a multi-line message is kept as it is)."""
    text = str(exc).strip()
    if "\n" in text:
        return text
    module, name = type(exc).__module__, type(exc).__qualname__
    qualified = name if module in ("builtins", "__main__") else f"{module}.{name}"
    return f"{_TRACEBACK}\n{qualified}: {text}" if text else f"{_TRACEBACK}\n{qualified}"


def _python_exception_line(text: str) -> str | None:
    """The exception line closing the last Python traceback in `text` (None without a traceback)."""
    at = text.rfind(_TRACEBACK)
    if at < 0:
        return None
    lines = text[at + len(_TRACEBACK) :].splitlines()
    for index, line in enumerate(lines):
        if not line.strip() or line.startswith((" ", "\t")):
            continue  # the frames ("  File ...") and their code lines, indented
        match = _PYTHON_EXCEPTION.match(line.rstrip())
        if not match:
            return _clean(line)
        kind, message = match.group(1), (match.group(2) or "").strip()
        short = kind.rsplit(".", 1)[-1]
        if message and (kind.startswith(OUR_PACKAGE) or (kind.startswith("pyspark.") and _ERROR_CLASS.match(message))):
            return _clean(message)  # ours, or Spark's own error re-raised in Python: the message says it all
        return _clean(f"{short}: {message}" if message else short)
    return None


def _java_line(text: str) -> str | None:
    """The innermost Java exception named in `text`: the last `Caused by:`, else the first line naming one.

    Within a line the last exception named wins (`Job aborted ...: java.io.IOException: x` is the IOException).
    """
    lines = [line.strip() for line in text.splitlines()]
    caused = [line.removeprefix("Caused by:").strip() for line in lines if line.startswith("Caused by:")]
    for line in reversed(caused) if caused else lines:
        if line.startswith("at "):
            continue  # a stack frame
        named = list(_NESTED_JAVA.finditer(line))
        if not named:
            continue
        found = named[-1]
        qualified = found.group(0)
        message = line[found.end() :].removeprefix(":").strip()
        if qualified.startswith(_WRAPPERS) and message:
            return _clean(message)
        return _clean(f"{qualified.rsplit('.', 1)[-1]}: {message}" if message else qualified.rsplit(".", 1)[-1])
    return None


def _clean(line: str) -> str:
    """One line without Spark's error class and SQLSTATE."""
    line = line.strip()
    line = _ERROR_CLASS.sub("", line)
    return _SQLSTATE.sub("", line).strip()


def from_spark(exc: BaseException) -> StreamshellError:
    """A StreamshellError for an exception raised by Spark (or passed through if it already is one)."""
    if isinstance(exc, StreamshellError):
        return exc
    text = str(getattr(exc, "desc", None) or getattr(exc, "message", None) or exc)
    raised = _USER_RAISED.search(text)  # our own raise_error() somewhere down a failed query
    if raised:
        return ExecutionError(raised.group(1).strip())
    failed_cast = failed_literal_cast(text)  # a CAST of text written in the statement that Flink cannot read
    if failed_cast:
        return ExecutionError(failed_cast)
    line = first_line(text)
    match = _ERROR_CLASS.match(line)
    error_class = match.group(1) if match else ""
    message = _ERROR_CLASS.sub("", line)
    unresolved = _UNRESOLVED.search(message)
    if unresolved:
        name = unresolved.group(1)
        options = [o.strip().replace("`", "") for o in unresolved.group(2).split(",") if o.strip()]
        hint = f"did you mean {options[0].split('.')[-1]}?" if options else None
        return CatalogError(f"unknown column '{name}'", hint=hint)
    real_time = _REAL_TIME_REFUSAL.search(text)  # what Spark's real-time mode cannot run: at start, or as the
    if real_time:  # reason a started query failed ([STREAM_FAILED] ...)
        said = _REAL_TIME_BYPASS.sub("", first_line(real_time.group(1))).strip()
        return UnsupportedFeatureError(f"real-time mode ('execution.latency' = 'low') cannot run this query: {said}",
                                       hint="SET 'execution.latency' = 'normal' runs it in micro-batches")
    if "Append output mode not supported" in message or error_class in UPDATING_QUERY_CLASSES:
        return UnsupportedFeatureError(
            f"{UPDATING_QUERY_CLASSES.get(error_class, 'a query whose result updates')} is not supported yet: {message}",
            hint="aggregate over a window (TUMBLE/HOP/SESSION) with a watermark to get an append-only result",
        )
    return ExecutionError(root_cause(exc) or message or type(exc).__name__)
