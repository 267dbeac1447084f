"""Statement splitting: only top-level semicolons split; spans and completeness are exact."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from sqlglot.tokens import TokenType

from shell.sql import is_complete, split_statements
from shell.sql.positions import LineIndex
from shell.sql.split import SourceStatement, _block_opener, split_chunks, tokenize
from tests.unit.test_fuzz_frontend import TOKENS, mutated

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
        ("SELECT X'00", False),
        ("SELECT X'0G';", True),  # complete: the grammar reports the bad binary literal
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


def reference_split(source: str) -> tuple[list[tuple[SourceStatement, int]], int | None]:
    """Statements (and their token counts) found by the plain token-by-token walk (split_chunks
    jumps from semicolon to semicolon instead), and the offset where an open last statement starts."""
    tokens = tokenize(source).tokens
    index = LineIndex(source)
    found, begin, in_block, case_depth = [], None, False, 0
    for i, token in enumerate(tokens):
        kind = token.token_type
        if begin is None:
            if kind == TokenType.SEMICOLON:
                continue
            begin, in_block, case_depth = i, _block_opener(tokens, i), 0
        if in_block:
            if kind == TokenType.CASE:
                case_depth += 1
            elif kind == TokenType.END:
                if case_depth:
                    case_depth -= 1
                else:
                    in_block = False
            continue
        if kind == TokenType.SEMICOLON:
            start, end = tokens[begin].start, tokens[i - 1].end + 1
            pos = index.locate(start)
            found.append((SourceStatement(source[start:end], start, end, pos.line, pos.col, True), i - begin))
            begin = None
    return found, (tokens[begin].start if begin is not None else None)


BLOCKS = ["EXECUTE STATEMENT SET BEGIN", "BEGIN STATEMENT SET;", "END", "CASE WHEN", "END;", "EXPLAIN", "INSERT INTO a"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hs.one_of(mutated(), hs.lists(hs.sampled_from(TOKENS + BLOCKS), max_size=30).map(" ".join)))
def test_split_equals_the_token_by_token_walk(source):
    chunks = split_chunks(source)
    found, open_start = reference_split(source)
    assert [(c.statement, len(c.tokens)) for c in chunks if c.statement.complete] == found
    if open_start is not None:
        assert not chunks[-1].statement.complete and chunks[-1].statement.start == open_start


def test_gc_is_paused_while_splitting_and_restored_after():
    import gc

    from shell.sql.split import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
