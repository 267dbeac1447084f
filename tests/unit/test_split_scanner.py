"""The fast tokenizer core gives exactly sqlglot's tokens, positions, comments and failures.

scanner.FastTokenizerCore scans common tokens itself and hands the rest to sqlglot's methods; these
properties compare it with the reference (`StreamshellTokenizerCore`: sqlglot's TokenizerCore with
our settings, X'..' left unchecked) on random and mutated SQL, and the reference with sqlglot's own
TokenizerCore. Splitting, completeness and parsing all start from these tokens.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as s
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import TokenizerCore, TokenType

from shell.sql.dialect import DIALECT, core_like
from shell.sql.scanner import FastTokenizerCore, StreamshellTokenizerCore, _plan
from tests.unit.test_fuzz_frontend import SEEDS, TOKENS, mutated

pytestmark = pytest.mark.unit

HEX = set("0123456789abcdefABCDEF")
STATE = ("_start", "_current", "_line", "_col", "_char", "_peek", "_end", "_comments", "_prev_token_line")


def core_of(cls: type) -> TokenizerCore:
    """A core of class `cls` with our dialect's settings."""
    return core_like(cls, DIALECT.tokenizer()._core)


def outcome(cls: type, text: str) -> tuple:
    """Everything a tokenizer pass leaves: tokens (every field), the error, the scanner state."""
    core = core_of(cls)
    try:
        tokens, error = core.tokenize(text), None
    except TokenError as exc:
        tokens, error = core.tokens, str(exc)
    fields = [(t.token_type, t.text, t.line, t.col, t.start, t.end, t.comments) for t in tokens]
    return fields, error, tuple(getattr(core, name) for name in STATE)


def assert_same_as_reference(text: str) -> None:
    assert outcome(FastTokenizerCore, text) == outcome(StreamshellTokenizerCore, text)


# Characters the fast path treats specially, and a few it hands over.
ALPHABET = s.sampled_from(
    list("abcxyzABNXE_019 .,;:()'`\"-+*/<>=!|{}%#@$?\\[]~&^\t\n\r\x0c\u00e9\u00df\u0131\u2028")
)
PIECES = s.sampled_from(
    [*TOKENS, "GROUP BY", "GROUP\n BY", "ORDER  BY", "PARTITION BY", "x'00FF'", "X'0g'", "N'n'", "''", "'it''s'",
     "`a``b`", "1.5", "10.", "1e5", "0x1F", "@p", "@1.5", "<=", "<>", "->", "::", "||", "{#c#}", "/*+ h */",
     "-- c\n", "/* a /* b */ c */", "'a\nb'", "'a\rb'", "`a\nb`", "SELECT", "select", "User-Defined"]
)  # fmt: skip
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(s.text(ALPHABET, max_size=60))
@example("")
@example("  ")
@example("a  \n\t b\r\nc\rd\r")
@example("SELECT 'open")
@example("SELECT `open")
@example("SELECT 1 /* open")
@example("x = 'a'\n-- trailing comment")
def test_fast_core_equals_reference_on_random_text(text):
    assert_same_as_reference(text)


@FUZZ
@given(s.text(max_size=40))
def test_fast_core_equals_reference_on_any_unicode_text(text):
    assert_same_as_reference(text)


@FUZZ
@given(s.lists(PIECES, max_size=25), s.lists(s.sampled_from(["", " ", "\n", "\t", "  "]), min_size=25, max_size=25))
def test_fast_core_equals_reference_on_token_soup(pieces, gaps):
    assert_same_as_reference("".join(p + g for p, g in zip(pieces, gaps)))


@FUZZ
@given(mutated())
def test_fast_core_equals_reference_on_mutated_statements(text):
    assert_same_as_reference(text)


@pytest.mark.parametrize("text", SEEDS)
def test_fast_core_equals_reference_on_seeds(text):
    assert_same_as_reference(text)


def test_fast_core_equals_reference_on_the_benchmark_script():
    from benchmarks.frontend import build_script

    assert_same_as_reference(build_script(100_000))


def python_reads_as_hex(text: str) -> bool:
    """sqlglot checks a binary literal with `int(text, 16)`, which also takes spaces around it and underscores."""
    try:
        int(text, 16)
    except ValueError:
        return False
    return True


@FUZZ
@given(s.lists(PIECES, max_size=25).map(" ".join))
@example("x' 1 's' x'")  # ' 1 ': not hex digits alone, but int() reads it, so sqlglot takes it
def test_reference_is_sqlglots_core_except_for_binary_literals(text):
    sqlglot_tokens, sqlglot_error, _ = outcome(TokenizerCore, text)
    ours, error, _ = outcome(StreamshellTokenizerCore, text)
    bad_binary = [t for t in ours if t[0] == TokenType.HEX_STRING and not all(c in HEX for c in t[1])]
    if all(python_reads_as_hex(t[1]) for t in bad_binary):
        assert (ours, error) == (sqlglot_tokens, sqlglot_error)
    else:
        # sqlglot's tokenizer fails on a binary literal int() cannot read; we leave it to the grammar.
        assert sqlglot_error is not None


def test_the_dialect_tokenizes_with_the_fast_core():
    assert type(DIALECT.tokenizer()._core) is FastTokenizerCore
    assert _plan(DIALECT.tokenizer()._core) is not None


def test_binary_literal_tokens():
    tokens = DIALECT.tokenize("X'00FF' x'0a' X'zz' 0x1F")
    assert [(t.token_type, t.text) for t in tokens] == [
        (TokenType.HEX_STRING, "00FF"),
        (TokenType.HEX_STRING, "0a"),
        (TokenType.HEX_STRING, "zz"),
        (TokenType.NUMBER, "0"),
        (TokenType.VAR, "x1F"),
    ]


def test_unusual_settings_fall_back_to_sqlglots_scan():
    core = core_of(FastTokenizerCore)
    core.var_single_tokens = {"$"}
    assert _plan(core) is None
    assert [t.text for t in core.tokenize("a$b c")] == ["a$b", "c"]
