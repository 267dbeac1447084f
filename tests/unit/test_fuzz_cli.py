"""Property: whatever a user types or points the shell at, the CLI answers with our one-line errors, never a traceback.

test_fuzz_frontend.py fuzzes the parser alone; this drives the shell itself: script mode through the real entry
point (`shell.cli.main` in-process with `-f`, and `python -m shell -f` in a subprocess for a few fixed inputs) and
the REPL's executor (shell/repl/executor.py), with statements generated from a small grammar, the examples of
docs/reference/statements.md mutated, deep nesting, large inputs, binary junk, text in other encodings, and a home
whose catalog, config, job records and dead-letter files are broken.

The property, for every input:
* the exit code is one the shell documents (shell/exitcodes.py): 0, 1 (a statement failed) or 2 (bad usage, a
  script that is not UTF-8);
* nothing on stdout or stderr is a traceback, or the catch-all `internal error` line (a bug);
* a failure starts with `file:line:col: message`, the position inside the script (exit 1), or names the file and
  the byte that is not UTF-8 (exit 2); a broken file in the home is one `streamshell: warning:` line naming it,
  and the shell starts.

Nothing starts Spark: the session's SparkRuntime is replaced by one that fails the way a Spark that cannot start
does, so a statement that needs Spark (SELECT, INSERT, EXPLAIN) runs as far as the front end, the catalog and the
planner take it and then fails with a positioned one-line error. Nothing reaches the network either: a broker's
reachability check (PRINT, DESCRIBE TOPIC) is refused at once.

Bounded for the unit tier (STREAMSHELL_FUZZ_EXAMPLES examples per property, 40 by default; inputs up to
STREAMSHELL_FUZZ_BIG characters, 20,000 by default). The long run (docs/development.md, "Fuzzing the command
line") raises both:
`STREAMSHELL_FUZZ_EXAMPLES=200 STREAMSHELL_FUZZ_BIG=1000000 .venv/bin/python -m pytest -m unit tests/unit/test_fuzz_cli.py`
(about a minute and a half; its figures are in docs/development.md).
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as s
from rich.console import Console

from shell.cli import main
from shell.config import SETTINGS
from shell.connectors import reachability
from shell.errors import LINE_BREAK, ExecutionError
from shell.exitcodes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from shell.jobs.record import JobRecord
from shell.repl.executor import Executor
from shell.sql import split_statements

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("STREAMSHELL_FUZZ_EXAMPLES", "40"))
BIG = int(os.environ.get("STREAMSHELL_FUZZ_BIG", "20000"))
SECONDS = float(os.environ.get("STREAMSHELL_FUZZ_SECONDS", "60"))  # the slowest input allowed (a loaded machine)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])  # fmt: skip
DOCUMENTED_EXIT_CODES = {EXIT_OK, EXIT_FAILED, EXIT_USAGE}
NO_SPARK = "Spark failed to start: not in the unit tier"


# ---- no Spark, no network --------------------------------------------------------------------------------------


class NoSpark:
    """Stands in for shell.engine.spark.SparkRuntime: never starts a JVM; getting Spark fails as a failed start."""

    def __init__(self, *args, **kwargs):
        self.started = False
        self.starting = False

    def start(self) -> None:
        pass

    def get(self, timeout: float | None = None):
        raise ExecutionError(NO_SPARK, hint="the fuzz suite stops at Spark")

    def stop(self) -> None:
        pass


@pytest.fixture(autouse=True)
def no_spark_no_network(monkeypatch):
    import shell.session

    def refuse(address, *args, **kwargs):
        raise ConnectionRefusedError(111, "Connection refused (the fuzz suite does not connect)")

    monkeypatch.setattr(shell.session, "SparkRuntime", NoSpark)
    monkeypatch.setattr(shell.session, "launch", no_job_process)
    monkeypatch.setattr(reachability.socket, "create_connection", refuse)


def no_job_process(directory: Path) -> int:
    """In place of starting a job process: one that says, as a real one would, that its Spark did not start."""
    from shell.jobs.record import FAILED, JobState

    error = {"kind": "ExecutionError", "message": "Spark failed to start: the unit tier starts no Spark", "hint": None}
    JobState(FAILED, failure=error["message"], error=error).write(directory)
    return 0


# ---- inputs ----------------------------------------------------------------------------------------------------


def documented_statements() -> list[str]:
    """Every example statement of docs/reference/statements.md, as text."""
    page = (ROOT / "docs" / "reference" / "statements.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", page, flags=re.S)
    return [statement.text + ";" for block in blocks for statement in split_statements(block) if statement.text.strip()]


DOCUMENTED = documented_statements()
PRELUDE = ("CREATE TEMPORARY TABLE t (a INT, b STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), "
           "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');\n")  # fmt: skip
TOKENS = ["SELECT", "FROM", "WHERE", "GROUP BY", "(", ")", ",", ";", "'", "`", "/*", "*/", "--", "\n", "\r\n", "\t",
          "AS", "INT", "ROW<", ">", "BEGIN", "END", "CASE", "WITH (", "'connector' = 'kafka'", "=", "LIKE", "\x00",
          "é", "\u202e", "\ufeff", "X'zz'", "INTERVAL '1' MINUTE", "TABLE(TUMBLE(", "OVER (", "EXECUTE STATEMENT SET",
          "${env:HOME}", "SHOW", "JOB '", "MATCH_RECOGNIZE", "\\", "\"", "0x", "1e309", "-- @expect rows>=1"]  # fmt: skip

NAMES = s.sampled_from(["t", "orders", "v", "nope", "T", "`a b`", "`select`", "customer_totals", "x1"])
COLUMNS = s.sampled_from(["a", "b", "ts", "amount", "nope", "`a b`", "t.a", "window_start"])
TYPES = s.sampled_from(["INT", "BIGINT", "STRING", "DOUBLE", "DECIMAL(10, 2)", "TIMESTAMP(3)", "BOOLEAN", "BYTES",
                        "ARRAY<INT>", "MAP<STRING, INT>", "ROW<x INT, y STRING>", "VARCHAR(3)", "NOPE"])  # fmt: skip
FUNCTIONS = s.sampled_from(["ABS", "UPPER", "COALESCE", "CONCAT", "COUNT", "SUM", "MAX", "JSON_VALUE", "DATE_FORMAT",
                            "TUMBLE_START", "NOPE_FN", "CHAR_LENGTH", "SUBSTRING"])  # fmt: skip
LITERALS = s.one_of(
    s.integers(-(2**70), 2**70).map(str),
    s.sampled_from(["'x'", "''", "'it''s'", "NULL", "TRUE", "1.5", "X'0F'", "INTERVAL '5' SECOND", "DATE '2024-02-30'",
                    "TIMESTAMP '2024-01-01 00:00:00'", "'\u00e9\u6f22'", "1e309", "-0"]),  # fmt: skip
)
OPTION_KEYS = s.sampled_from(["connector", "topic", "format", "value.format", "key.format", "path", "number-of-rows",
                              "rows-per-second", "properties.bootstrap.servers", "scan.startup.mode", "errors.mode",
                              "service-url", "fields.a.kind", "json.ignore-parse-errors", "nope"])  # fmt: skip
OPTION_VALUES = s.sampled_from(["kafka", "datagen", "filesystem", "print", "blackhole", "pulsar", "upsert-kafka",
                                "json", "csv", "raw", "debezium-json", "localhost:9092", "/tmp/nowhere", "5", "-1",
                                "", "x" * 300, "true", "${env:NOPE}", "earliest-offset"])  # fmt: skip


def quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


expressions = s.recursive(
    s.one_of(COLUMNS, LITERALS),
    lambda inner: s.one_of(
        s.tuples(inner, s.sampled_from(["+", "-", "*", "/", "%", "=", "<>", "<", ">=", "AND", "OR", "||", "LIKE"]),
                 inner).map(" ".join),  # fmt: skip
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"NOT {e}"),
        s.tuples(FUNCTIONS, s.lists(inner, max_size=3)).map(lambda f: f"{f[0]}({', '.join(f[1])})"),
        s.tuples(inner, TYPES).map(lambda c: f"CAST({c[0]} AS {c[1]})"),
        s.tuples(inner, inner, inner).map(lambda c: f"CASE WHEN {c[0]} THEN {c[1]} ELSE {c[2]} END"),
        s.tuples(inner, s.lists(inner, min_size=1, max_size=3)).map(lambda i: f"{i[0]} IN ({', '.join(i[1])})"),
        s.tuples(inner, inner, inner).map(lambda b: f"{b[0]} BETWEEN {b[1]} AND {b[2]}"),
    ),
    max_leaves=10,
)


@s.composite
def selects(draw) -> str:
    items = draw(s.lists(s.one_of(expressions, s.just("*")), min_size=1, max_size=4))
    source = draw(s.one_of(NAMES, s.just("TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))"),
                           NAMES.map(lambda n: f"(SELECT * FROM {n}) AS sub")))  # fmt: skip
    text = f"SELECT {'DISTINCT ' if draw(s.booleans()) else ''}{', '.join(items)} FROM {source}"
    if draw(s.booleans()):
        text += f" WHERE {draw(expressions)}"
    if draw(s.booleans()):
        text += f" GROUP BY {', '.join(draw(s.lists(expressions, min_size=1, max_size=2)))}"
    if draw(s.booleans()):
        text += f" LIMIT {draw(s.integers(-1, 10**12))}"
    return text


@s.composite
def create_tables(draw) -> str:
    columns = draw(s.lists(s.one_of(
        s.tuples(COLUMNS, TYPES).map(" ".join),
        s.tuples(COLUMNS, expressions).map(lambda c: f"{c[0]} AS {c[1]}"),
        s.tuples(COLUMNS, TYPES).map(lambda c: f"{c[0]} {c[1]} METADATA VIRTUAL"),
        s.tuples(COLUMNS, expressions).map(lambda w: f"WATERMARK FOR {w[0]} AS {w[1]}"),
        COLUMNS.map(lambda c: f"PRIMARY KEY ({c}) NOT ENFORCED"),
    ), min_size=1, max_size=5))  # fmt: skip
    options = draw(s.lists(s.tuples(OPTION_KEYS, OPTION_VALUES), max_size=5))
    temporary = "TEMPORARY " if draw(s.booleans()) else ""
    with_ = ", ".join(f"{quoted(k)} = {quoted(v)}" for k, v in options)
    return f"CREATE {temporary}TABLE {draw(NAMES)} ({', '.join(columns)}) WITH ({with_})"


SETTING_KEYS = s.sampled_from([k for k in SETTINGS if k != "sql-client.verbose"] + ["nope.key", "spark.sql.x", ""])

statements = s.one_of(
    selects(),
    create_tables(),
    s.tuples(NAMES, selects()).map(lambda v: f"CREATE VIEW {v[0]} AS {v[1]}"),
    s.tuples(NAMES, selects()).map(lambda i: f"INSERT INTO {i[0]} {i[1]}"),
    s.tuples(NAMES, s.lists(s.lists(LITERALS, min_size=1, max_size=3), min_size=1, max_size=3)).map(
        lambda i: f"INSERT INTO {i[0]} VALUES " + ", ".join("(" + ", ".join(row) + ")" for row in i[1])),
    selects().map(lambda q: f"EXPLAIN {q}"),
    s.tuples(SETTING_KEYS, OPTION_VALUES).map(lambda kv: f"SET {quoted(kv[0])} = {quoted(kv[1])}"),
    SETTING_KEYS.map(lambda k: f"RESET {quoted(k)}"),
    s.sampled_from(["SET", "RESET", "SHOW TABLES", "SHOW VIEWS", "SHOW JOBS", "SHOW FUNCTIONS", "HELP", "HELP SHOW",
                    "SHOW CATALOGS", "CLEAR"]),  # fmt: skip
    NAMES.map(lambda n: f"SHOW CREATE TABLE {n}"),
    NAMES.map(lambda n: f"DESCRIBE {n}"),
    s.tuples(NAMES, s.integers(-5, 10**20)).map(lambda e: f"SHOW ERRORS FOR {e[0]} LIMIT {e[1]}"),
    NAMES.map(lambda n: f"DROP TABLE IF EXISTS {n}"),
    s.tuples(NAMES, OPTION_KEYS, OPTION_VALUES).map(lambda a: f"ALTER TABLE {a[0]} SET ({quoted(a[1])} = {quoted(a[2])})"),
    s.sampled_from(["abcd1234", "", "../x", "nope"]).map(lambda j: f"STOP JOB {quoted(j)} WITH SAVEPOINT"),
    s.sampled_from(["abcd1234", "nope"]).map(lambda j: f"RESUME JOB {quoted(j)}"),
    s.sampled_from(["orders", "", "x" * 300]).map(lambda t: f"PRINT {quoted(t)} FROM BEGINNING LIMIT 3"),
    s.sampled_from(["orders", "nope"]).map(lambda t: f"DESCRIBE TOPIC {quoted(t)} SAMPLE 2"),
)


@s.composite
def scripts(draw) -> str:
    """A few statements: generated, or the documentation's examples; after the datagen table `t` or not."""
    parts = draw(s.lists(s.one_of(statements.map(lambda x: x + ";"), s.sampled_from(DOCUMENTED)), min_size=1, max_size=4))
    return (PRELUDE if draw(s.booleans()) else "") + "\n".join(parts)


@s.composite
def mutated(draw) -> str:
    text = draw(scripts())
    for _ in range(draw(s.integers(1, 4))):
        at = draw(s.integers(0, len(text)))
        action = draw(s.sampled_from(["insert", "delete", "token", "repeat"]))
        if action == "delete":
            text = text[:at] + text[min(len(text), at + draw(s.integers(1, 12))):]
        elif action == "insert":
            text = text[:at] + draw(s.text(min_size=1, max_size=4)) + text[at:]
        elif action == "token":
            text = text[:at] + " " + draw(s.sampled_from(TOKENS)) + " " + text[at:]
        else:
            end = min(len(text), at + draw(s.integers(1, 20)))
            text = text[:at] + text[at:end] * draw(s.integers(2, 30)) + text[end:]
    return text


def nested(open_: str, close: str, inner: str = "1") -> s.SearchStrategy[str]:
    return s.integers(1, 3000).map(lambda depth: open_ * depth + inner + close * depth)


deep = s.one_of(
    nested("(", ")").map(lambda e: f"SELECT {e} FROM t;"),
    nested("ABS(", ")").map(lambda e: f"SELECT {e};"),
    nested("(SELECT * FROM ", ") AS x", "t").map(lambda q: f"SELECT * FROM {q};"),
    nested("CASE WHEN TRUE THEN ", " END").map(lambda e: f"SELECT {e} FROM t;"),
    nested("ROW<x ", ">", "INT").map(lambda ty: f"CREATE TABLE d (c {ty}) WITH ('connector' = 'datagen');"),
    nested("ARRAY[", "]").map(lambda e: f"SELECT {e};"),
    nested("-", "").map(lambda e: f"SELECT {e} FROM t;"),
    nested("NOT ", "", "TRUE").map(lambda e: f"SELECT * FROM t WHERE {e};"),
    s.integers(1, 5000).map(lambda depth: "SELECT " + "(" * depth + "1 FROM t;"),  # never closed
    s.integers(1, 5000).map(lambda depth: "SELECT 1" + ")" * depth + ";"),
)


@s.composite
def large(draw) -> str:
    """One statement of about BIG characters, of a shape the front end and the planner must not choke on (over
    the datagen table `t`, so that it is planned, not refused for an unknown table)."""
    return PRELUDE + draw(large_statement())


@s.composite
def large_statement(draw) -> str:
    size = draw(s.integers(BIG // 4, BIG))
    shape = draw(s.sampled_from(["sum", "in", "string", "comment", "columns", "statements", "and", "identifier"]))
    count = max(1, size // 8)
    if shape == "sum":
        return "SELECT " + " + ".join(str(i) for i in range(count)) + " FROM t;"
    if shape == "in":
        return "SELECT * FROM t WHERE a IN (" + ", ".join(str(i) for i in range(count)) + ");"
    if shape == "string":
        return f"SELECT '{'x' * size}' FROM t;"
    if shape == "comment":
        return "-- " + "x" * size + "\nSHOW TABLES;"
    if shape == "columns":
        return "SELECT " + ", ".join(f"a AS c{i}" for i in range(count // 2)) + " FROM t;"
    if shape == "statements":
        return "SHOW TABLES;\n" * (count // 2)
    if shape == "and":
        return "SELECT * FROM t WHERE " + " AND ".join(f"a <> {i}" for i in range(count // 2)) + ";"
    return f"SELECT `{'c' * size}` FROM t;"


def encoded(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


junk = s.one_of(
    s.binary(max_size=300),
    s.tuples(scripts(), s.sampled_from(["utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252", "utf-8-sig", "gb18030",
                                        "shift_jis"])).map(lambda t: encoded(t[0] + " -- café 漢字", t[1])),  # fmt: skip
    s.tuples(scripts(), s.binary(min_size=1, max_size=8), s.integers(0, 400)).map(
        lambda t: t[0].encode()[: t[2]] + t[1] + t[0].encode()[t[2]:]),
    scripts().map(lambda t: t.encode() + b"\xed\xa0\x80"),  # a lone surrogate, as CESU-8 writes it
)


# ---- a home with broken files ----------------------------------------------------------------------------------

TABLE_RECORD = {"name": "t", "columns": [{"name": "a", "data_type": "INT", "kind": "PHYSICAL", "nullable": True,
                "comment": None, "expression": None, "metadata_key": None, "virtual": False}],
                "options": {"connector": "datagen"}}  # fmt: skip
BROKEN_CONTENT = s.one_of(
    s.binary(max_size=64),
    s.sampled_from([b"", b"{", b"[]", b"null", b'{"name": 5}', b"\xff\xfe{}", b'{"name": "t"}', b"not json",
                    json.dumps(TABLE_RECORD).encode()[:40], b'{"version": 99}', b"\x00" * 10]),  # fmt: skip
    s.just("directory"),
)
STATE_FILES = s.sampled_from([
    "config.properties", "catalog/tables/t.json", "catalog/tables/orders.json", "catalog/views/v.json",
    "catalog/tables/x y.json", "catalog/tables/.t.json.tmp", "jobs/abcd1234/job.json", "jobs/abcd1234/state.json", "jobs/nope/job.json",
    "errors/t/job1/batch-000000000001/part-00000.json", "errors/t/job1/batch-000000000001/_SUCCESS",
    "errors/t/select-1/_spark_metadata/0", "errors/t/select-1/part-00000-x-c000.json", "log/spark.log",
    "history",
])  # fmt: skip
broken_homes = s.lists(s.tuples(STATE_FILES, BROKEN_CONTENT), max_size=5, unique_by=lambda f: f[0])


def plant(home: Path, files: list[tuple[str, bytes | str]]) -> None:
    """A home with the given files: a good savepoint record and table first, then the broken ones over them."""
    JobRecord("abcd1234", "insert-into_out", "INSERT INTO out SELECT * FROM t;", "out", str(home / "jobs" / "abcd1234"),
              "2026-11-27T10:00:00Z", stopped_at="2026-11-27T10:00:00Z").write(home / "jobs" / "abcd1234")  # fmt: skip
    (home / "catalog" / "tables").mkdir(parents=True, exist_ok=True)
    (home / "catalog" / "tables" / "orders.json").write_text(json.dumps({**TABLE_RECORD, "name": "orders"}))
    for relative, content in files:
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            continue
        if content == "directory":
            if path.exists():
                path.unlink()
            path.mkdir()
        else:
            path.write_bytes(content)


# ---- the property ----------------------------------------------------------------------------------------------


def lines_of(text: str) -> list[str]:
    return LINE_BREAK.split(text)


def assert_one_line_errors(code: int, out: str, err: str, script: Path, data: bytes, home: Path, seconds: float) -> None:
    """What every run of the CLI must look like (the module docstring)."""
    shown = f"exit {code}\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}"
    assert code in DOCUMENTED_EXIT_CODES, shown
    assert "Traceback" not in out and "Traceback" not in err, shown
    assert "internal error" not in err and "internal error" not in out, shown
    assert seconds < SECONDS, f"{seconds:.1f} s for one input\n{shown}"
    problems = []
    for line in err.splitlines():
        if line.startswith("streamshell: warning: "):
            assert str(home) in line, f"a warning names the file it is about\n{shown}"
        else:
            problems.append(line)
    if code == EXIT_OK:
        assert not [p for p in problems if p and not p.startswith("[WARNING]")], shown
        return
    assert problems, shown
    first = problems[0]
    if code == EXIT_USAGE:
        assert first.startswith(f"{script}:") and ": not UTF-8 text: byte 0x" in first, shown
        return
    match = re.match(rf"^{re.escape(str(script))}:(\d+):(\d+): \S", first)
    assert match, shown
    text = data.decode("utf-8-sig")  # it was read as UTF-8 (exit 1: it is)
    lines = lines_of(text)
    line, col = int(match.group(1)), int(match.group(2))
    assert 1 <= line <= len(lines), shown
    assert 1 <= col <= len(lines[line - 1]) + 1, shown


@contextmanager
def a_home(files: list[tuple[str, bytes | str]] = ()) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="fuzz-home-") as folder:
        home = Path(folder) / "home"
        home.mkdir()
        plant(home, list(files))
        yield home


def run_script(capfd, data: bytes, files: list[tuple[str, bytes | str]] = ()) -> None:
    """`streamshell --catalog HOME -f SCRIPT` in-process, and the property checked on what it printed."""
    capfd.readouterr()
    with a_home(files) as home:
        script = home.parent / "fuzz.sql"
        script.write_bytes(data)
        started = time.monotonic()
        code = main(["--catalog", str(home), "-f", str(script)])
        seconds = time.monotonic() - started
        out, err = capfd.readouterr()
        assert_one_line_errors(code, out, err, script, data, home, seconds)


@FUZZ
@given(scripts())
def test_script_mode_generated_statements(capfd, text):
    run_script(capfd, text.encode())


@FUZZ
@given(mutated())
def test_script_mode_mutated_statements(capfd, text):
    run_script(capfd, text.encode())


@FUZZ
@given(deep)
def test_script_mode_deep_nesting(capfd, text):
    run_script(capfd, text.encode())


@settings(FUZZ, max_examples=max(4, EXAMPLES // 10))
@given(large())
def test_script_mode_large_inputs(capfd, text):
    run_script(capfd, text.encode())


@FUZZ
@given(junk)
def test_script_mode_binary_junk_and_other_encodings(capfd, data):
    run_script(capfd, data)


@FUZZ
@given(broken_homes, s.one_of(scripts(), s.sampled_from(["SHOW TABLES;", "SHOW JOBS;", "SHOW ERRORS FOR t LIMIT 3;",
                                                          "RESUME JOB 'abcd1234';", "SET;", "DESCRIBE orders;"])))  # fmt: skip
def test_script_mode_with_broken_files_in_the_home(capfd, files, text):
    run_script(capfd, text.encode(), files)


# ---- the REPL's executor ---------------------------------------------------------------------------------------


def run_in_executor(capsys, text: str, interactive: bool) -> None:
    """The REPL's executor runs `text` as the prompt would: pasted whole, then statement by statement as typed
    one at a time (each a buffer of its own: positions are in it); on a terminal (rich) or a pipe (printers)."""
    from shell.session import Session, SessionOptions

    with a_home() as home:
        console = Console(file=io.StringIO(), force_terminal=interactive, width=120, height=40, color_system=None)
        session = Session(SessionOptions(home=home))
        try:
            executor = Executor(session, console)
            for buffer in [text, *(f"{part.text};" for part in split_statements(text) if part.text.strip())]:
                capsys.readouterr()
                console.file.seek(0)
                console.file.truncate()
                outcomes = executor.run_text(buffer)
                check_executor_run(buffer, outcomes, console.file.getvalue(), *capsys.readouterr(), interactive)
        finally:
            session.close()


def check_executor_run(buffer: str, outcomes: list, shown: str, out: str, err: str, interactive: bool) -> None:
    everything = f"--- input\n{buffer[:1000]}\n--- console\n{shown[-3000:]}\n--- stdout\n{out[-2000:]}\n--- stderr\n{err[-2000:]}"
    for stream in (shown, out, err):
        assert "Traceback" not in stream and "internal error" not in stream, everything
    lines = lines_of(buffer)
    for outcome in outcomes:
        assert outcome.internal is None, everything
        if outcome.error is not None:
            error = outcome.error
            assert error.has_position, everything
            assert 1 <= error.line <= len(lines) and 1 <= error.col <= len(lines[error.line - 1]) + 1, everything
    failed = [o for o in outcomes if o.error is not None]
    if failed and not interactive:
        assert err.splitlines()[0].startswith(f"{failed[0].error.line}:{failed[0].error.col}: "), everything
    if not outcomes and buffer.strip() and split_statements(buffer):  # it did not parse: it says where
        message = shown if interactive else err
        assert re.match(r"^\d+:\d+: \S", message.lstrip()), everything


@FUZZ
@given(s.one_of(scripts(), mutated(), deep), s.booleans())
def test_the_repl_executor(capsys, text, interactive):
    run_in_executor(capsys, text, interactive)


# ---- the real entry point, in a process of its own -------------------------------------------------------------

SUBPROCESS_CASES = [
    (b"SHOW TABLES;\n\nSELEC 1;\n", EXIT_FAILED, ":3:1: "),
    (b"SHOW TABLES;\n-- caf\xe9\n", EXIT_USAGE, ":2:7: not UTF-8 text: byte 0xe9"),
    (("SELECT " + "(" * 5000 + "1" + ")" * 5000 + " FROM t;").encode(), EXIT_FAILED, ":1:"),
    (b"\x00\x01\x02\xff\xfe garbage", EXIT_USAGE, ":1:"),
    (b"CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = 'many');", EXIT_FAILED, ":1:"),
]


@pytest.mark.parametrize(("data", "code", "position"), SUBPROCESS_CASES)
def test_python_m_shell_f_in_a_process_of_its_own(tmp_path, data, code, position):
    """`python -m shell -f` as a user runs it: what the in-process runs check, with the real stdio and exit code."""
    script = tmp_path / "input.sql"
    script.write_bytes(data)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.properties").write_bytes(b"sql-client.display.max-column-width = \xff\n")  # a broken file too
    done = subprocess.run([sys.executable, "-m", "shell", "--catalog", str(home), "-f", str(script)], cwd=ROOT,
                          capture_output=True, timeout=120)  # fmt: skip
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == code, err
    assert "Traceback" not in out + err
    lines = err.splitlines()
    assert lines[0].startswith(f"streamshell: warning: ignored {home / 'config.properties'}:1:"), err
    assert lines[1].startswith(f"{script}{position}"), err
