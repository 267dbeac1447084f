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

import inspect

from sqlglot import tokens
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.tokenizer_core import TokenizerCore
from sqlglot.tokens import TokenType

from shell.sql.grammar import StreamshellParser
from shell.sql.printer import FlinkGenerator
from shell.sql.scanner import FastTokenizerCore


# TokenizerCore's public attributes that hold one pass's state; the others are its settings (its __init__
# arguments). Its private attributes are all state.
_CORE_STATE = frozenset(("sql", "size", "tokens"))


def core_like(cls: type[TokenizerCore], core: TokenizerCore) -> TokenizerCore:
    """A new core of class `cls` with `core`'s settings (a compiled core's class cannot be swapped)."""
    # Its attributes are slots (pure Python) or a compiled class's getset descriptors: both data descriptors.
    attributes = [name for name, value in vars(TokenizerCore).items() if inspect.isdatadescriptor(value)]
    settings = [name for name in attributes if not name.startswith("_") and name not in _CORE_STATE]
    return cls(**{name: getattr(core, name) for name in settings})


class Streamshell(Dialect):
    """The Flink-style dialect (registered in sqlglot as "streamshell")."""

    NORMALIZATION_STRATEGY = NormalizationStrategy.CASE_INSENSITIVE
    INDEX_OFFSET = 0  # indexes kept as written: the translator maps Flink's a[i] (from 1) knowing the types
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
            # Same settings, our scanner.
            core = core_like(FastTokenizerCore, super()._init_core())
            # HEX_STRINGS would also turn `0x1F` into a binary literal: Flink has no such
            # literal, so it stays the number 0 followed by the name x1F, as before.
            core.has_hex_strings = False
            return core

    Parser = StreamshellParser
    Generator = FlinkGenerator


DIALECT = Streamshell()
