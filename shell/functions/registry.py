"""A session's user functions: the persistent ones of its home and its temporary ones, by case-insensitive name.

Why it exists: CREATE/DROP FUNCTION, SHOW FUNCTIONS, DESCRIBE FUNCTION, the translator (functions/calls.py) and
a job's record all need the same view of which functions exist. Persistent functions are read from
`<home>/catalog/functions/` (shell/catalog/functions.py) and changed there first: a write the disk refuses changes
nothing. A temporary function lives with the session and shadows a persistent one of the same name, as in Flink.
Targets are imported when first used (functions/loading.py), with the session's `python.files`, and remembered;
the functions a translation used are registered in Spark before the query runs (functions/registration.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from shell.catalog.function_def import FunctionDef
from shell.catalog.functions import FunctionStore
from shell.errors import CatalogError, ExecutionError
from shell.functions.loading import PYTHON_FILES, LoadedFunction, load, python_paths
from shell.sql.hints import suggest
from shell.udf import AGGREGATE

SHOW_HINT = "SHOW FUNCTIONS lists them"


class FunctionRegistry:
    """`store` None keeps everything in memory (a job process: its functions come from the job's record)."""

    def __init__(self, store: FunctionStore | None, setting: Callable[[str], str | None]):
        self.store = store
        self.setting = setting
        self.persistent: dict[str, FunctionDef] = store.load() if store is not None else {}
        self.temporary: dict[str, FunctionDef] = {}
        self.used: set[str] = set()  # met by translations since the last registration in Spark
        self.outer: set[str] = set()  # of those, table functions used by a LEFT JOIN LATERAL
        self._loaded: dict[tuple, LoadedFunction] = {}

    @property
    def warnings(self) -> list[str]:
        return list(self.store.warnings) if self.store is not None else []

    # definitions -----------------------------------------------------------------------------------------------

    def find(self, name: str) -> FunctionDef | None:
        key = name.lower()
        return self.temporary.get(key) or self.persistent.get(key)

    def get(self, name: str) -> FunctionDef:
        found = self.find(name)
        if found is None:
            raise CatalogError(f"unknown function '{name}'", hint=suggest(name, self.names()) or SHOW_HINT)
        return found

    def names(self) -> list[str]:
        return sorted({d.name for d in [*self.persistent.values(), *self.temporary.values()]}, key=str.lower)

    def create(self, definition: FunctionDef, if_not_exists: bool = False) -> str:
        """'created', 'exists' (IF NOT EXISTS, or the same definition again) or a CatalogError for another one."""
        key = definition.name.lower()
        existing = (self.temporary if definition.temporary else self.persistent).get(key)
        if existing is not None:
            if if_not_exists or existing == definition:
                return "exists"
            raise CatalogError(
                f"function '{definition.name}' already exists as '{existing.target}'",
                hint=f"DROP {'TEMPORARY ' if definition.temporary else ''}FUNCTION {definition.name} first, "
                     "or use IF NOT EXISTS",
            )
        self.load_definition(definition)  # a target that does not import is refused now, not at first use
        if definition.temporary:
            self.temporary[key] = definition
        else:
            self._write(lambda: self.store.save(definition) if self.store is not None else None)
            self.persistent[key] = definition
        self._forget(key)
        return "created"

    def drop(self, name: str, temporary: bool, if_exists: bool = False) -> bool:
        key = name.lower()
        scope, other = (self.temporary, self.persistent) if temporary else (self.persistent, self.temporary)
        if key not in scope:
            if if_exists:
                return False
            if key in other:
                word = "temporary" if key in self.temporary else "persistent"
                hint = f"DROP {'TEMPORARY ' if word == 'temporary' else ''}FUNCTION {name} drops it"
                raise CatalogError(f"function '{name}' is {word}", hint=hint)
            raise CatalogError(f"unknown function '{name}'", hint=suggest(name, self.names()) or SHOW_HINT)
        if not temporary and self.store is not None:
            self._write(lambda: self.store.remove(name))
        del scope[key]
        self._forget(key)
        return True

    def _write(self, action: Callable[[], None]) -> None:
        try:
            action()
        except OSError as exc:
            raise ExecutionError(f"cannot write the catalog's function file: {exc.strerror or exc}",
                                 hint="free disk space or make the home writable, then try again") from None

    def _forget(self, key: str) -> None:
        self._loaded = {k: v for k, v in self._loaded.items() if k[0].name.lower() != key}

    # job records -----------------------------------------------------------------------------------------------

    def snapshot(self) -> list[dict[str, Any]]:
        """Every function a job may call (temporary ones shadowing persistent ones), as its record keeps them."""
        chosen = {**self.persistent, **self.temporary}
        return [d.to_dict() for d in chosen.values()]

    def restore(self, snapshot: list[dict[str, Any]]) -> None:
        """Take the functions of a job's record (kept in memory: a job never writes the catalog)."""
        self.persistent, self.temporary = {}, {}
        for data in snapshot:
            definition = FunctionDef.from_dict(data)
            (self.temporary if definition.temporary else self.persistent)[definition.name.lower()] = definition

    # loading ---------------------------------------------------------------------------------------------------

    def python_files(self) -> list[Path]:
        return python_paths(self.setting(PYTHON_FILES))

    def load_definition(self, definition: FunctionDef) -> LoadedFunction:
        files = self.python_files()
        key = (definition, tuple(files))
        if key not in self._loaded:
            self._loaded[key] = load(definition, files)
        return self._loaded[key]

    def loaded(self, definition: FunctionDef) -> LoadedFunction:
        return self.load_definition(definition)

    def aggregate_names(self) -> set[str]:
        from shell.sql.translate import FUNCTION_NAMES

        names = set()
        for key, definition in {**self.persistent, **self.temporary}.items():
            if key.upper() in FUNCTION_NAMES and not definition.system:
                continue  # a built-in of that name wins (functions/calls.py)
            try:
                if self.loaded(definition).kind == AGGREGATE:
                    names.add(key)
            except CatalogError:
                continue  # a function that does not load fails where it is called, not in every query
        return names

    # Spark -----------------------------------------------------------------------------------------------------

    def register_used(self, spark, zip_dir: Path) -> None:  # noqa: ANN001 - a SparkSession
        """Register in `spark` every function translations used since the last call, and ship python.files."""
        from shell.functions.registration import register, ship_files

        used, outer = set(self.used), set(self.outer)
        self.used.clear()
        self.outer.clear()
        files = self.python_files()
        if files and (used or outer):
            ship_files(spark, files, zip_dir)
        for key in sorted(used):
            definition = self.find(key)
            if definition is None:
                continue
            loaded = self.loaded(definition)
            register(spark, loaded)
            if key in outer:
                register(spark, loaded, outer=True)

    def with_registered(self, spark, zip_dir: Path):  # noqa: ANN001, ANN201 - a SparkSession, returned
        """`spark`, once the functions used since the last call are registered in it (see `register_used`)."""
        if self.used:
            self.register_used(spark, zip_dir)
        return spark

    def unregister(self, spark, name: str) -> None:  # noqa: ANN001 - a SparkSession
        from shell.functions.registration import unregister

        unregister(spark, name)
