"""When Enter submits, how unfinished statements are prompted, and how the dialect is highlighted."""

from __future__ import annotations

import pytest
from pygments.token import Comment, Keyword, Name, String

from shell.repl.buffer import CONTINUATION, PROMPT, continuation, should_submit
from shell.repl.lexer import StreamshellLexer, highlight_rich


@pytest.mark.parametrize(
    "text",
    ["SELECT 1;", "SHOW TABLES;\n", "QUIT", "help", "", "   ", "SELECT 1; SELECT 2;",
     "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM b; END;"],
)
def test_submits(text):
    assert should_submit(text)


@pytest.mark.parametrize(
    "text",
    ["SELECT 1", "SELECT ';'", "SELECT 1 -- ;", "SELECT /* ; */ 1", "SELECT 1; SELECT",
     "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM b;", "SELECT 'open;"],
)
def test_waits_for_more(text):
    assert not should_submit(text)


def test_continuation_lines_up_under_the_prompt():
    assert PROMPT == "streamshell> "
    assert len(CONTINUATION) == len(PROMPT) and CONTINUATION.endswith("-> ")
    assert continuation(len(PROMPT), 1, 0) == CONTINUATION
    assert continuation(len(PROMPT), 1, 1) == " " * len(PROMPT), "a soft-wrapped line is not a new line"


def tokens(sql: str) -> dict[str, object]:
    return {value: token for token, value in StreamshellLexer().get_tokens(sql) if value.strip()}


def test_flink_words_are_keywords():
    found = tokens("CREATE TABLE t (ts TIMESTAMP(3), m STRING METADATA VIRTUAL, WATERMARK FOR ts AS ts)")
    for word in ("CREATE", "TABLE", "METADATA", "VIRTUAL", "WATERMARK", "FOR", "AS"):
        assert found[word] in Keyword, word
    assert found["TIMESTAMP"] in Keyword.Type and found["STRING"] in Keyword.Type
    assert found["ts"] is Name or found["ts"] in Name


def test_functions_strings_comments_and_annotations():
    found = tokens("SELECT TUMBLE(TABLE t, DESCRIPTOR(ts)), 'it''s' -- note\n-- @wait rows>=3\n/* a /* b */ c */")
    assert found["TUMBLE"] in Name.Function
    assert found["DESCRIPTOR"] in Name.Function or found["DESCRIPTOR"] in Keyword
    assert any(v in String for k, v in found.items() if "it" in k)
    assert found["-- note"] in Comment and found["-- @wait rows>=3"] is Comment.Special


def test_lexer_never_fails_and_keeps_the_text():
    for sql in ["'open", "`open", "/* open", "§ weird ¤", "SELECT ```x```"]:
        assert "".join(v for _, v in StreamshellLexer().get_tokens(sql)).rstrip("\n") == sql
    assert highlight_rich("SELECT 1").plain == "SELECT 1"
