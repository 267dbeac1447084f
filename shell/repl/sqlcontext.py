"""What the user is typing at the cursor: a table name, a column of an alias, an option key of a connector, ...

Why it exists: completion must work on unfinished SQL, which no parser accepts. This module scans the text around
the cursor with a forgiving tokenizer (an open string or comment is fine) and answers one question, `analyze`:
what kind of word belongs here, and what is already known (the connector named in this WITH clause, the columns
declared so far, the tables in FROM and their aliases). It knows nothing about the catalog or prompt-toolkit; the
completer turns the answer into candidates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shell.repl.keywords import following, keywords

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>--[^\r\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*(?:'|\Z))
  | (?P<quoted>`(?:[^`]|``)*(?:`|\Z))
  | (?P<number>\d+(?:\.\d*)?)
  | (?P<word>[A-Za-z_][\w$]*)
  | (?P<op><>|<=|>=|!=|\|\||[-+*/%<>=])
  | (?P<punct>.)
    """,
    re.S | re.X,
)


@dataclass(frozen=True)
class Tok:
    kind: str  # word | string | quoted | number | op | punct
    text: str
    start: int
    closed: bool = True

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else ""

    @property
    def value(self) -> str:
        """A string's content, an identifier's name (unquoted), or the text."""
        if self.kind == "string":
            inner = self.text[1:-1] if self.closed else self.text[1:]
            return inner.replace("''", "'")
        if self.kind == "quoted":
            inner = self.text[1:-1] if self.closed else self.text[1:]
            return inner.replace("``", "`")
        return self.text


def scan(text: str) -> list[Tok]:
    """Tokens of `text`, comments and blanks dropped; never fails."""
    tokens = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "punct"
        if kind in ("space", "comment"):
            continue
        value = match.group(0)
        closed = True
        if kind == "string":
            closed = len(value) >= 2 and value.endswith("'") and not _ends_in_escape(value)
        elif kind == "quoted":
            closed = len(value) >= 2 and value.endswith("`")
        tokens.append(Tok(kind, value, match.start(), closed))
    return tokens


def _ends_in_escape(string: str) -> bool:
    """`'it''` is still open: the quotes after the opening one pair up as escapes."""
    body = string[1:]
    return (len(body) - len(body.rstrip("'"))) % 2 == 0


# What kind of word the cursor is on.
STATEMENT, FOLLOW, KEYWORD, TABLE, VIEW, COLUMN, FUNCTION, OPTION_KEY, OPTION_VALUE, CONNECTOR, SETTING = (
    "statement", "follow", "keyword", "table", "view", "column", "function", "option-key", "option-value",
    "connector", "setting",
)
NON_NAMES = {"WATERMARK", "PRIMARY", "CONSTRAINT", "PERIOD", "LIKE"}


@dataclass
class Context:
    """The answer of `analyze`. `prefix` is the text the chosen completion replaces."""

    prefix: str = ""
    wants: set[str] = field(default_factory=set)
    follow: tuple[str, ...] = ()
    qualifier: str | None = None  # `o` in `o.amo`
    references: dict[str, str] = field(default_factory=dict)  # alias or name (lower case) -> table name
    in_string: bool = False
    quote_settings: bool = False  # after `SET `: complete `'key'` with its quotes
    connector: str | None = None  # the 'connector' of the WITH clause being typed
    option_key: str | None = None  # the key whose value is being typed
    used_keys: set[str] = field(default_factory=set)
    options: dict[str, str] = field(default_factory=dict)  # the complete 'key' = 'value' pairs typed so far
    declared_columns: list[str] = field(default_factory=list)  # columns of the CREATE TABLE being typed
    altered_table: str | None = None  # ALTER TABLE t SET (...): options of an existing table

    def referenced_tables(self) -> list[str]:
        return list(dict.fromkeys(self.references.values()))


def current_statement(tokens: list[Tok]) -> list[Tok]:
    """The tokens after the last ';'."""
    for i in range(len(tokens) - 1, -1, -1):
        if tokens[i].kind == "punct" and tokens[i].text == ";":
            return tokens[i + 1 :]
    return tokens


def analyze(before: str, after: str = "") -> Context:
    """What belongs at the cursor, given the buffer's text before and after it."""
    tokens = current_statement(scan(before))
    last = tokens[-1] if tokens else None
    if last is not None and last.kind == "string" and not last.closed:
        ctx = Context(prefix=last.value, in_string=True)
        _in_string(ctx, tokens[:-1])
        return ctx
    if last is not None and last.kind in ("string", "quoted", "number") and last.start + len(last.text) == len(before):
        return Context()  # right after a literal: nothing to complete
    ctx = Context()
    qualified = re.search(r"([A-Za-z_][\w$]*|`(?:[^`]|``)+`)\.([\w$]*)$", before)
    if qualified:
        ctx.qualifier = qualified.group(1).strip("`")
        ctx.prefix = qualified.group(2)
        head = before[: qualified.start()]
    else:
        ctx.prefix = re.search(r"[\w$]*$", before).group(0)  # type: ignore[union-attr]
        head = before[: len(before) - len(ctx.prefix)]
    if ctx.prefix and ctx.prefix[0].isdigit():
        return Context()
    context_tokens = current_statement(scan(head))
    rest = scan(after)
    end = next((i for i, t in enumerate(rest) if t.kind == "punct" and t.text == ";"), len(rest))
    ctx.references = table_references(context_tokens + rest[:end])
    if ctx.qualifier is not None:
        ctx.wants = {COLUMN}
        return ctx
    _outside_string(ctx, context_tokens)
    return ctx


def _outside_string(ctx: Context, tokens: list[Tok]) -> None:
    if not tokens:
        ctx.wants = {STATEMENT}
        return
    first = tokens[0].upper
    words = [t.upper for t in tokens]
    prev = words[-1]
    if len(tokens) == 1 and first in ("SET", "RESET"):
        ctx.wants, ctx.quote_settings = {SETTING}, True
        return
    if len(tokens) == 1 and following(first):
        ctx.follow = following(first)
        ctx.wants = {FOLLOW} | ({TABLE} if first in ("DESCRIBE", "DESC") else set())
        return
    if prev in ("FROM", "JOIN"):
        ctx.wants = {TABLE, VIEW}
        return
    if prev == "INTO" or (prev == "DESCRIBE" and len(tokens) == 1):
        ctx.wants = {TABLE}
        return
    creating = first == "CREATE"
    if prev in ("TABLE", "EXISTS") and not creating:
        ctx.wants = {VIEW} if "VIEW" in words[:3] else {TABLE}
        return
    if prev == "VIEW" and not creating:
        ctx.wants = {VIEW}
        return
    if prev in ("TABLE", "VIEW", "EXISTS", "TEMPORARY", "AS") and creating and len(tokens) <= 6:
        return  # a new name: nothing to suggest
    ctx.wants = {KEYWORD, FUNCTION, TABLE, VIEW, COLUMN}


def _in_string(ctx: Context, tokens: list[Tok]) -> None:
    words = [t.upper for t in tokens]
    if len(tokens) == 1 and words[0] in ("SET", "RESET"):
        ctx.wants = {SETTING}
        return
    open_paren = _innermost_open_paren(tokens)
    if open_paren is None or open_paren == 0:
        return
    opener = tokens[open_paren - 1].upper
    if opener not in ("WITH", "SET"):
        return
    inside = tokens[open_paren + 1 :]
    pairs = _option_pairs(inside)
    ctx.used_keys = set(pairs)
    ctx.options = pairs
    ctx.connector = pairs.get("connector")
    if "CREATE" in words[:3]:
        ctx.declared_columns = declared_columns(tokens)
    elif words[:2] == ["ALTER", "TABLE"] and len(tokens) > 2:
        ctx.altered_table = tokens[2].value
    prev = inside[-1] if inside else None
    if prev is None or (prev.kind == "punct" and prev.text == ","):
        ctx.wants = {OPTION_KEY}
    elif prev.kind == "op" and prev.text == "=" and len(inside) >= 2 and inside[-2].kind == "string":
        ctx.option_key = inside[-2].value
        ctx.wants = {CONNECTOR} if ctx.option_key == "connector" else {OPTION_VALUE}


def _innermost_open_paren(tokens: list[Tok]) -> int | None:
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.kind == "punct" and tok.text == "(":
            stack.append(i)
        elif tok.kind == "punct" and tok.text == ")" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _option_pairs(tokens: list[Tok]) -> dict[str, str]:
    pairs = {}
    for i in range(len(tokens) - 2):
        a, eq, b = tokens[i : i + 3]
        if a.kind == "string" and eq.kind == "op" and eq.text == "=" and b.kind == "string" and b.closed:
            pairs[a.value] = b.value
    return pairs


def declared_columns(tokens: list[Tok]) -> list[str]:
    """Column names in the column list of a CREATE TABLE (the first parenthesis after the name)."""
    start = next((i for i, t in enumerate(tokens) if t.kind == "punct" and t.text == "("), None)
    if start is None:
        return []
    columns, depth, expect_name = [], 0, True
    for tok in tokens[start:]:
        if tok.kind == "punct" and tok.text == "(":
            depth += 1
            expect_name = depth == 1
            continue
        if tok.kind == "punct" and tok.text == ")":
            depth -= 1
            if depth == 0:
                break
            continue
        if depth == 1 and tok.kind == "punct" and tok.text == ",":
            expect_name = True
            continue
        if expect_name and depth == 1:
            if tok.kind in ("word", "quoted") and tok.upper not in NON_NAMES:
                columns.append(tok.value)
            expect_name = False
    return columns


def table_references(tokens: list[Tok]) -> dict[str, str]:
    """`FROM orders o JOIN rates AS r` -> {'orders': 'orders', 'o': 'orders', 'rates': 'rates', 'r': 'rates'}."""
    refs: dict[str, str] = {}
    kw = keywords()
    for i, tok in enumerate(tokens[:-1]):
        if tok.upper not in ("FROM", "JOIN", "TABLE", "INTO"):
            continue
        name_tok = tokens[i + 1]
        if name_tok.kind not in ("word", "quoted") or name_tok.upper in ("TABLE", "LATERAL", "UNNEST"):
            continue
        name = name_tok.value
        refs[name.lower()] = name
        j = i + 2
        if j < len(tokens) and tokens[j].upper == "AS":
            j += 1
        if j < len(tokens) and tokens[j].kind in ("word", "quoted") and tokens[j].upper not in kw:
            refs[tokens[j].value.lower()] = name
    return refs
