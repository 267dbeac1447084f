"""A demo file: SQL statements with `-- @` annotations, read into steps that demo mode plays in order.

Why it exists: a walkthrough must be presentable (pauses, narration) and checkable in CI (expectations), from one
file that is still a valid script for `streamshell -f`. Reading it is separate from playing it, so a misspelt
annotation is reported with `file:line:col` before anything runs, and the rules can be tested without a terminal.

Annotations are comment lines between statements:

    -- @say text                         show a line of narration
    -- @pause                            wait for Enter (skipped when not on a terminal)
    -- @wait CONDITION [timeout N s]     keep the SELECT above running until CONDITION holds (default 30 s)
    -- @expect CONDITION                 fail the demo (exit 1) unless the statement above met CONDITION

CONDITION is one of `rows>=N` (also >, =, <=, <), `row contains 'text'`, `no row contains 'text'` (checked on
the result of the statement above, as its table showed it), `error 'text'` (the statement failed with a message
containing text; `error` alone: any failure), `ok` (it succeeded), `output contains 'text'` (its message or text
output). `@wait` takes the row conditions only.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field

from shell.errors import LINE_BREAK, StreamshellError
from shell.render.materialize import ResultTable
from shell.sql import statements as st
from shell.sql.parse import parse_script
from shell.sql.positions import LineIndex

DEFAULT_WAIT_SECONDS = 30.0

_ANNOTATION = re.compile(r"^(?P<indent>[ \t]*)--[ \t]*@(?P<name>[A-Za-z_-]+)(?P<args>[^\r\n]*)$", re.M)
_QUOTED = r"'(?P<text>(?:[^']|'')*)'"
_OPS = {">=": operator.ge, ">": operator.gt, "=": operator.eq, "==": operator.eq, "<=": operator.le, "<": operator.lt}


class DemoError(StreamshellError):
    """A demo file that cannot be played: a bad annotation, or one with no statement to apply to."""


# conditions -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowCount:
    op: str
    count: int

    def met(self, table: ResultTable | None, outcome=None) -> bool:  # noqa: ANN001
        return table is not None and _OPS[self.op](len(table), self.count)

    def explain(self, table: ResultTable | None, outcome=None) -> str:  # noqa: ANN001
        return f"rows{self.op}{self.count}: got {len(table) if table is not None else 'no result'}"

    def __str__(self) -> str:
        return f"rows{self.op}{self.count}"


@dataclass(frozen=True)
class RowContains:
    text: str
    negated: bool = False

    def met(self, table: ResultTable | None, outcome=None) -> bool:  # noqa: ANN001
        found = table is not None and table.contains_text(self.text)
        return found != self.negated

    def explain(self, table: ResultTable | None, outcome=None) -> str:  # noqa: ANN001
        if table is None:
            return f"{self}: the statement gave no rows"
        return f"{self}: {'found' if self.negated else 'not found'} in {len(table)} rows"

    def __str__(self) -> str:
        return f"{'no ' if self.negated else ''}row contains '{self.text}'"


@dataclass(frozen=True)
class ErrorLike:
    text: str | None = None

    def met(self, table: ResultTable | None, outcome=None) -> bool:  # noqa: ANN001
        error = getattr(outcome, "error", None)
        return error is not None and (self.text is None or self.text.lower() in error.message.lower())

    def explain(self, table: ResultTable | None, outcome=None) -> str:  # noqa: ANN001
        error = getattr(outcome, "error", None)
        return f"{self}: " + (f"the error was '{error.message}'" if error is not None else "the statement succeeded")

    def __str__(self) -> str:
        return "error" + (f" '{self.text}'" if self.text is not None else "")


@dataclass(frozen=True)
class Succeeded:
    def met(self, table: ResultTable | None, outcome=None) -> bool:  # noqa: ANN001
        return outcome is not None and outcome.ok

    def explain(self, table: ResultTable | None, outcome=None) -> str:  # noqa: ANN001
        error = getattr(outcome, "error", None)
        return f"ok: {'failed: ' + error.message if error is not None else 'failed'}"

    def __str__(self) -> str:
        return "ok"


@dataclass(frozen=True)
class OutputContains:
    text: str

    def met(self, table: ResultTable | None, outcome=None) -> bool:  # noqa: ANN001
        return any(self.text in line for line in getattr(outcome, "output", []))

    def explain(self, table: ResultTable | None, outcome=None) -> str:  # noqa: ANN001
        return f"{self}: not in the output"

    def __str__(self) -> str:
        return f"output contains '{self.text}'"


Condition = RowCount | RowContains | ErrorLike | Succeeded | OutputContains
ROW_CONDITIONS = (RowCount, RowContains)


def parse_condition(text: str) -> Condition:
    """One CONDITION (see the module docstring); raises ValueError with the accepted forms."""
    text = text.strip()
    if m := re.fullmatch(r"rows?\s*(>=|<=|==|=|>|<)\s*(\d+)", text, re.I):
        return RowCount(m.group(1), int(m.group(2)))
    if m := re.fullmatch(rf"(no\s+)?rows?\s+contains?\s+{_QUOTED}", text, re.I):
        return RowContains(m.group("text").replace("''", "'"), negated=bool(m.group(1)))
    if m := re.fullmatch(rf"error(?:\s+{_QUOTED})?", text, re.I):
        found = m.group("text")
        return ErrorLike(found.replace("''", "'") if found is not None else None)
    if re.fullmatch(r"ok", text, re.I):
        return Succeeded()
    if m := re.fullmatch(rf"output\s+contains?\s+{_QUOTED}", text, re.I):
        return OutputContains(m.group("text").replace("''", "'"))
    raise ValueError(
        "expected rows>=N, row contains 'text', no row contains 'text', error ['text'], ok or output contains 'text'"
    )


# steps ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Say:
    text: str
    line: int


@dataclass(frozen=True)
class Pause:
    text: str
    line: int


@dataclass(frozen=True)
class Wait:
    condition: Condition
    timeout_seconds: float
    line: int


@dataclass(frozen=True)
class Expect:
    condition: Condition
    line: int
    text: str  # as written, for messages


@dataclass
class Run:
    statement: st.Statement
    wait: Wait | None = None
    expects: list[Expect] = field(default_factory=list)

    @property
    def line(self) -> int:
        return self.statement.source.line if self.statement.source else 0

    @property
    def expects_error(self) -> bool:
        return any(isinstance(e.condition, ErrorLike) for e in self.expects)


Step = Say | Pause | Run


def parse_demo(text: str) -> list[Step]:
    """The steps of a demo file, in order; raises StreamshellError (SQL) or DemoError (annotations)."""
    try:
        statements = parse_script(text)
    except StreamshellError as exc:
        raise exc.with_source(text)
    lines = LINE_BREAK.split(text)
    events: list[tuple[int, object]] = [(s.source.start if s.source else 0, s) for s in statements]
    spans = [(s.source.start, s.source.end) for s in statements if s.source]
    for match in _ANNOTATION.finditer(text):
        offset = match.start() + len(match.group("indent"))
        if any(start <= offset < end for start, end in spans):
            continue  # a comment inside a statement is part of that statement
        events.append((offset, match))
    events.sort(key=lambda e: e[0])
    index = LineIndex(text)
    steps: list[Step] = []
    current: Run | None = None
    for offset, item in events:
        if isinstance(item, st.Statement):
            current = Run(item)
            steps.append(current)
            continue
        line = index.locate(offset).line
        col = len(item.group("indent")) + 1
        try:
            step = _annotation(item.group("name").lower(), item.group("args").strip(), line, current)
        except ValueError as exc:
            raise DemoError(
                f"bad annotation @{item.group('name')}: {exc}", line, col,
                source_line=lines[line - 1] if line <= len(lines) else None,
            ) from None
        if step is not None:
            steps.append(step)
    return steps


def _annotation(name: str, args: str, line: int, current: Run | None) -> Step | None:
    if name == "say":
        return Say(args, line)
    if name == "pause":
        return Pause(args, line)
    if name in ("wait", "expect") and current is None:
        raise ValueError(f"@{name} must follow the statement it is about")
    if name == "wait":
        assert current is not None
        if not isinstance(current.statement, st.Select):
            raise ValueError("@wait must follow a SELECT")
        condition_text, timeout = _split_timeout(args)
        condition = parse_condition(condition_text)
        if not isinstance(condition, ROW_CONDITIONS):
            raise ValueError("@wait takes rows>=N or row contains 'text'")
        current.wait = Wait(condition, timeout, line)
        return None
    if name == "expect":
        assert current is not None
        current.expects.append(Expect(parse_condition(args), line, args))
        return None
    raise ValueError("known annotations are @say, @pause, @wait and @expect")


def _split_timeout(args: str) -> tuple[str, float]:
    match = re.search(r"\s+timeout\s+(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", args, re.I)
    if not match:
        return args, DEFAULT_WAIT_SECONDS
    unit = match.group(2).lower() or "s"
    scale = {"ms": 0.001, "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "m": 60, "min": 60, "mins": 60,
             "minute": 60, "minutes": 60}.get(unit)
    if scale is None:
        raise ValueError(f"unknown time unit '{unit}' (use s, ms or min)")
    return args[: match.start()], float(match.group(1)) * scale
