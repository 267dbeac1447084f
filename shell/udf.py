"""Decorators that describe a Python function to `CREATE FUNCTION ... LANGUAGE PYTHON`.

Why it exists: SQL needs to know what a Python function returns (a type) and how it is called (row by row, on
pandas Series, as a table function or as an aggregate) before any row reaches it. PyFlink says so with
`@udf(result_type=...)`, `@udtf(result_types=[...])` and `@udaf(result_type=..., func_type="pandas")`; these
decorators take the same arguments, with Flink SQL type names as strings, so a module written for PyFlink needs
only its import changed:

    from shell.udf import udf

    @udf(result_type="BIGINT")
    def count_char(text, char):
        return None if text is None else text.count(char)

A module that should not import this package can set the attributes itself: `f.result_type = "BIGINT"` (and
`f.func_type = "pandas"`, `f.kind = "table"` or `"aggregate"`). The decorated function stays a plain function:
calling it from Python calls it unchanged.

* `udf`: a scalar function. `func_type="general"` (default) is called once per row with Python values;
  `func_type="pandas"` is called with one pandas Series per argument and returns a Series of the same length
  (run through Arrow, a batch of rows at a time).
* `udtf`: a table function, for `LATERAL TABLE(f(...))`; it returns or yields rows (a tuple per row, or a single
  value when it has one column). `result_types` lists the columns' types (or one type for one column).
* `udaf`: an aggregate function. `func_type="pandas"` (default) takes one pandas Series per argument holding a
  group's values and returns one value; `func_type="general"` takes one Python list per argument.
"""

from __future__ import annotations

from typing import Any, Callable

KIND_ATTRIBUTE = "kind"
SCALAR, TABLE, AGGREGATE = "scalar", "table", "aggregate"
GENERAL, PANDAS = "general", "pandas"


def _type_text(value: Any) -> str:
    """A type given as Flink SQL text ('BIGINT', 'ROW<a INT>'), or anything whose str() is such text."""
    return value if isinstance(value, str) else str(value)


def _described(f: Callable, kind: str, result_type: Any, func_type: str) -> Callable:
    if func_type not in (GENERAL, PANDAS):
        raise ValueError(f"func_type must be '{GENERAL}' or '{PANDAS}', not {func_type!r}")
    f.kind = kind
    f.result_type = result_type
    f.func_type = func_type
    return f


def udf(f: Callable | None = None, *, result_type: Any = None, func_type: str = GENERAL,
        input_types: Any = None, deterministic: bool = True) -> Any:  # noqa: ARG001 - PyFlink's arguments
    """A scalar function returning `result_type` (Flink SQL type text, e.g. 'BIGINT')."""
    def wrap(g: Callable) -> Callable:
        return _described(g, SCALAR, _type_text(result_type) if result_type is not None else None, func_type)

    return wrap(f) if f is not None else wrap


def udtf(f: Callable | None = None, *, result_types: Any = None, result_type: Any = None,
         input_types: Any = None, deterministic: bool = True) -> Any:  # noqa: ARG001 - PyFlink's arguments
    """A table function whose rows have `result_types` (a list of Flink SQL type texts, or one type)."""
    given = result_types if result_types is not None else result_type
    if given is not None and not isinstance(given, (list, tuple)):
        given = [given]
    types = [_type_text(t) for t in given] if given is not None else None

    def wrap(g: Callable) -> Callable:
        return _described(g, TABLE, types, GENERAL)

    return wrap(f) if f is not None else wrap


def udaf(f: Callable | None = None, *, result_type: Any = None, func_type: str = PANDAS,
         input_types: Any = None, deterministic: bool = True) -> Any:  # noqa: ARG001 - PyFlink's arguments
    """An aggregate function returning `result_type`: one value from all the values of a group."""
    def wrap(g: Callable) -> Callable:
        return _described(g, AGGREGATE, _type_text(result_type) if result_type is not None else None, func_type)

    return wrap(f) if f is not None else wrap


__all__ = ["udf", "udtf", "udaf", "SCALAR", "TABLE", "AGGREGATE", "GENERAL", "PANDAS"]
