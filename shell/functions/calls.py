"""Calls of user functions in a query, as the Spark SQL translation meets them.

Why it exists: the translator (shell/sql/translate.py, shell/sql/functions.py) maps Flink's built-in functions and
passes other names through; it has no session. While a session runs a statement, its function registry is the
active one here (a context variable, so sessions in other threads are not confused), and the translator asks this
module about each call and each LATERAL TABLE, through shell/sql/user_calls.py (the translator sits below this
package, so `active` makes this module's answers the ones it finds there):

* a scalar call is renamed `udf__<name>`, the name registered in Spark (registration.py), checked for its number of arguments; a TEMPORARY
  SYSTEM function shadows a built-in of the same name, as in Flink;
* an aggregate call `f(a, b)` becomes `f(collect_list(struct(a, b)))`: Spark gathers each group's rows (also in a
  streaming aggregation, where it refuses pandas aggregate UDFs) and the registered UDF computes the value from
  them (functions/worker.py);
* `LATERAL TABLE(f(x)) AS w(c)` becomes Spark's `LATERAL f(x) AS w(c)` (a Python UDTF); `LEFT JOIN LATERAL
  TABLE(...) ON TRUE` an inner lateral join over `udf__f__outer`, which yields a row of NULLs when f yields none.

Every function a translation met is noted as used, and the session registers those in Spark before it runs.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import TYPE_CHECKING, Iterator

from sqlglot import exp

from shell.errors import CatalogError, UnsupportedFeatureError
from shell.functions.registration import PREFIX, outer_name, spark_name
from shell.sql import user_calls
from shell.udf import AGGREGATE, SCALAR, TABLE

if TYPE_CHECKING:
    from shell.functions.registry import FunctionRegistry

_active: ContextVar["FunctionRegistry | None"] = ContextVar("streamshell_functions", default=None)


@contextlib.contextmanager
def active(registry: "FunctionRegistry") -> Iterator[None]:
    """Make `registry` the one translations consult while the block runs (in this thread)."""
    token = _active.set(registry)
    try:
        with user_calls.active(_ANSWERS):
            yield
    finally:
        _active.reset(token)


def current() -> "FunctionRegistry | None":
    return _active.get()


def scalar_call(name: str, args: list[exp.Expr], builtin: bool) -> exp.Expr | None:
    """The Spark call for user function `name`, or None when it is not one (or a built-in wins)."""
    registry = _active.get()
    if registry is None:
        return None
    definition = registry.find(name)
    if definition is None or (builtin and not definition.system):
        return None
    loaded = registry.loaded(definition)
    registry.used.add(definition.name.lower())
    if loaded.kind == TABLE:
        return None  # the call inside LATERAL TABLE(...): table_call maps it (the planning step refuses others)
    if _gathered(args):
        return exp.Anonymous(this=spark_name(definition.name), expressions=args)
    _check_arity(loaded, len(args))
    if loaded.kind == AGGREGATE:
        return exp.Anonymous(this=spark_name(definition.name), expressions=[gathered(args)])
    return exp.Anonymous(this=spark_name(definition.name), expressions=args)


def gathered(args: list[exp.Expr]) -> exp.Expr:
    """`collect_list(struct(args))`: a group's rows, one struct field per argument (NULLs kept)."""
    return exp.ArrayAgg(this=exp.Anonymous(this="struct", expressions=[a.copy() for a in args]))


def _gathered(args: list[exp.Expr]) -> bool:
    """Whether an aggregate call was already rewritten (the planning step rewrites before the translator)."""
    return len(args) == 1 and isinstance(args[0], exp.ArrayAgg) and isinstance(args[0].this, exp.Anonymous) \
        and args[0].this.name.lower() == "struct"


def _check_arity(loaded, count: int) -> None:  # noqa: ANN001 - a LoadedFunction
    if not loaded.accepts(count):
        raise CatalogError(
            f"function '{loaded.name}' takes {loaded.arguments_text()} argument{'s' if loaded.max_args != 1 else ''}, "
            f"not {count}",
            hint=f"its Python target is {loaded.definition.target}; DESCRIBE FUNCTION {loaded.name} shows it",
        )


def refuse_table_functions_as_scalars(query: exp.Expr) -> None:
    """A table function called where a value is expected (not inside LATERAL TABLE(...)) is an error."""
    registry = _active.get()
    if registry is None or not (registry.temporary or registry.persistent):
        return
    for node in query.find_all(exp.Anonymous):
        definition = registry.find(node.name)
        if definition is None or isinstance(node.parent, exp.TableFromRows):
            continue
        if registry.loaded(definition).kind == TABLE:
            raise UnsupportedFeatureError(f"table function {definition.name} called as a scalar function",
                                          hint=f"read it with LATERAL TABLE({definition.name}(...)) AS t(columns)")


def aggregate_names() -> set[str]:
    """Lower-cased names of the active registry's aggregate functions (for the planning step)."""
    registry = _active.get()
    return set() if registry is None else registry.aggregate_names()


def table_call(node: exp.TableFromRows) -> exp.Expr | None:
    """`TABLE(f(x))` of a LATERAL as Spark's table function call `f(x)`; None when f is not a user function."""
    registry = _active.get()
    call = node.this
    if registry is None or not isinstance(call, exp.Anonymous):
        return None
    definition = registry.find(call.name)
    if definition is None:
        return None
    loaded = registry.loaded(definition)
    registry.used.add(definition.name.lower())
    if loaded.kind != TABLE:
        raise UnsupportedFeatureError(f"{loaded.kind} function {definition.name} in LATERAL TABLE(...)",
                                      hint="LATERAL TABLE takes a table function (@udtf)")
    _check_arity(loaded, len(call.expressions))
    return exp.Anonymous(this=spark_name(definition.name), expressions=list(call.expressions))


def lateral_join(join: exp.Join) -> exp.Join:
    """A join with a user table function: `ON TRUE` dropped, LEFT made an inner join over the outer variant."""
    lateral = join.this
    if not isinstance(lateral, exp.Lateral) or not isinstance(lateral.this, exp.Anonymous):
        return join
    registry = _active.get()
    name = lateral.this.name.lower()
    if registry is None or not name.startswith(PREFIX) or registry.find(name[len(PREFIX):]) is None:
        return join
    on, side = join.args.get("on"), (join.side or "").upper()
    if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
        raise UnsupportedFeatureError("a join with LATERAL TABLE on a condition other than TRUE",
                                      hint="write ON TRUE and filter the rows in WHERE")
    if side not in ("", "LEFT") or (join.kind or "").upper() in ("SEMI", "ANTI"):
        raise UnsupportedFeatureError(f"{side or join.kind} JOIN LATERAL TABLE(...)",
                                      hint="use a comma (an inner join) or LEFT JOIN LATERAL TABLE(...) ON TRUE")
    if side == "LEFT":
        user = name[len(PREFIX):]
        registry.outer.add(user)
        lateral.this.set("this", outer_name(user))
    join.set("side", None)
    join.set("kind", None)
    join.set("on", None)
    return join


def function_names() -> set[str]:
    """Upper-cased names of the active registry's functions, temporary and kept, and the names they have in Spark
    (an aggregate's call is renamed to its Spark name before planning: planner/user_aggregates.py)."""
    registry = _active.get()
    names = [] if registry is None else registry.names()
    return {name.upper() for name in names} | {spark_name(name).upper() for name in names}


class _Answers:
    """The active registry's answers to the translator's questions (shell.sql.user_calls.UserCalls)."""

    function_names = staticmethod(function_names)
    scalar_call = staticmethod(scalar_call)
    table_call = staticmethod(table_call)
    lateral_join = staticmethod(lateral_join)


_ANSWERS = _Answers()


__all__ = ["active", "current", "scalar_call", "table_call", "lateral_join", "aggregate_names", "SCALAR"]
