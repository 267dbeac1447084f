"""Errors point at the exact character of the whole script, render with a caret, and hint."""

from __future__ import annotations

import pytest

from shell.errors import (
    CatalogError,
    ExecutionError,
    OptionError,
    SqlSyntaxError,
    StreamshellError,
    UnsupportedFeatureError,
    caret_line,
)
from shell.sql import parse_script, parse_statement, split_statements
from shell.sql.hints import keyword_hint, suggest
from shell.sql.parse import error_at

pytestmark = pytest.mark.unit


def error_of(source: str) -> StreamshellError:
    with pytest.raises(StreamshellError) as info:
        parse_script(source)
    return info.value


def test_render_with_position_caret_and_hint():
    error = error_of("SELECT 1;\nSELEC * FROM t;")
    assert isinstance(error, SqlSyntaxError)
    assert (error.line, error.col) == (2, 1)
    assert error.render("job.sql") == (
        "job.sql:2:1: unknown statement starting with 'SELEC'\n"
        "SELEC * FROM t;\n"
        "^^^^^\n"
        "hint: did you mean SELECT?"
    )


def test_render_without_position():
    assert ExecutionError("the job failed").render() == "the job failed"
    assert ExecutionError("the job failed", hint="see SHOW JOBS").render() == "the job failed\nhint: see SHOW JOBS"


@pytest.mark.parametrize(
    "source, line, col, message",
    [
        ("SELECT a FROM t WHERE a > ;", 1, 26, "end of statement"),
        ("CREATE TABLE t (\n  a INT,\n  b STRNG\n) WITH ('connector' = 'kafka');", 3, 5, "expected a data type"),
        ("SELECT 1;\n\n  CRATE TABLE t (a INT);", 3, 3, "unknown statement"),
        ("SELECT 1; SELECT 'open", 1, 18, "unterminated string literal"),
        ("SELECT `open FROM t", 1, 8, "unterminated quoted identifier"),
        ("SELECT 1;\r\nSELECT 2 /* never closed", 2, 10, "unterminated comment"),
        ("SELECT a FROM t; SELECT * FROM", 1, 31, "end of statement"),
        ("INSERT INTO t\nSELECT *\nFROM s\nWHERE x = = 1;", 4, 11, "near '='"),
        ("CREATE TABLE t (a INT, PRIMARY KEY (a));", 1, 39, "NOT ENFORCED"),
    ],
)
def test_positions_are_in_the_whole_script(source, line, col, message):
    error = error_of(source)
    assert (error.line, error.col) == (line, col), error.render()
    assert message in error.message
    assert error.source_line == source.replace("\r\n", "\n").split("\n")[line - 1]


@pytest.mark.parametrize(
    "source, hint",
    [
        ("SELEC * FROM t;", "did you mean SELECT?"),
        ("CRATE TABLE t (a INT);", "did you mean CREATE?"),
        ("SHOW TABELS;", "did you mean TABLES?"),
        ("CREATE TABEL t (a INT);", "did you mean TABLE?"),
        ("INSRT INTO t SELECT 1;", "did you mean INSERT?"),
        ("DESCRIBEE t;", "did you mean DESCRIBE?"),
        ("CREATE TABLE t (a STRIN);", "did you mean STRING?"),
        ("CREATE TABLE t (a XYZZY);", None),
    ],
)
def test_keyword_hints(source, hint):
    assert error_of(source).hint == hint


def test_unsupported_feature_is_one_line_naming_it():
    error = error_of("SELECT * FROM t\nMATCH_RECOGNIZE (PARTITION BY a);")
    assert isinstance(error, UnsupportedFeatureError)
    assert error.message == "MATCH_RECOGNIZE is not supported"
    assert (error.line, error.col) == (2, 1)
    assert error.render().splitlines()[0] == "2:1: MATCH_RECOGNIZE is not supported"


def test_parse_statement_positions_use_the_statement_offset():
    source = "SELECT 1;\n   SELECT a FROM t WHERE;"
    statement = split_statements(source)[1]
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(statement)
    assert (info.value.line, info.value.col) == (2, 25)
    assert info.value.source_line == "   SELECT a FROM t WHERE"


def test_error_at_for_later_errors():
    [_, create] = parse_script("SELECT 1;\n  CREATE TABLE users (a INT) WITH ('connector' = 'kafak');")
    source = create.source
    offset = source.text.index("'kafak'")
    error = error_at(source, offset, "unknown connector 'kafak'", cls=OptionError, length=7, hint=suggest("kafak", ["kafka", "pulsar"]))
    line = "  CREATE TABLE users (a INT) WITH ('connector' = 'kafak');"
    assert (error.line, error.col) == (2, line.index("'kafak'") + 1)
    assert error.render().splitlines()[1:] == [
        line[:-1],
        " " * line.index("'kafak'") + "^^^^^^^",
        "hint: did you mean kafka?",
    ]


def test_hierarchy():
    for cls in (SqlSyntaxError, UnsupportedFeatureError, CatalogError, OptionError, ExecutionError):
        assert issubclass(cls, StreamshellError)


def test_caret_line_keeps_tabs():
    assert caret_line("\tSELECT x", 2, 6) == "\t^^^^^^"
    assert caret_line("ab", 5) == "    ^"


def test_suggest():
    assert suggest("usres", ["users", "orders"]) == "did you mean users?"
    assert suggest("Users", ["users"]) is None
    assert suggest("zzz", ["users"]) is None
    assert keyword_hint(["SHOW", "TABELS"]) == "did you mean TABLES?"
    assert keyword_hint(["SELECT"]) is None
