"""Our sqlglot dialect for Flink-style SQL: tokenizer settings plus the parser and generator.

Why it exists: users type Flink SQL. sqlglot's Spark dialect would rewrite WITH into
TBLPROPERTIES and drop TIMESTAMP(3), so we subclass the base Dialect: single-quoted strings
('' escapes, no backslash escapes), backquoted identifiers, identifiers case-insensitive but
kept as spelt, arrays 1-based, Flink type names (STRING, BYTES, TIMESTAMP_LTZ), binary string
literals `X'00FF'`, and no "command" tokens (SHOW/EXPLAIN/EXECUTE are parsed by our grammar, not
swallowed as text). Tokenizing runs on scanner.FastTokenizerCore (same tokens as sqlglot's core,
faster).
"""

from __future__ import annotations

from sqlglot import tokens
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.tokens import TokenType

from shell.sql.grammar import StreamshellParser
from shell.sql.printer import FlinkGenerator
from shell.sql.scanner import FastTokenizerCore


class Streamshell(Dialect):
    """The Flink-style dialect (registered in sqlglot as "streamshell")."""

    NORMALIZATION_STRATEGY = NormalizationStrategy.CASE_INSENSITIVE
    INDEX_OFFSET = 1
    SUPPORTS_USER_DEFINED_TYPES = False

    class Tokenizer(tokens.Tokenizer):
        QUOTES = ["'"]
        STRING_ESCAPES = ["'"]
        IDENTIFIERS = ["`"]
        # Flink's binary string literal; the grammar checks its digits (scanner.StreamshellTokenizerCore).
        HEX_STRINGS = [("X'", "'"), ("x'", "'")]
        COMMANDS: set[TokenType] = set()
        KEYWORDS = {
            **tokens.Tokenizer.KEYWORDS,
            "BYTES": TokenType.BLOB,
            "EXPLAIN": TokenType.VAR,
            "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE,
        }

        def _init_core(self) -> tokens.TokenizerCore:
            core = super()._init_core()
            if not tokens.SQLGLOTC_INSTALLED:
                # Same settings, our scanner (it adds no attributes, so the class can be swapped).
                core.__class__ = FastTokenizerCore
            # HEX_STRINGS would also turn `0x1F` into a binary literal: Flink has no such
            # literal, so it stays the number 0 followed by the name x1F, as before.
            core.has_hex_strings = False
            return core

    Parser = StreamshellParser
    Generator = FlinkGenerator


DIALECT = Streamshell()
