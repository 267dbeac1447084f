"""Our dialect's tokenizer core: sqlglot's TokenizerCore with binary literals and a fast path.

Why it exists: splitting and parsing a script starts with one tokenizer pass over all of it, and
sqlglot's pure-Python tokenizer walks the text one character at a time (about 0.8 s per MB of
SQL). sqlglot's compiled build (sqlglotc) would tokenize faster but refuses our Parser, Generator
and node subclasses, so it cannot be installed next to this dialect.

* `StreamshellTokenizerCore` is sqlglot's TokenizerCore with one change: `X'..'` (Flink's binary
  string literal) becomes a HEX_STRING token without sqlglot's digit check, so a bad literal is
  reported by the grammar with its position instead of failing the whole tokenizer pass (which
  would make the REPL wait for more input). It is the reference the fast path is tested against.
* `FastTokenizerCore` scans the common tokens (blanks, line breaks, words, plain numbers, plain
  strings and quoted identifiers, one-character operators) itself with regular expressions and
  local variables, and hands every other token (comments, multi-word keywords such as GROUP BY,
  operators such as `<=`, escaped quotes, anything unusual) to the reference methods after
  syncing its state. The tokens, positions, comments and failures are the reference's exactly:
  tests/unit/test_split.py checks that with hypothesis over random and mutated SQL. The fast
  path is only taken when the dialect's tokenizer settings are the ones it was written for
  (`_plan`); otherwise the reference `_scan` runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot.tokenizer_core import Token, TokenizerCore, TokenType

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_BLANKS = re.compile(r"[ \t]+")
_WORD_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_WORD_CHARS = _WORD_START | frozenset("0123456789")
_DIGITS = frozenset("0123456789")
_LINE_BLANKS = frozenset(" \t\n\r")


class StreamshellTokenizerCore(TokenizerCore):
    """sqlglot's core; `X'..'` is scanned without validating its digits (the grammar does)."""

    __slots__ = ()

    def _scan_string(self, start: str) -> bool:
        format_string = self.format_strings.get(start)
        if format_string is None or format_string[1] != TokenType.HEX_STRING:
            return super()._scan_string(start)
        # What TokenizerCore._scan_string does for a hex string, minus `int(text, 16)`.
        self._advance(len(start))
        text = self._extract_string(format_string[0], escapes=self.string_escapes)
        self._add(TokenType.HEX_STRING, text)
        return True


@dataclass(frozen=True)
class _Plan:
    """What the fast path needs to know about the tokenizer settings (`_plan` gives None for settings
    it was not written for)."""

    word_prefixes: dict[str, frozenset[str]]  # upper-case word that starts a trie key -> chars that may follow
    quote: str | None  # the string quote, when strings can take the fast path
    identifier: str | None  # the identifier quote, likewise


_PLANS: dict[tuple, tuple[tuple, _Plan | None]] = {}


def _plan(core: TokenizerCore) -> _Plan | None:
    """The fast path's view of `core`'s settings, cached by the identity of the settings objects
    (a dialect's tokenizers share them)."""
    settings = (
        core.keyword_trie, core.single_tokens, core.var_single_tokens, core.commands, core.quotes,
        core.identifiers, core.string_escapes, core.identifier_escapes, core.unescaped_sequences,
        core.numbers_can_have_decimals,
    )
    key = tuple(map(id, settings))
    cached = _PLANS.get(key)
    if cached is not None and all(a is b for a, b in zip(cached[0], settings)):
        return cached[1]
    plan = _make_plan(core)
    _PLANS[key] = (settings, plan)
    return plan


def _trie_keys(node: dict, prefix: str = "") -> list[str]:
    keys = []
    for char, child in node.items():
        if char == 0:
            keys.append(prefix)
        else:
            keys.extend(_trie_keys(child, prefix + char))
    return keys


def _make_plan(core: TokenizerCore) -> _Plan | None:
    single = core.single_tokens
    keys = _trie_keys(core.keyword_trie)
    # The fast path reads a run of word characters as one VAR/keyword token. That is sqlglot's
    # result only if no word character is an operator, no trie key is made of word characters
    # alone (so a word never ends a trie match) and no extra character joins a VAR.
    if (
        any(char in single for char in _WORD_CHARS)
        or core.var_single_tokens
        or core.commands
        or not core.numbers_can_have_decimals
    ):
        return None
    if any(all(char in _WORD_CHARS for char in key) for key in keys):
        return None
    prefixes: dict[str, set[str]] = {}
    for key in keys:
        run = 0
        while run < len(key) and key[run] in _WORD_CHARS:
            run += 1
        for size in range(1, run + 1):
            follow = prefixes.setdefault(key[:size], set())
            if size < len(key):
                follow.add(key[size])
    escapes_plain = "\\" not in core.string_escapes and not core.unescaped_sequences
    quote = None
    if (
        list(core.quotes.items()) == [("'", "'")]
        and escapes_plain
        and core.keyword_trie.get("'") == {0: True}
        and "'" in core.string_escapes
    ):
        quote = "'"
    identifier = None
    if len(core.identifiers) == 1:
        start, end = next(iter(core.identifiers.items()))
        if start == end and len(start) == 1 and "\\" not in core.identifier_escapes and escapes_plain:
            identifier = start
    return _Plan({word: frozenset(follow) for word, follow in prefixes.items()}, quote, identifier)


class FastTokenizerCore(StreamshellTokenizerCore):
    """StreamshellTokenizerCore with a fast scanning loop for the common tokens (see the module docstring)."""

    __slots__ = ()

    def _scan(self, check_semicolon: bool = False) -> None:
        plan = None if check_semicolon else _plan(self)
        if plan is None:
            super()._scan(check_semicolon)
            return
        self._fast_scan(plan)

    def _fast_scan(self, plan: _Plan) -> None:  # noqa: C901 - one loop, kept flat for speed
        sql, size = self.sql, self.size
        if not size:
            return
        trie, single, keywords, identifiers = self.keyword_trie, self.single_tokens, self.keywords, self.identifiers
        prefixes, quote, ident = plan.word_prefixes, plan.quote, plan.identifier
        word_match, number_match, blanks_match = _WORD.match, _NUMBER.match, _BLANKS.match
        tokens = self.tokens
        var_type, parameter, semicolon = TokenType.VAR, TokenType.PARAMETER, TokenType.SEMICOLON
        number_type, string_type, identifier_type = TokenType.NUMBER, TokenType.STRING, TokenType.IDENTIFIER
        # The scanner's state as sqlglot keeps it: `char` is the last character consumed, `col`
        # and `line` are its position; consuming a character after a line break starts a line.
        cur, line, col, char = self._current, self._line, self._col, self._char
        start, comments, prev_line = self._start, self._comments, self._prev_token_line
        last_type = tokens[-1].token_type if tokens else None

        while cur < size:
            c = sql[cur]
            new_line = char == "\n" or (char == "\r" and c != "\n")
            if c == " " or c == "\t":
                end = blanks_match(sql, cur).end()  # type: ignore[union-attr]
                if new_line:
                    line += 1
                    col = end - cur
                else:
                    col += end - cur
                cur, char, start = end, sql[end - 1], end
                continue
            if c.isspace():
                if new_line:
                    line += 1
                    col = 1
                elif char != "\r":  # sqlglot leaves the column as it is on the "\n" of "\r\n"
                    col += 1
                start, cur, char = cur, cur + 1, c
                continue
            # Where a token starting here is counted from (sqlglot's _advance of its first character).
            token_line, token_col = (line + 1, 0) if new_line else (line, col)
            start = cur
            token_type = None
            if c in _WORD_START:
                end = word_match(sql, cur).end()  # type: ignore[union-attr]
                after = sql[end] if end < size else ""
                if not after or after in _LINE_BLANKS or after in single:
                    text = sql[cur:end]
                    word = text.upper()
                    follow = prefixes.get(word)
                    if follow is None or not after or (" " if after in _LINE_BLANKS else after) not in follow:
                        if last_type == parameter:
                            token_type = var_type
                        else:
                            token_type = keywords.get(word, var_type)
            elif c in _DIGITS:
                end = number_match(sql, cur).end()  # type: ignore[union-attr]
                after = sql[end] if end < size else ""
                if (not after or after in _LINE_BLANKS or (after in single and after != ".")) and (
                    last_type != parameter or "." not in sql[cur:end]
                ):
                    text = sql[cur:end]
                    token_type = number_type
            elif c == quote or c == ident:
                close = sql.find(c, cur + 1)
                if close != -1 and (close + 1 >= size or sql[close + 1] != c):
                    text = sql[cur + 1 : close]
                    token_type = string_type if c == quote else identifier_type
                    # sqlglot counts only "\n" inside a quoted text (TokenizerCore._extract_string).
                    # The token ends on the closing quote; `token_col + end - cur` below is its column.
                    breaks = text.count("\n")
                    if breaks:
                        token_line += breaks
                        token_col = close - sql.rfind("\n", cur + 1, close) - (close - cur + 1)
                    end = close + 1
            elif c in single and c not in identifiers:
                node = trie.get(c)
                after = sql[cur + 1] if cur + 1 < size else ""
                if node is None or (
                    0 not in node and (not after or (" " if after.isspace() else after.upper()) not in node)
                ):
                    text = c
                    token_type = single[c]
                    end = cur + 1

            if token_type is None:
                # Anything else: sqlglot's own methods scan this token (and may raise TokenError).
                self._current, self._line, self._col, self._char = cur, line, col, char
                self._end, self._peek = False, c
                self._start, self._comments, self._prev_token_line = cur, comments, prev_line
                self._advance()
                if self._char in _DIGITS:
                    self._scan_number()
                elif self._char in identifiers:
                    self._scan_identifier(identifiers[self._char])
                else:
                    self._scan_keywords()
                cur, line, col, char = self._current, self._line, self._col, self._char
                start, comments, prev_line = self._start, self._comments, self._prev_token_line
                tokens = self.tokens
                last_type = tokens[-1].token_type if tokens else None
                continue

            line, col = token_line, token_col + end - cur
            if comments and token_type == semicolon and tokens:
                tokens[-1].comments.extend(comments)
                comments = []
            tokens.append(Token(token_type, text, line, col, cur, end - 1, comments))
            comments = []
            prev_line, last_type = line, token_type
            if end < size and sql[end] == " ":
                # The blanks after a token, at once (what the blanks branch above does).
                blanks_end = blanks_match(sql, end).end()  # type: ignore[union-attr]
                col += blanks_end - end
                cur, char, start = blanks_end, sql[blanks_end - 1], blanks_end
            else:
                cur, char = end, sql[end - 1]

        self._current, self._line, self._col, self._char = cur, line, col, char
        self._end = cur >= size
        self._peek = "" if self._end else sql[cur]
        self._start, self._comments, self._prev_token_line = start, comments, prev_line
        if self.tokens and self._comments:
            self.tokens[-1].comments.extend(self._comments)
