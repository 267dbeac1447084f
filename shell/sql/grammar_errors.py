"""How the grammar reports a fault: exceptions that carry the offending token.

Why it exists: sqlglot's ParseError only knows a line and column inside the text it was given;
we need the token's character offsets (to map onto the whole script), our error class (syntax
vs unsupported feature) and an optional hint. `GrammarError` subclasses ParseError so sqlglot's
backtracking (`_try_parse`) still works; `UnsupportedSyntax` deliberately does not, so an
unsupported feature is never swallowed by backtracking and re-reported as a syntax error.
"""

from __future__ import annotations

from sqlglot.errors import ParseError
from sqlglot.tokens import Token


class GrammarError(ParseError):
    """A syntax error at `token` (None: at the end of the statement)."""

    def __init__(self, message: str, token: Token | None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.token = token
        self.hint = hint


class UnsupportedSyntax(Exception):
    """Valid Flink SQL we do not support; `feature` names it for the one-line message."""

    def __init__(self, feature: str, token: Token | None, hint: str | None = None) -> None:
        super().__init__(feature)
        self.feature = feature
        self.token = token
        self.hint = hint
