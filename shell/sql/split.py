"""Splits a script or REPL buffer into statements on top-level semicolons.

Why it exists: the first prototype split on spaces. Here one pass of our dialect's sqlglot
tokenizer finds the semicolons, so a ';' inside a string, a `quoted identifier`, a `--` or
`/* nested */` comment never splits. A statement set (`EXECUTE STATEMENT SET BEGIN ...; END` or
`BEGIN STATEMENT SET; ...; END`) is one statement: its inner semicolons do not split, and CASE ...
END inside it is told apart from the block's END.

Rules: statement text runs from its first token to its last token (leading/trailing blanks and
comments and the terminating ';' are not part of it); empty statements are dropped; the last
statement is `complete=False` when no ';' ends it, when a string/identifier/comment is still
open, or when a BEGIN block has no END yet. The tokens of each statement are kept (as `Chunk`)
so parse_script never tokenizes twice.

Speed: the tokenizer is scanner.FastTokenizerCore, and Python's cyclic garbage collector is paused
while a text is split (`gc_paused`): a pass allocates a few objects per character (tokens and
their comment lists), so the collector would otherwise run thousands of times over a growing
heap; that was a third of the time of splitting a 1 MB script.
"""

from __future__ import annotations

import bisect
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from shell.sql.dialect import DIALECT
from shell.sql.positions import LineIndex

# Shell commands that the REPL runs on Enter without a ';' (Flink's SQL client does the same).
NO_SEMICOLON_COMMANDS = frozenset({"QUIT", "EXIT", "HELP", "CLEAR"})


@dataclass(frozen=True)
class SourceStatement:
    """One statement of a source text: `text == source[start:end]`; line/col (1-based) of start."""

    text: str
    start: int
    end: int
    line: int
    col: int
    complete: bool


@dataclass(frozen=True)
class Unterminated:
    """Something still open at the end of the text: a string, identifier or block comment."""

    what: str
    offset: int


@dataclass
class Chunk:
    """A statement with its tokens (absolute offsets), or None when the tokenizer failed in it."""

    statement: SourceStatement
    tokens: list[Token] | None
    problem: Unterminated | None = None


@dataclass
class Tokenized:
    """Result of one tokenizer pass: the tokens before any failure, and what was left open."""

    tokens: list[Token]
    problem: Unterminated | None = None


@contextmanager
def gc_paused(keep: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector for a burst of allocations (re-entrant; a no-op when it
    is already off). Nothing is lost: cycles made meanwhile are collected after it is back on.

    `keep`: what the burst made is kept (a large parsed script). The collector's young collections
    would then traverse all of it, once for each of its younger generations (a 1 MB script's
    statements took 1.5-2 s of such traversals, finding nothing to free), so it is moved to the
    oldest generation at once instead, where only full collections look at it: gc.freeze() and
    gc.unfreeze(), two splices of the collector's lists (not done when something else froze
    objects: theirs would be unfrozen too)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if keep and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def tokenize(source: str) -> Tokenized:
    """Tokenize `source` with our dialect; an open string/identifier/comment is reported, not raised."""
    tokenizer = DIALECT.tokenizer()
    try:
        tokens = tokenizer.tokenize(source)
    except TokenError:
        core = tokenizer._core
        start = core._start
        # The failed token starts at the first opener at or after the scanner's start.
        openers = {"/*": "comment", "`": "quoted identifier", "'": "string literal"}
        found = [(source.find(o, start), w) for o, w in openers.items() if source.find(o, start) != -1]
        start, what = min(found) if found else (start, "token")
        return Tokenized(list(core.tokens), Unterminated(what, start))
    tail_start = tokens[-1].end + 1 if tokens else 0
    comment = _open_block_comment(source, tail_start)
    return Tokenized(tokens, Unterminated("comment", comment) if comment is not None else None)


def _open_block_comment(source: str, start: int) -> int | None:
    """Offset of a `/*` left open in source[start:] (only blanks and comments follow the last token)."""
    i, depth, opened_at, size = start, 0, None, len(source)
    while i < size:
        two = source[i : i + 2]
        if depth == 0 and two == "--":
            newline = min((p for p in (source.find("\n", i), source.find("\r", i)) if p != -1), default=size)
            i = newline
        elif two == "/*":
            if depth == 0:
                opened_at = i
            depth += 1
            i += 2
        elif two == "*/" and depth:
            depth -= 1
            i += 2
        else:
            i += 1
    return opened_at if depth else None


def _block_opener(tokens: list[Token], first: int) -> bool:
    """True when the statement starting at tokens[first] opens a BEGIN ... END statement set
    (`EXECUTE STATEMENT SET BEGIN`, `BEGIN STATEMENT SET`, either after EXPLAIN ...)."""
    words = [tok.text.upper() for tok in tokens[first : first + 12] if tok.token_type != TokenType.STRING]
    start = 0
    if words[:1] == ["EXPLAIN"]:
        start = next((i for i, w in enumerate(words) if w in ("EXECUTE", "BEGIN")), len(words))
    words = words[start:]
    return words[:4] == ["EXECUTE", "STATEMENT", "SET", "BEGIN"] or words[:3] == ["BEGIN", "STATEMENT", "SET"]


def split_chunks(source: str) -> list[Chunk]:
    """Split `source` into statements with their tokens (see the module docstring)."""
    with gc_paused():
        return _split_chunks(source)


def _split_chunks(source: str) -> list[Chunk]:
    tokenized = tokenize(source)
    tokens = tokenized.tokens
    index = LineIndex(source)
    chunks: list[Chunk] = []
    semicolon = TokenType.SEMICOLON
    # Statements end at semicolons, so the walk goes from one semicolon to the next instead of
    # looking at every token (only a BEGIN ... END block is read token by token).
    semicolons = [i for i, token in enumerate(tokens) if token.token_type is semicolon]
    begin: int | None = None  # index of the current statement's first token
    i, count = 0, len(tokens)
    while i < count:
        if tokens[i].token_type is semicolon:
            i += 1
            continue
        begin = i
        if _block_opener(tokens, i):
            block_end = _block_end(tokens, i)
            if block_end is None:
                break  # the block is still open: the statement runs to the end
            i = block_end + 1
        k = bisect.bisect_left(semicolons, i)
        if k == len(semicolons):
            break  # no ';' ends the statement
        end_index = semicolons[k] - 1
        first, last = tokens[begin], tokens[end_index]
        start, end = first.start, last.end + 1
        line, col = index.line_col(start)
        statement = SourceStatement(source[start:end], start, end, line, col, True)
        chunks.append(Chunk(statement, tokens[begin : end_index + 1]))
        begin, i = None, end_index + 2
    problem = tokenized.problem
    if begin is not None or (problem is not None and problem.what != "comment"):
        _close_open_statement(source, chunks, tokens, begin, problem, index)
    elif problem is not None:
        # An unclosed /* after the last statement leaves the buffer unfinished but adds no statement.
        chunks.append(Chunk(_tail_statement(source, problem.offset, index), None, problem))
    return chunks


def _tail_statement(source: str, start: int, index: LineIndex) -> SourceStatement:
    pos = index.locate(start)
    return SourceStatement(source[start:], start, len(source), pos.line, pos.col, False)


def _close_open_statement(
    source: str,
    chunks: list[Chunk],
    tokens: list[Token],
    begin: int | None,
    problem: Unterminated | None,
    index: LineIndex,
) -> None:
    """The last statement has no ';' (or the tokenizer stopped inside it)."""
    start = tokens[begin].start if begin is not None else problem.offset  # type: ignore[union-attr]
    if problem is not None and problem.what != "comment":
        chunks.append(Chunk(_tail_statement(source, start, index), None, problem))
        return
    end = len(source) if problem is not None else tokens[-1].end + 1  # an open /* runs to the end
    pos = index.locate(start)
    statement = SourceStatement(source[start:end], start, end, pos.line, pos.col, False)
    chunks.append(Chunk(statement, tokens[begin:], problem))


def _block_end(tokens: list[Token], first: int) -> int | None:
    """Index of the END that closes the BEGIN block of the statement starting at tokens[first]
    (a CASE ... END inside it is skipped), or None when the block is not closed yet."""
    case_depth = 0
    for i in range(first, len(tokens)):
        kind = tokens[i].token_type
        if kind == TokenType.CASE:
            case_depth += 1
        elif kind == TokenType.END:
            if not case_depth:
                return i
            case_depth -= 1
    return None


def split_statements(source: str) -> list[SourceStatement]:
    """The statements of `source`, in order; empty ones dropped (see the module docstring)."""
    return [chunk.statement for chunk in split_chunks(source)]


def is_complete(buffer: str) -> bool:
    """Whether Enter should submit the REPL buffer.

    True when the buffer ends with a top-level ';' (outside strings, comments and BEGIN ... END
    blocks), or is one shell command that needs no ';' (QUIT, EXIT, HELP, CLEAR). A blank buffer
    is not complete (the REPL just shows a new prompt).
    """
    chunks = split_chunks(buffer)
    if not chunks:
        return False
    last = chunks[-1]
    if last.statement.complete:
        return True
    if last.problem is not None:
        return False
    tokens = last.tokens or []
    return len(tokens) == 1 and tokens[0].text.upper() in NO_SEMICOLON_COMMANDS
