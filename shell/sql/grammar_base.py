"""What every part of the grammar shares: naming a token, failing at it, and the small readers.

Why it exists: the statement grammar (grammar.py), the DDL grammar (grammar_ddl.py) and the shell
commands (grammar_shell.py) are one class chain, GrammarBase <- DdlGrammar <- ShellGrammar <-
StreamshellParser, so that the whole chain can be compiled (a compiled class has one base class).
The helpers all three use live here, at the root of the chain.
"""

from __future__ import annotations

import re
import typing as t

from sqlglot import exp, parser
from sqlglot.tokens import Token, TokenType

from shell.sql.grammar_errors import GrammarError, UnsupportedSyntax
from shell.sql.meta import NodeMeta

E = t.TypeVar("E", bound=exp.Expr)

QUERY_START = {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.L_PAREN}


def describe_token(token: Token | None) -> str:
    """How a token is named in a message: the keyword, 'x', or 'end of statement'."""
    if not token or token.token_type == TokenType.SENTINEL:  # sqlglot's marker past the last token
        return "end of statement"
    if token.token_type == TokenType.STRING:
        return f"string '{token.text}'"
    if token.token_type == TokenType.IDENTIFIER:
        return f"`{token.text}`"
    return f"'{token.text}'"


class GrammarBase(parser.Parser):
    """sqlglot's parser with our error reporting and the readers every statement uses."""

    # Tokens that can start a (table or column) name; built once, not per name.
    NAME_TOKENS = frozenset(parser.Parser.ID_VAR_TOKENS | {TokenType.IDENTIFIER})

    def expression(self, instance: E, token: Token | None = None, comments: list[str] | None = None) -> E:
        if token is not None and instance._meta is None:
            instance._meta = NodeMeta()  # the positions sqlglot puts here are then copied cheaply (meta.py)
        return super().expression(instance, token, comments)

    def raise_error(self, message: str, token: Token | None = None) -> None:  # type: ignore[override]
        token = token or self._curr or None
        after = self._prev.text.upper() if self._prev and self._prev.token_type in _NAME_AFTER else None
        raise GrammarError(_friendly(message, token, after), token)

    def _fail(self, message: str, token: Token | None = None, hint: str | None = None) -> t.NoReturn:
        raise GrammarError(message, token if token is not None else (self._curr or None), hint)

    def _unsupported(self, feature: str, token: Token | None = None, hint: str | None = None) -> t.NoReturn:
        raise UnsupportedSyntax(feature, token if token is not None else (self._curr or None), hint)

    def _unexpected(self, expected: str | None = None) -> t.NoReturn:
        found = describe_token(self._curr or None)
        message = f"expected {expected}, found {found}" if expected else f"unexpected {found}"
        self._fail(message)

    def _expect(self, token_type: TokenType, what: str) -> Token:
        if not self._match(token_type):
            self._unexpected(what)
        return self._prev

    def _expect_words(self, *words: str) -> None:
        if not self._match_text_seq(*words):
            self._unexpected(" ".join(words))

    def _parse_string_literal(self, what: str) -> exp.Literal:
        if not self._match(TokenType.STRING):
            self._unexpected(what)
        return self.expression(exp.Literal.string(self._prev.text), self._prev)

    def _parse_int_literal(self, what: str) -> exp.Literal:
        if not (self._match(TokenType.NUMBER) and self._prev.text.isdigit()):
            self._unexpected(what)
        return self.expression(t.cast(exp.Literal, exp.Literal.number(self._prev.text)), self._prev)

    def _parse_object_name(self, what: str = "a table name") -> exp.Table:
        if not self._curr or self._curr.token_type not in self.NAME_TOKENS:
            self._unexpected(what)
        table = self._parse_table_parts(schema=True)
        if not isinstance(table, exp.Table):
            self._unexpected(what)
        return table

    def _unexpected_with_hint(self, expected: str, hint: str | None) -> t.NoReturn:
        self._fail(f"expected {expected}, found {describe_token(self._curr or None)}", hint=hint)

    def _parse_query(self, what: str = "a query") -> exp.Expr:
        """A query inside another statement (INSERT, CREATE VIEW, EXPLAIN)."""
        if not self._curr or self._curr.token_type not in QUERY_START:
            self._unexpected(what)
        query = self._parse_derived_table_values() or self._parse_ddl_select()
        if not isinstance(query, (exp.Query, exp.Values)):
            self._unexpected(what)
        return query

    def _parse_column_name(self) -> exp.Identifier:
        name = self._parse_id_var(any_token=False)
        if not isinstance(name, exp.Identifier):
            self._unexpected("a column name")
        return name


# The keywords after which sqlglot's "Expected table name" is said as "expected a table name after FROM".
_NAME_AFTER = frozenset({TokenType.FROM, TokenType.JOIN, TokenType.INTO, TokenType.TABLE, TokenType.UPDATE})
# sqlglot puts a token's repr in a few messages ("Expected table name but got <Token token_type: ...>")
_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.\w+, text: .*?, comments: \[.*?\]>", re.S)
_BUT_GOT = re.compile(r"^Expected (.+?) but got .*$", re.S)


def _friendly(message: str, token: Token | None, after: str | None = None) -> str:
    """Reword sqlglot's internal messages for users; `after` is the keyword before the fault (FROM, JOIN)."""
    found = describe_token(token)
    if message.startswith("Expecting "):
        return f"expected '{message[len('Expecting '):].strip()}', found {found}"
    if message.startswith("Required keyword") or message.startswith("Expected TYPE"):
        return f"incomplete expression near {found}"
    if message.startswith("Invalid expression") or message.startswith("Unexpected token"):
        return f"unexpected {found}"
    wanted = _BUT_GOT.match(message)
    if wanted:
        what = wanted.group(1)
        return f"expected a {what}{f' after {after}' if after else ''}, found {found}"
    message = _TOKEN_REPR.sub(found, message)  # never a parser's internals in a user's message
    return f"{message[:1].lower()}{message[1:]} (near {found})"
