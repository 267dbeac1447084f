"""Importing a function's Python target and finding out what it is: its kind, result type and arguments.

Why it exists: `CREATE FUNCTION f AS 'pkg.mod.name' LANGUAGE PYTHON` names code the shell has never seen. Before
SQL can call it, the shell imports the module (with the paths of `python.files` first on `sys.path`), checks that
the name is a callable, reads the result type its decorator (shell/udf.py) or attribute gives, and counts its
arguments, so a query calling it with the wrong number of arguments fails when it is planned, not on an executor.
Every problem is a one-line error naming the function, what is wrong and what to do.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from shell.catalog.function_def import FunctionDef
from shell.errors import CatalogError, StreamshellError
from shell.udf import AGGREGATE, GENERAL, PANDAS, SCALAR, TABLE

KINDS = (SCALAR, TABLE, AGGREGATE)
PYTHON_FILES = "python.files"
IMPORTABLE_SUFFIXES = (".py", ".zip", ".egg", ".whl")


@dataclass(frozen=True)
class LoadedFunction:
    """A function ready to register: `result_types` are Flink SQL type texts (one per column of a table
    function), `spark_types` the same as Spark DDL; `min_args`..`max_args` (None: any number) its arguments."""

    definition: FunctionDef
    function: Callable
    kind: str
    func_type: str
    result_types: tuple[str, ...]
    spark_types: tuple[str, ...]
    column_names: tuple[str, ...]
    min_args: int
    max_args: int | None

    @property
    def name(self) -> str:
        return self.definition.name

    def arguments_text(self) -> str:
        if self.max_args is None:
            return f"at least {self.min_args}"
        if self.min_args == self.max_args:
            return str(self.min_args)
        return f"{self.min_args} to {self.max_args}"

    def accepts(self, count: int) -> bool:
        return count >= self.min_args and (self.max_args is None or count <= self.max_args)


def python_paths(setting: str | None) -> list[Path]:
    """The paths of `python.files` ('a.py,pkg.zip,dir'), each checked to exist."""
    paths = []
    for item in (setting or "").split(","):
        item = item.strip()
        if not item:
            continue
        path = Path(item).expanduser().resolve()
        if not path.exists():
            raise CatalogError(f"python.files: '{item}' does not exist",
                               hint="SET 'python.files' to existing .py, .zip or .egg files or folders, comma-separated")
        if path.is_file() and path.suffix not in IMPORTABLE_SUFFIXES:
            raise CatalogError(f"python.files: '{item}' is not a .py, .zip, .egg or .whl file or a folder")
        paths.append(path)
    return paths


def import_root(path: Path) -> str:
    """What goes on sys.path for one entry of python.files: a .py file's folder, an archive or folder itself."""
    return str(path.parent if path.suffix == ".py" and path.is_file() else path)


def add_to_sys_path(paths: list[Path]) -> None:
    for path in reversed(paths):
        root = import_root(path)
        if root not in sys.path:
            sys.path.insert(0, root)
            importlib.invalidate_caches()


def load(definition: FunctionDef, files: list[Path]) -> LoadedFunction:
    """Import the definition's target and describe it; a one-line CatalogError for each way it can be wrong."""
    add_to_sys_path(files)
    name, target = definition.name, definition.target
    module_name, _, attribute = target.rpartition(".")
    if not module_name or not attribute:
        raise CatalogError(f"function '{name}': '{target}' is not 'module.name'",
                           hint="AS 'package.module.function' names a function of an importable module")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise CatalogError(
            f"function '{name}': cannot import module '{module_name}' ({exc})",
            hint="SET 'python.files' = '/path/to/module.py' (or a .zip), or install the module",
        ) from None
    except BaseException as exc:  # noqa: BLE001 - user code: a SyntaxError, an exception at import time
        raise CatalogError(f"function '{name}': module '{module_name}' failed to import: {_one_line(exc)}",
                           hint="fix the module; its error is above") from None
    target_object = getattr(module, attribute, None)
    if target_object is None:
        raise CatalogError(f"function '{name}': module '{module_name}' has no '{attribute}'",
                           hint=f"names in it: {', '.join(_public_callables(module)) or 'none callable'}")
    function = _callable_of(target_object)
    if function is None:
        raise CatalogError(f"function '{name}': '{target}' is a {type(target_object).__name__}, not a callable",
                           hint="AS names a Python function (or a class with an eval method)")
    kind = getattr(target_object, "kind", None) or getattr(function, "kind", None) or SCALAR
    if kind not in KINDS:
        raise CatalogError(f"function '{name}': kind {kind!r} is not one of {', '.join(KINDS)}")
    func_type = getattr(target_object, "func_type", None) or (PANDAS if kind == AGGREGATE else GENERAL)
    if func_type not in (GENERAL, PANDAS):
        raise CatalogError(f"function '{name}': func_type {func_type!r} is not '{GENERAL}' or '{PANDAS}'")
    given = getattr(target_object, "result_types", None) if kind == TABLE else None
    given = given if given is not None else getattr(target_object, "result_type", None)
    if given is None:
        decorator = {SCALAR: "udf", TABLE: "udtf", AGGREGATE: "udaf"}[kind]
        raise CatalogError(
            f"function '{name}': '{target}' has no result type",
            hint=f"decorate it with @{decorator}(result_type='BIGINT') from shell.udf, or set {attribute}.result_type",
        )
    result_types, spark_types, columns = _types(name, kind, given)
    low, high = _arity(function)
    return LoadedFunction(definition, function, kind, func_type, result_types, spark_types, columns, low, high)


def _callable_of(target: Any) -> Callable | None:
    """The function to call: the target itself, or a new instance's `eval` for a class (PyFlink's style)."""
    if inspect.isclass(target):
        if not callable(getattr(target, "eval", None)):
            return None
        try:
            return target().eval
        except Exception:  # noqa: BLE001 - a class that needs arguments is not a function we can call
            return None
    return target if callable(target) else None


def _types(name: str, kind: str, given: Any) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    from shell.sql.types import flink_type_to_spark

    texts = [str(t) for t in given] if isinstance(given, (list, tuple)) else [str(given)]
    if kind != TABLE and len(texts) != 1:
        raise CatalogError(f"function '{name}': a {kind} function has one result type, not {len(texts)}")
    columns = tuple(f"f{i}" for i in range(len(texts)))
    if kind == TABLE and len(texts) == 1 and texts[0].strip().upper().startswith("ROW"):
        fields = _row_fields(name, texts[0])  # ROW<word STRING, n INT>: its fields are the columns
        columns, texts = tuple(n for n, _ in fields), [t for _, t in fields]
    spark = []
    for text in texts:
        try:
            spark.append(flink_type_to_spark(text))
        except StreamshellError as exc:
            raise CatalogError(f"function '{name}': result type '{text}' is not a type Spark has: {exc.message}",
                               hint="use a Flink SQL type name such as 'BIGINT', 'STRING' or 'ARRAY<INT>'") from None
    return tuple(texts), tuple(spark), columns


def _row_fields(name: str, text: str) -> list[tuple[str, str]]:
    from sqlglot import exp

    from shell.sql.fragments import parse_type

    try:
        row = parse_type(text)
    except StreamshellError as exc:
        raise CatalogError(f"function '{name}': result type '{text}' is not a type: {exc.message}") from None
    return [(f.name, f.args["kind"].sql()) for f in row.expressions if isinstance(f, exp.ColumnDef)]


def _arity(function: Callable) -> tuple[int, int | None]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature: any number
        return 0, None
    low, high = 0, 0
    for parameter in signature.parameters.values():
        if parameter.kind == parameter.VAR_POSITIONAL:
            return low, None
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            high += 1
            if parameter.default is parameter.empty:
                low += 1
    return low, high


def _public_callables(module: Any) -> list[str]:
    return sorted(n for n, v in vars(module).items() if not n.startswith("_") and callable(v))[:8]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno})"
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
