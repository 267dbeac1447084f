"""The session's catalogs: `default_catalog` and those CREATE CATALOG made, the current catalog and database, and
names resolved over them as Flink resolves them.

Why it exists: the planner, the session and the REPL ask one object for `t`, `db.t` or `cat.db.t` (`find`,
`table`, `view`, `names`, `add`, `drop`, as a single Catalog store answers them) and never learn which catalog
or database holds it. A name with a catalog or database part comes back under the name it was written with, so
two tables called `t` in different databases stay apart in one query. Catalog definitions are kept in
`<home>/catalogs/<name>.json`; a job's record keeps a snapshot of everything (`snapshot`), from which its own
process plans the same statement (`from_snapshot`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from shell.catalog.model import TableDef, ViewDef
from shell.catalog.names import (
    DEFAULT_CATALOG,
    DEFAULT_DATABASE,
    ObjectPath,
    database_path,
    name_parts,
    object_path,
)
from shell.catalog.store import KINDS, Catalog, file_name
from shell.catalogs.kinds import CatalogDef, StoreCatalog, catalog_types, validate_catalog
from shell.errors import CatalogError, StreamshellError
from shell.files import FileProblem, read_json, write_atomically
from shell.suggestions import suggest


@dataclass
class Catalogs:
    """Catalogs by lower-cased name (each opened when first used), and where unqualified names lead."""

    home: Path | None
    in_memory: bool = False  # a job's process: everything from the record's snapshot, nothing read from disk
    definitions: dict[str, CatalogDef] = field(default_factory=dict)
    opened: dict[str, Any] = field(default_factory=dict)
    current_catalog: str = DEFAULT_CATALOG
    current_database: str = DEFAULT_DATABASE
    warnings: list[str] = field(default_factory=list)
    spark: Callable[[], Any] = field(default=lambda: None)  # the session's Spark, for catalogs read through it (jdbc)

    @classmethod
    def open(cls, home: Path | None) -> "Catalogs":
        catalogs = cls(home)
        builtin = StoreCatalog(DEFAULT_CATALOG, home / "catalog" if home is not None else None)
        catalogs.opened[DEFAULT_CATALOG] = builtin
        catalogs.warnings += builtin.warnings
        folder = home / "catalogs" if home is not None else None
        for path in sorted(folder.glob("*.json")) if folder is not None and folder.is_dir() else []:
            try:
                definition = CatalogDef.from_dict(read_json(path))
            except FileProblem as problem:
                catalogs.warnings.append(f"skipped catalog definition {problem} (left as it is)")
                continue
            except ValueError as exc:
                catalogs.warnings.append(f"skipped catalog definition {path}: {exc}; fix the file or move it away")
                continue
            catalogs.definitions[definition.name.lower()] = definition
        return catalogs

    # catalogs -------------------------------------------------------------------------------------------------

    def catalog_names(self) -> list[str]:
        return sorted([DEFAULT_CATALOG, *(d.name for d in self.definitions.values())], key=str.lower)

    def catalog(self, name: str) -> Any:
        """The catalog called `name`, opened now if it was not yet (an external one may be unreachable)."""
        key = name.lower()
        if key in self.opened:
            return self.opened[key]
        definition = self.definitions.get(key)
        if definition is None:
            raise CatalogError(f"unknown catalog '{name}'", hint=suggest(name, self.catalog_names()) or "SHOW CATALOGS lists them")
        kind = validate_catalog(definition)
        try:
            opened = kind.open(self.home, definition, self.in_memory, self.spark)
        except StreamshellError:
            raise
        except Exception as exc:  # noqa: BLE001 - a catalog that cannot open is the statement's error
            raise CatalogError(f"cannot open catalog '{name}': {exc}", hint=f"DESCRIBE CATALOG {name} shows its options") from None
        self.warnings += getattr(opened, "warnings", [])
        self.opened[key] = opened
        return opened

    def definition(self, name: str) -> CatalogDef:
        if name.lower() == DEFAULT_CATALOG:
            return CatalogDef(DEFAULT_CATALOG, {"type": "streamshell"}, "the built-in catalog, kept under the home")
        self.catalog(name)  # unknown -> the error
        return self.definitions[name.lower()]

    def create_catalog(self, definition: CatalogDef, if_not_exists: bool) -> bool:
        key = definition.name.lower()
        if key == DEFAULT_CATALOG or key in self.definitions:
            if if_not_exists:
                return False
            raise CatalogError(f"catalog '{definition.name}' already exists",
                               hint="CREATE CATALOG IF NOT EXISTS keeps it; DROP CATALOG first to replace it")  # fmt: skip
        validate_catalog(definition)
        self._save(definition)
        self.definitions[key] = definition
        return True

    def alter_catalog(self, name: str, options: dict[str, str], comment: str | None) -> None:
        current = self.definition(name)
        if name.lower() == DEFAULT_CATALOG:
            raise CatalogError("default_catalog cannot be altered")
        if "type" in options and options["type"] != current.type:
            raise CatalogError(f"the type of catalog '{name}' cannot change", hint="DROP CATALOG and CREATE it again")
        changed = replace(current, options={**current.options, **options}, comment=comment or current.comment)
        validate_catalog(changed)
        self._save(changed)
        self.definitions[name.lower()] = changed
        self.opened.pop(name.lower(), None)

    def drop_catalog(self, name: str, if_exists: bool) -> bool:
        key = name.lower()
        if key == DEFAULT_CATALOG:
            raise CatalogError("default_catalog cannot be dropped")
        if key not in self.definitions:
            if if_exists:
                return False
            self.catalog(name)  # the unknown-catalog error
        if key == self.current_catalog.lower():
            raise CatalogError(f"catalog '{name}' is in use", hint=f"USE CATALOG {DEFAULT_CATALOG} first")
        if self.home is not None and not self.in_memory:
            path = self._definition_path(self.definitions[key])
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise CatalogError(f"cannot remove {path}: {exc.strerror or exc}; nothing was dropped") from None
        del self.definitions[key]
        self.opened.pop(key, None)
        return True

    def use_catalog(self, name: str) -> None:
        catalog = self.catalog(name)
        self.current_catalog = self.definition(name).name
        self.current_database = catalog.default_database

    # databases ------------------------------------------------------------------------------------------------

    def databases(self, catalog: str | None = None) -> list[str]:
        return self.catalog(catalog or self.current_catalog).databases()

    def use_database(self, name: str) -> None:
        catalog_name, database = database_path(name, self.current_catalog)
        catalog = self.catalog(catalog_name)
        if not catalog.has_database(database):
            from shell.catalogs.kinds import unknown_database

            raise unknown_database(catalog_name, database, catalog.databases())
        self.current_catalog = self.definition(catalog_name).name
        self.current_database = next(d for d in catalog.databases() if d.lower() == database.lower())

    def create_database(self, name: str, comment: str | None, if_not_exists: bool) -> bool:
        catalog_name, database = database_path(name, self.current_catalog)
        return self.catalog(catalog_name).create_database(database, comment, if_not_exists)

    def drop_database(self, name: str, if_exists: bool, cascade: bool) -> bool:
        catalog_name, database = database_path(name, self.current_catalog)
        if (catalog_name.lower(), database.lower()) == (self.current_catalog.lower(), self.current_database.lower()):
            raise CatalogError(f"database '{database}' is in use", hint="USE another database first")
        return self.catalog(catalog_name).drop_database(database, if_exists, cascade)

    # objects, as a single Catalog store answers -------------------------------------------------------------

    def path(self, name: str) -> ObjectPath:
        return object_path(name, self.current_catalog, self.current_database)

    def find(self, name: str) -> TableDef | ViewDef | None:
        try:
            path = self.path(name)
            found = self.catalog(path.catalog).find(path.database, path.name)
        except CatalogError:
            return None
        if found is None or len(name_parts(name)) == 1:
            return found
        return replace(found, name=name)  # `db.t` goes by that name in the query that wrote it

    def table(self, name: str) -> TableDef:
        found = self.find(name)
        if not isinstance(found, TableDef):
            raise self._unknown(name, "table", TableDef)
        return found

    def view(self, name: str) -> ViewDef:
        found = self.find(name)
        if not isinstance(found, ViewDef):
            raise self._unknown(name, "view", ViewDef)
        return found

    def names(self, kind: type, database: str | None = None) -> list[str]:
        """The tables or views of the current database, or of `database` (`db` or `cat.db`)."""
        if database is None:
            return self.catalog(self.current_catalog).names(self.current_database, kind)
        catalog_name, db = database_path(database, self.current_catalog)
        return self.catalog(catalog_name).names(db, kind)

    def home_of(self, name: str) -> tuple[str, str]:
        """(catalog, database) that `name` is in, as they are spelled: where a view's own names are looked up."""
        path = self.path(name)
        catalog = self.catalog(path.catalog)
        database = next((d for d in catalog.databases() if d.lower() == path.database.lower()), path.database)
        return self.definition(path.catalog).name, database

    def is_temporary(self, name: str) -> bool:
        path = self.path(name)
        store = self._store(path)
        return path.name.lower() in store.temporary

    def add(self, obj: TableDef | ViewDef, *, temporary: bool = False, if_not_exists: bool = False) -> bool:
        path = self.path(obj.name)
        return self._store(path).add(replace(obj, name=path.name), temporary=temporary, if_not_exists=if_not_exists)

    def replace(self, obj: TableDef | ViewDef) -> None:
        path = self.path(obj.name)
        self._store(path).replace(replace(obj, name=path.name))

    def drop(self, name: str, kind: type, *, if_exists: bool = False) -> bool:
        path = self.path(name)
        try:
            store = self._store(path)
        except CatalogError:
            if if_exists:
                return False
            raise
        return store.drop(path.name, kind, if_exists=if_exists)

    def rename(self, name: str, new_name: str) -> None:
        """ALTER TABLE|VIEW name RENAME TO new_name, within one catalog."""
        old, new = self.path(name), self.path(new_name)
        if old.catalog.lower() != new.catalog.lower():
            raise CatalogError(f"'{name}' cannot move to another catalog ('{new.catalog}')")
        source, target = self._store(old), self._store(new)
        obj = source.find(old.name)
        if obj is None:
            raise self._unknown(name, "table", TableDef)
        if target.find(new.name) is not None:
            raise CatalogError(f"'{new_name}' already exists", hint="DROP it first or choose another name")
        temporary = old.name.lower() in source.temporary
        target.add(replace(obj, name=new.name), temporary=temporary)
        source.drop(old.name, type(obj))

    def _store(self, path: ObjectPath) -> Catalog:
        return self.catalog(path.catalog).store(path.database)

    def _unknown(self, name: str, kind: str, model: type) -> CatalogError:
        try:
            path = self.path(name)
            catalog = self.catalog(path.catalog)
            if not catalog.has_database(path.database):
                from shell.catalogs.kinds import unknown_database

                return unknown_database(path.catalog, path.database, catalog.databases())
            known = catalog.names(path.database, model)
        except CatalogError as error:
            return error
        where = "" if (path.catalog, path.database) == (self.current_catalog, self.current_database) else \
            f" in {path.catalog}.{path.database}"  # fmt: skip
        return CatalogError(f"unknown {kind} '{name}'{where}",
                            hint=suggest(path.name, known) or f"SHOW {kind.upper()}S lists them")  # fmt: skip

    # persistence of definitions and a job's snapshot --------------------------------------------------------

    def _definition_path(self, definition: CatalogDef) -> Path:
        assert self.home is not None
        return self.home / "catalogs" / f"{file_name(definition.name)}.json"

    def _save(self, definition: CatalogDef) -> None:
        if self.home is None or self.in_memory:
            return
        path = self._definition_path(definition)
        try:
            write_atomically(path, json.dumps(definition.to_dict(), indent=2, sort_keys=True))
            path.chmod(0o600)  # its options may hold a password
        except OSError as exc:
            raise CatalogError(f"cannot save catalog '{definition.name}' to {path}: {exc.strerror or exc}") from None

    def snapshot(self) -> list[dict[str, Any]]:
        """What a job's process needs to plan the same statement: every catalog's definition, the current catalog
        and database, and every table and view of our own catalogs (temporary ones too)."""
        entries: list[dict[str, Any]] = [{"kind": "current", "catalog": self.current_catalog,
                                          "database": self.current_database}]  # fmt: skip
        entries += [{"kind": "catalog", "definition": d.to_dict()} for d in self.definitions.values()]
        for key, catalog in self.opened.items():
            if not isinstance(catalog, StoreCatalog):
                continue
            for database in catalog.databases():
                store = catalog.store(database)
                for entry in store.snapshot():
                    entries.append({**entry, "catalog": catalog.name, "database": database})
        return entries

    @classmethod
    def from_snapshot(cls, snapshot: list[dict[str, Any]]) -> "Catalogs":
        """The catalogs a job was planned with, all in memory (a record from before catalogs holds tables only)."""
        catalogs = cls(None, in_memory=True)
        catalogs.opened[DEFAULT_CATALOG] = StoreCatalog(DEFAULT_CATALOG, None)
        for entry in snapshot:
            if entry.get("kind") == "catalog":
                definition = CatalogDef.from_dict(entry["definition"])
                catalogs.definitions[definition.name.lower()] = definition
        for entry in snapshot:
            kind = entry.get("kind")
            if kind == "current":
                catalogs.current_catalog, catalogs.current_database = entry["catalog"], entry["database"]
            elif kind in KINDS:
                catalog = catalogs.catalog(entry.get("catalog", DEFAULT_CATALOG))
                database = entry.get("database", catalog.default_database)
                if not catalog.has_database(database):
                    catalog.create_database(database, None, True)
                obj = KINDS[kind].from_dict(entry["definition"])
                catalog.store(database).objects[obj.name.lower()] = obj
        return catalogs


def catalog_type_names() -> list[str]:
    return list(catalog_types())
