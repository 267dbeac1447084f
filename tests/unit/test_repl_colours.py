"""The prompt's colours reach the text: every kind of token gets the colour its style names.

prompt_toolkit's PygmentsLexer gives each piece of text a class built from its token's full path
(`class:pygments.literal.string.single`); a style written for a shorter spelling (`pygments.string`) silently
matches nothing, which is how string and number literals went uncoloured.
"""

from __future__ import annotations

import pytest
from prompt_toolkit.document import Document
from prompt_toolkit.lexers import PygmentsLexer

from shell.repl.app import STYLE
from shell.repl.lexer import PYGMENTS_STYLE, StreamshellLexer

SQL = "SELECT UPPER(`name`), 'it''s', 42, 1.5e3 FROM t WHERE ts > CAST(x AS TIMESTAMP) -- note /* c */ -- @wait x"


def fragments(line: str) -> list[tuple[str, str]]:
    """(style class, text) pieces of `line` as the prompt lexes it."""
    return PygmentsLexer(StreamshellLexer).lex_document(Document(line))(0)


def colours(line: str) -> list[str | None]:
    """The prompt's colour of each character of `line` (None: the terminal's default)."""
    out: list[str | None] = []
    for style, text in fragments(line):
        out += [STYLE.get_attrs_for_style_str(style).color] * len(text)
    return out


@pytest.mark.parametrize(
    "piece, colour",
    [
        ("SELECT", "ansiblue"),
        ("UPPER", "ansimagenta"),
        ("`name`", "ansiyellow"),
        ("'it''s'", "ansigreen"),  # quotes, text and the doubled quote inside
        ("42", "ansiyellow"),
        ("1.5e3", "ansiyellow"),
        ("TIMESTAMP", "ansicyan"),
        ("-- note", "ansibrightblack"),
    ],
)
def test_every_token_kind_gets_its_colour(piece, colour):
    start = SQL.index(piece)
    assert set(colours(SQL)[start : start + len(piece)]) == {colour}


def test_every_style_class_is_one_a_token_has():
    """Each class the style names is (a prefix of) the class of a token the lexer emits: no dead spelling."""
    emitted = {style.removeprefix("class:") for style, _ in fragments(SQL + " /* c */ a <> b")}
    emitted |= {style.removeprefix("class:") for style, _ in fragments("/* c */ a <> b -- @wait rows>=1")}
    for name in PYGMENTS_STYLE:
        if name == "pygments.error":  # the lexer never fails, so it never emits Error
            continue
        assert any(e == name or e.startswith(name + ".") for e in emitted), name
