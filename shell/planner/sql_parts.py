"""Small helpers over sqlglot expressions that every planner rule uses.

Why it exists: the rules (planner/changelog.py, join_rewrites.py, top_n.py, weighted_aggregates.py) split
conditions, look through aliases and refuse what they cannot run in the same words; one copy of each.
"""

from __future__ import annotations

from sqlglot import exp

from shell.errors import UnsupportedFeatureError


def conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The parts of a condition joined by AND (parentheses dropped)."""
    if isinstance(condition, exp.Paren):
        return conjuncts(condition.this)
    if isinstance(condition, exp.And):
        return conjuncts(condition.this) + conjuncts(condition.expression)
    return [condition]


def unaliased(node: exp.Expr) -> exp.Expr:
    return node.this if isinstance(node, exp.Alias) else node


def unsupported(what: str, hint: str | None = None) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(f"{what} is not supported on the changelog path", hint=hint)
