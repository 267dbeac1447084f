"""The translator's question about calls it does not know: is this a user function, and what is its Spark call?

Why it exists: the translator (translate.py, functions.py) has no session and sits below the functions package
that holds a session's CREATE FUNCTION definitions. While a session runs a statement, it makes its user functions
the active ones here (a context variable, so sessions in other threads are not confused); the translator asks
whichever object is active, and with none active every call is a plain call. shell/functions/calls.py is the
object a session makes active.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Iterator, Protocol

from sqlglot import exp


class UserCalls(Protocol):
    """What the translator asks about a call, a LATERAL TABLE(...) and a join with one."""

    def function_names(self) -> set[str]: ...

    def scalar_call(self, name: str, args: list[exp.Expr], builtin: bool) -> exp.Expr | None: ...

    def table_call(self, node: exp.TableFromRows) -> exp.Expr | None: ...

    def lateral_join(self, join: exp.Join) -> exp.Join: ...


_active: ContextVar[UserCalls | None] = ContextVar("streamshell_user_calls", default=None)


@contextlib.contextmanager
def active(calls: UserCalls) -> Iterator[None]:
    """Make `calls` the one translations consult while the block runs (in this thread)."""
    token = _active.set(calls)
    try:
        yield
    finally:
        _active.reset(token)


def user_function_names() -> set[str]:
    """Upper-cased names of the active user functions (none when no session is running a statement)."""
    calls = _active.get()
    return set() if calls is None else calls.function_names()


def scalar_call(name: str, args: list[exp.Expr], builtin: bool) -> exp.Expr | None:
    """The Spark call for user function `name`, or None when it is not one (or a built-in wins)."""
    calls = _active.get()
    return None if calls is None else calls.scalar_call(name, args, builtin)


def table_call(node: exp.TableFromRows) -> exp.Expr | None:
    """`TABLE(f(x))` of a LATERAL as Spark's table function call; None when f is not a user function."""
    calls = _active.get()
    return None if calls is None else calls.table_call(node)


def lateral_join(join: exp.Join) -> exp.Join:
    """A join with a user table function as Spark takes it; other joins unchanged."""
    calls = _active.get()
    return join if calls is None else calls.lateral_join(join)
