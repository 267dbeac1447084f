"""What runs in Spark's Python workers around a user's function: calls it, shapes its values, names its failures.

Why it exists: a user's function runs on the executors, inside Spark's Python workers, never on the driver. These
small callables wrap it there: a table function's rows become tuples (and a LEFT JOIN LATERAL gets its row of
NULLs), an aggregate gets its group's values as pandas Series or lists, numpy scalars become Python values, and an
exception inside the function is re-raised as FunctionFailed, whose one-line message (function, target, the
exception) is what a failed SELECT or job reports (shell/engine/spark_errors.py keeps a `shell.*` exception's
message alone). They are pickled by reference to this module, which reaches a cluster's executors in the package
zip (shell/engine/pyfiles.py); the user's function is pickled by reference to its own module (python.files).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator


class FunctionFailed(Exception):
    """A user function raised: `Python function f ('mod.f') failed: ValueError: ...`."""

    def __init__(self, name: str, target: str, exc: BaseException):
        detail = str(exc).strip().splitlines()
        what = f"{type(exc).__name__}: {detail[0]}" if detail else type(exc).__name__
        super().__init__(f"Python function {name} ('{target}') failed: {what}")


def plain(value: Any) -> Any:
    """A numpy scalar (what pandas code tends to return) as the Python value Spark's pickler expects."""
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy":
        return item()
    return value


class Scalar:
    """A row-at-a-time scalar function: Python values in, one value out."""

    def __init__(self, name: str, target: str, function: Callable):
        self.__name__ = name
        self.name, self.target, self.function = name, target, function

    def __call__(self, *args: Any) -> Any:
        try:
            return plain(self.function(*args))
        except Exception as exc:  # noqa: BLE001 - any failure of user code, reported in one line
            raise FunctionFailed(self.name, self.target, exc) from exc


class PandasScalar(Scalar):
    """A vectorised scalar function: one pandas Series per argument in, a Series of the same length out."""

    def __call__(self, *columns: Any) -> Any:
        import pandas as pd

        try:
            result = self.function(*columns)
        except Exception as exc:  # noqa: BLE001 - any failure of user code
            raise FunctionFailed(self.name, self.target, exc) from exc
        if not isinstance(result, pd.Series):
            result = pd.Series(result)
        size = len(columns[0]) if columns else len(result)
        if len(result) != size:
            raise FunctionFailed(self.name, self.target,
                                 ValueError(f"returned {len(result)} values for {size} rows (a vectorised function "
                                            "returns a Series as long as its arguments)"))
        return result


class Aggregate(Scalar):
    """An aggregate function, called once per group with the group's rows (an array of structs, one field per
    argument, built by Spark's collect_list): a pandas Series per argument (func_type 'pandas') or a list."""

    pandas = True

    def __call__(self, rows: Any) -> Any:
        rows = list(rows or [])
        width = len(rows[0]) if rows else 1
        columns = [[row[i] for row in rows] for i in range(width)]
        if self.pandas:
            import pandas as pd

            columns = [pd.Series(c) for c in columns]
        try:
            return plain(self.function(*columns))
        except Exception as exc:  # noqa: BLE001 - any failure of user code
            raise FunctionFailed(self.name, self.target, exc) from exc


class ListAggregate(Aggregate):
    pandas = False


class TableRows:
    """Base of the Spark UDTF classes made by `table_function`: `eval` yields the user's rows as tuples."""

    function: Callable = staticmethod(lambda *args: ())
    fname = ""
    target = ""
    width = 1
    outer = False  # LEFT JOIN LATERAL ... ON TRUE: one row of NULLs when the function gives none

    def eval(self, *args: Any) -> Iterator[tuple]:
        produced = False
        try:
            rows = type(self).function(*args)
            for row in rows if rows is not None else ():
                produced = True
                yield tuple(plain(v) for v in row) if isinstance(row, (tuple, list)) else (plain(row),)
        except FunctionFailed:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of user code
            raise FunctionFailed(self.fname, self.target, exc) from exc
        if self.outer and not produced:
            yield (None,) * self.width


def table_function(name: str, target: str, function: Callable, width: int, outer: bool) -> type:
    """A UDTF class for Spark (`spark.udtf.register`) that runs `function`."""
    return type(f"TableFunction_{name}", (TableRows,), {
        "function": staticmethod(function), "fname": name, "target": target, "width": width, "outer": outer,
    })
