"""Our sqlglot dialect for Flink-style SQL: tokenizer settings plus the parser and generator.

Why it exists: users type Flink SQL. sqlglot's Spark dialect would rewrite WITH into
TBLPROPERTIES and drop TIMESTAMP(3), so we subclass the base Dialect: single-quoted strings
('' escapes, no backslash escapes), backquoted identifiers, identifiers case-insensitive but
kept as spelt, arrays 1-based, Flink type names (STRING, BYTES, TIMESTAMP_LTZ), and no
"command" tokens (SHOW/EXPLAIN/EXECUTE are parsed by our grammar, not swallowed as text).
"""

from __future__ import annotations

from sqlglot import tokens
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.tokens import TokenType

from shell.sql.grammar import StreamshellParser
from shell.sql.printer import FlinkGenerator


class Streamshell(Dialect):
    """The Flink-style dialect (registered in sqlglot as "streamshell")."""

    NORMALIZATION_STRATEGY = NormalizationStrategy.CASE_INSENSITIVE
    INDEX_OFFSET = 1
    SUPPORTS_USER_DEFINED_TYPES = False

    class Tokenizer(tokens.Tokenizer):
        QUOTES = ["'"]
        STRING_ESCAPES = ["'"]
        IDENTIFIERS = ["`"]
        COMMANDS: set[TokenType] = set()
        KEYWORDS = {
            **tokens.Tokenizer.KEYWORDS,
            "BYTES": TokenType.BLOB,
            "EXPLAIN": TokenType.VAR,
            "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE,
        }

    Parser = StreamshellParser
    Generator = FlinkGenerator


DIALECT = Streamshell()
