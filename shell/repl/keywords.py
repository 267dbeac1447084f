"""The words of our Flink-style dialect, for highlighting and completion.

Why it exists: the highlighter and the completer must agree on what a keyword is, and both need Flink's own words
(WATERMARK, METADATA, TUMBLE, ...) that a generic SQL lexer does not know. The statement words come from the
parser's hint tables, so a statement the grammar learns is completed without touching this file.
"""

from __future__ import annotations

from functools import lru_cache

from shell.sql.hints import FOLLOW_KEYWORDS, STATEMENT_KEYWORDS

CLAUSE_KEYWORDS = (
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET", "UNION", "ALL", "DISTINCT",
    "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "ON", "USING", "AS", "AND", "OR", "NOT", "IN",
    "IS", "NULL", "LIKE", "BETWEEN", "EXISTS", "CASE", "WHEN", "THEN", "ELSE", "END", "ASC", "DESC", "OVER",
    "PARTITION", "ROWS", "RANGE", "PRECEDING", "FOLLOWING", "UNBOUNDED", "CURRENT", "ROW", "INTERVAL", "TRUE",
    "FALSE", "WITH", "VALUES", "INTO", "TABLE", "VIEW", "IF", "LATERAL", "UNNEST", "FILTER", "WINDOW",
    "INTERSECT", "EXCEPT", "MINUS", "ESCAPE", "SIMILAR", "TO", "FOR", "SYSTEM_TIME", "OF", "OVERWRITE",
)

FLINK_KEYWORDS = (
    "WATERMARK", "METADATA", "VIRTUAL", "PRIMARY", "KEY", "ENFORCED", "NOT", "TEMPORARY", "COMMENT",
    "PARTITIONED", "LIKE", "INCLUDING", "EXCLUDING", "OVERWRITING", "OPTIONS", "CONSTRAINTS", "GENERATED",
    "WATERMARKS", "DESCRIPTOR", "TUMBLE", "HOP", "CUMULATE", "SESSION", "MATCH_RECOGNIZE", "MEASURES", "PATTERN",
    "DEFINE", "AFTER", "MATCH", "SKIP", "PAST", "LAST", "FIRST", "STATEMENT", "EXECUTE", "BEGIN", "JOB", "JOBS",
    "SAVEPOINT", "DRAIN", "TABLES", "VIEWS", "FUNCTIONS", "FUNCTION", "LANGUAGE", "JAVA", "SCALA", "PYTHON",
    "EXTENDED", "PLAN", "CHANGELOG_MODE", "ESTIMATED_COST", "JSON_EXECUTION_PLAN", "TOPIC", "ERRORS", "SAMPLE",
    "BEGINNING", "RETURNING", "ERROR", "EMPTY", "EXPLAIN", "STOP", "RESUME", "PRINT", "RESET", "SHOW", "DESCRIBE",
    "CREATE", "DROP", "ALTER", "INSERT", "SET", "HELP", "QUIT", "EXIT", "CLEAR", "MINUTE", "SECOND", "HOUR",
    "DAY", "MONTH", "YEAR", "MILLISECOND", "WEEK", "QUARTER",
)

TYPE_NAMES = (
    "STRING", "VARCHAR", "CHAR", "BOOLEAN", "BYTES", "BINARY", "VARBINARY", "TINYINT", "SMALLINT", "INT",
    "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "DEC", "NUMERIC", "DATE", "TIME", "TIMESTAMP",
    "TIMESTAMP_LTZ", "ARRAY", "MAP", "MULTISET", "ROW", "RAW", "PRECISION", "LOCAL", "ZONE", "WITHOUT",
)


@lru_cache(maxsize=1)
def function_names() -> frozenset[str]:
    """Flink functions the translator knows (what SHOW FUNCTIONS lists)."""
    from shell.sql.translate import FUNCTION_NAMES

    return frozenset(FUNCTION_NAMES) | {"PROCTIME", "CURRENT_WATERMARK", "NOW", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP"}


@lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """Every word highlighted as a keyword."""
    follow = {w for words in FOLLOW_KEYWORDS.values() for w in words}
    return frozenset({*STATEMENT_KEYWORDS, *follow, *CLAUSE_KEYWORDS, *FLINK_KEYWORDS})


@lru_cache(maxsize=1)
def type_names() -> frozenset[str]:
    return frozenset(TYPE_NAMES)


def statement_starters() -> tuple[str, ...]:
    """Words that may start a statement, for completion at the start of one."""
    return tuple(sorted(set(STATEMENT_KEYWORDS)))


def following(word: str) -> tuple[str, ...]:
    """Words that may follow a statement's first word (SHOW -> TABLES, VIEWS, ...), or ()."""
    return FOLLOW_KEYWORDS.get(word.upper(), ())
