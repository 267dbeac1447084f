"""'did you mean ...?' suggestions for misspelt keywords, tables and columns.

Why it exists: a typo should be answered with the word the user meant. The parser uses it for
keywords; `suggest` itself (shell/suggestions.py) serves every layer, and is here for the parser's modules.
"""

from __future__ import annotations

from shell.suggestions import suggest

# Words that may start a statement, and the words that may follow some of them.
STATEMENT_KEYWORDS: tuple[str, ...] = (
    "SELECT", "INSERT", "CREATE", "DROP", "ALTER", "SET", "RESET", "SHOW", "DESCRIBE", "DESC",
    "EXPLAIN", "HELP", "QUIT", "EXIT", "CLEAR", "STOP", "RESUME", "EXECUTE", "WITH", "VALUES",
    "BEGIN", "PRINT", "DELETE",
)
FOLLOW_KEYWORDS: dict[str, tuple[str, ...]] = {
    "CREATE": ("TABLE", "VIEW", "FUNCTION", "TEMPORARY", "CATALOG", "DATABASE"),
    "DROP": ("TABLE", "VIEW", "FUNCTION", "TEMPORARY", "CATALOG", "DATABASE"),
    "ALTER": ("TABLE", "CATALOG"),
    "SHOW": ("TABLES", "VIEWS", "FUNCTIONS", "JOBS", "CATALOGS", "DATABASES", "COLUMNS", "CURRENT", "CREATE", "ERRORS"),
    "USE": ("CATALOG",),
    "STOP": ("JOB",),
    "RESUME": ("JOB",),
    "INSERT": ("INTO", "OVERWRITE"),
    "DELETE": ("FROM",),
    "DESCRIBE": ("TOPIC", "CATALOG", "JOB"),
}


def keyword_hint(words: list[str]) -> str | None:
    """Hint for the first misspelt word among the first two words of a statement."""
    if not words:
        return None
    first = words[0].upper()
    if first not in STATEMENT_KEYWORDS:
        return suggest(first, STATEMENT_KEYWORDS)
    follow = FOLLOW_KEYWORDS.get(first)
    if follow and len(words) > 1 and words[1].upper() not in follow:
        return suggest(words[1].upper(), follow)
    return None
