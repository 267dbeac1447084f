"""Statement splitting: only top-level semicolons split; spans and completeness are exact."""

from __future__ import annotations

import pytest

from shell.sql import is_complete, split_statements
from shell.sql.split import SourceStatement

pytestmark = pytest.mark.unit

SPLITS = [
    ("SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"]),
    ("SELECT 'a;b' FROM t; SELECT 2;", ["SELECT 'a;b' FROM t", "SELECT 2"]),
    ("SELECT 'it''s;' FROM t;", ["SELECT 'it''s;' FROM t"]),
    ("SELECT `a;b` FROM t; SELECT 2;", ["SELECT `a;b` FROM t", "SELECT 2"]),
    ("SELECT 1 -- a; comment\n; SELECT 2;", ["SELECT 1", "SELECT 2"]),
    ("SELECT 1 /* a; b */; SELECT 2;", ["SELECT 1", "SELECT 2"]),
    ("SELECT 1 /* outer /* inner; */ still; */; SELECT 2;", ["SELECT 1", "SELECT 2"]),
    ("-- header;\nSELECT 1;", ["SELECT 1"]),
    ("SELECT 1;;; ;\n; SELECT 2;", ["SELECT 1", "SELECT 2"]),
    ("SELECT 1;\r\nSELECT 2;\r\n", ["SELECT 1", "SELECT 2"]),
    ("SELECT 1;\nSELECT 2", ["SELECT 1", "SELECT 2"]),
    ("", []),
    ("   \n\t ", []),
    ("-- only a comment", []),
    (";;", []),
    (
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END; SELECT 3;",
        ["EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END", "SELECT 3"],
    ),
    (
        "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO a SELECT CASE WHEN x THEN 1 END FROM s;\nEND;",
        ["EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO a SELECT CASE WHEN x THEN 1 END FROM s;\nEND"],
    ),
    (
        "BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nEND;\nSELECT 2;",
        ["BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nEND", "SELECT 2"],
    ),
    ("SELECT 'multi\nline;' FROM t;", ["SELECT 'multi\nline;' FROM t"]),
]


@pytest.mark.parametrize("source, texts", SPLITS)
def test_split(source, texts):
    statements = split_statements(source)
    assert [s.text for s in statements] == texts
    for s in statements:
        assert source[s.start : s.end] == s.text


def test_positions_are_line_and_column_of_the_first_token():
    source = "-- c\n  SELECT 1;\r\n\r\n   SELECT\n 2 ; SELECT 3"
    a, b, c = split_statements(source)
    assert (a.line, a.col) == (2, 3)
    assert (b.line, b.col) == (4, 4)
    assert (c.line, c.col) == (5, 6)
    assert [a.complete, b.complete, c.complete] == [True, True, False]


def test_trailing_statement_without_semicolon_is_incomplete():
    [s] = split_statements("SELECT 1")
    assert s == SourceStatement("SELECT 1", 0, 8, 1, 1, False)


@pytest.mark.parametrize(
    "source",
    [
        "SELECT 'open;",
        "SELECT `open; FROM t",
        "SELECT 1 /* open; ",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;",
        "BEGIN STATEMENT SET;",
        "SELECT 1",
    ],
)
def test_unterminated_input_is_incomplete(source):
    assert split_statements(source)[-1].complete is False
    assert is_complete(source) is False


@pytest.mark.parametrize(
    "buffer, complete",
    [
        ("SELECT 1;", True),
        ("SELECT 1; -- done", True),
        ("SELECT 1;\n", True),
        ("SELECT 1", False),
        ("SELECT ';'", False),
        ("", False),
        ("   ", False),
        ("QUIT", True),
        ("quit", True),
        ("EXIT", True),
        ("HELP", True),
        ("CLEAR", True),
        ("QUIT;", True),
        ("SHOW TABLES", False),
        ("SHOW TABLES;", True),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END", False),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END;", True),
        ("SELECT 1; SELECT 2", False),
        ("SELECT 1;\nQUIT", True),
    ],
)
def test_is_complete(buffer, complete):
    assert is_complete(buffer) is complete


def test_one_megabyte_script_splits():
    unit = "INSERT INTO t SELECT 'a;b', `c;d` FROM s; -- x;\n/* y; */ CREATE TABLE x (a INT) WITH ('k' = 'v;');\n"
    source = unit * (1_000_000 // len(unit) + 1)
    statements = split_statements(source)
    assert len(statements) == 2 * (1_000_000 // len(unit) + 1)
    last = statements[-1]
    assert source[last.start : last.end] == last.text and last.complete
