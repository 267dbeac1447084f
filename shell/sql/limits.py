"""The front end's limits: how deep a statement may nest and how long it may be.

Why it exists: sqlglot's parser, its printers and the planner's rules recurse into a statement's
structure, so without limits an input nested a few hundred levels deep ran out of Python's stack (a
RecursionError reported at 1:1), and a statement of megabytes took minutes and gigabytes. Each limit
has its own one-line message, positioned where it is crossed, saying what to do:

* Nesting: at most MAX_NESTING levels of brackets `( [ {`, CASE ... END, type angles (`ARRAY<`,
  `MAP<`, `ROW<`) and runs of prefix operators (`NOT NOT x`, `- - 1`), counted on the tokens before
  sqlglot recurses (`nesting_fault`). Real queries nest a dozen levels; generated ones rarely 50.
* Depth of the tree: a flat text can still give a deep tree (`1 + 2 - 3 + 4 - ...`: each change of
  operator is one level, `UNION ALL` chains likewise), which printing and planning recurse into.
  Its depth, counted as the recursive walks see it (a chain of the same operator, or of AND/OR, is
  printed by a loop and counts once), is at most MAX_TREE_DEPTH (`tree_depth_fault`).
* Size: a statement of at most MAX_STATEMENT_CHARS characters (a script may hold many), and of at
  most MAX_STATEMENT_TOKENS tokens (names, numbers, strings, operators, commas). Parsing and
  planning cost about 10 us per token at worst (a flat `1 + 1 + ...`: a tree node per token), so
  this bounds any statement to a few seconds; a 1 MB IN list of 5-digit numbers is about 340,000
  tokens and passes. Counted after the nesting, so a deep statement gets the nesting message.

Python's recursion limit is raised at import (RECURSION_LIMIT, by parse.py) so that anything within
these limits parses, plans and prints without meeting it: the deepest shapes within the limits (200
levels of `NOT (`, of subqueries or of function calls; 2000 levels of mixed operators) need at most
about 6,000 frames (tests/unit/test_frontend_limits.py runs each through parse, plan and print), and
20,000 frames were measured to end in a RecursionError, not a crash of the C stack, in the main
thread and in a thread of the default size. A shape that still slips past the token count meets
that RecursionError in the parser, which parse.py reports at the token the parser was reading.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from operator import attrgetter

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

MAX_NESTING = 200
MAX_TREE_DEPTH = 2000
MAX_STATEMENT_CHARS = 1 << 20  # 1 MiB of text: 1,048,576 characters
MAX_STATEMENT_TOKENS = 400_000
RECURSION_LIMIT = 20_000

NESTING_HINT = (
    "nest less: move inner subqueries into views or WITH queries, and drop parentheses that group nothing"
)
TREE_HINT = (
    "split the expression: compute parts of a long chain of mixed operators (or a long UNION) in a view "
    "or a WITH query, or group halves of it in parentheses"
)
SIZE_HINT = (
    "split it into several statements; keep long value lists (IN, VALUES) in a table and join with it"
)
TOKENS_HINT = (
    "split it into several statements: keep long value lists (IN, VALUES) in a table and join with it, and "
    "compute parts of a long expression in a view or a WITH query"
)

_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})
_TYPE_WORDS = frozenset({TokenType.ARRAY, TokenType.MAP, TokenType.ROW, TokenType.STRUCT})
_PREFIX = frozenset({TokenType.NOT, TokenType.DASH, TokenType.PLUS, TokenType.TILDE})
_OPENING = (*_OPEN, TokenType.CASE, TokenType.LT, *_PREFIX)
_TOKEN_TYPE = attrgetter("token_type")


def ensure_recursion_limit(limit: int = RECURSION_LIMIT) -> None:
    """Raise Python's recursion limit to `limit` (never lower it)."""
    if sys.getrecursionlimit() < limit:
        sys.setrecursionlimit(limit)


def nesting_message(limit: int | None = None) -> str:
    limit = MAX_NESTING if limit is None else limit
    return f"nesting deeper than {limit} levels (parentheses, brackets, CASE, types or prefix operators)"


def tree_message(limit: int | None = None) -> str:
    limit = MAX_TREE_DEPTH if limit is None else limit
    return f"expression deeper than {limit} levels (each change of operator in a chain, or each UNION, is a level)"


def size_message(chars: int, limit: int | None = None) -> str:
    limit = MAX_STATEMENT_CHARS if limit is None else limit
    return f"statement longer than {limit:,} characters: it has {chars:,}"


def tokens_message(tokens: int, limit: int | None = None) -> str:
    limit = MAX_STATEMENT_TOKENS if limit is None else limit
    return f"statement of more than {limit:,} tokens (names, numbers, operators, commas): it has {tokens:,}"


def nesting_fault(tokens: Sequence[Token], limit: int | None = None) -> Token | None:
    """The first token that opens level `limit + 1` of nesting, or None when the statement stays within it.

    Counts brackets, CASE ... END, `<` after a type word (ARRAY, MAP, ROW, STRUCT) and runs of prefix
    operators. A closer without an opener is ignored (the grammar reports it). One pass, no recursion.
    """
    limit = MAX_NESTING if limit is None else limit
    if len(tokens) <= limit:  # each level takes a token
        return None
    kinds = Counter(map(_TOKEN_TYPE, tokens))  # at C speed: most statements have few tokens that open a level
    if sum(kinds[kind] for kind in _OPENING) <= limit:
        return None
    brackets = cases = angles = run = 0
    previous = None
    for token in tokens:
        kind = token.token_type
        if kind in _PREFIX:
            run += 1
            if brackets + cases + angles + run > limit:
                return token
            previous = kind
            continue
        run = 0
        if kind in _OPEN:
            brackets += 1
        elif kind is TokenType.CASE:
            cases += 1
        elif kind is TokenType.LT and previous in _TYPE_WORDS:
            angles += 1
        elif kind in _CLOSE:
            brackets -= brackets > 0
        elif kind is TokenType.END:
            cases -= cases > 0
        elif kind is TokenType.GT:
            angles -= angles > 0
        previous = kind
        if brackets + cases + angles > limit:
            return token
    return None


def tree_depth_fault(tree: exp.Expr, limit: int | None = None) -> exp.Expr | None:
    """A node at level `limit + 1` of `tree` (the first one met), or None. Iterative.

    A level is one node, except where sqlglot's generator prints by a loop rather than by recursion: a
    left-leaning chain of one binary operator (`a + b + c`, not `.`) and AND/OR/XOR inside each other.
    """
    limit = MAX_TREE_DEPTH if limit is None else limit
    expr, binary, connector, dot = exp.Expr, exp.Binary, exp.Connector, exp.Dot
    stack: list[tuple[exp.Expr, int]] = [(tree, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > limit:
            return node
        kind = type(node)
        joins = isinstance(node, connector)
        left = node.args.get("this") if not joins and isinstance(node, binary) and kind is not dot else None
        for value in node.args.values():
            for child in value if type(value) is list else (value,):
                if isinstance(child, expr):
                    if (joins and isinstance(child, connector)) or (child is left and type(child) is kind):
                        push((child, depth))
                    else:
                        push((child, depth + 1))
    return None


def first_position(node: exp.Expr) -> int | None:
    """The `start` offset of the first positioned node at or under `node` (identifiers and literals carry
    positions), or None."""
    stack = [node]
    while stack:
        current = stack.pop()
        meta = current._meta
        if meta is not None and "start" in meta:
            return meta["start"]
        stack.extend(reversed(list(current.iter_expressions())))
    return None
