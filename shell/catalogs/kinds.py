"""The kinds of catalog a `CREATE CATALOG ... WITH ('type' = ...)` makes, and what each can do.

Why it exists: Flink's catalogs differ in where their objects live, not in how a query names them. A catalog here
is databases of tables and views: ours keep them in Catalog stores (shell/catalog/store.py), one per database, in memory
(`generic_in_memory`, as in Flink) or on disk (`streamshell`, like the built-in `default_catalog`); external
ones (`pulsar`, `jdbc`) read them from the system they describe and cannot be written to. The session's
Catalogs (catalogs.py) resolves names over them and never asks which kind it has.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from shell.catalog.model import TableDef, ViewDef
from shell.catalog.names import DEFAULT_DATABASE
from shell.catalog.store import Catalog, file_name
from shell.errors import CatalogError, OptionError
from shell.files import FileProblem, read_json, write_atomically
from shell.options import OptionSpec
from shell.secrets import remember_secret_options
from shell.suggestions import suggest

DATABASE_FILE = "database.json"


@dataclass
class CatalogDef:
    """A catalog as CREATE CATALOG gave it: its name, options (with 'type') and comment."""

    name: str
    options: dict[str, str]
    comment: str | None = None

    def __post_init__(self) -> None:
        remember_secret_options(self.options)  # hidden wherever they show up in this process (shell/secrets.py)

    @property
    def type(self) -> str:
        return self.options.get("type", "")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "options": dict(self.options), "comment": self.comment}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CatalogDef":
        if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("options"), dict):
            raise ValueError("expected an object with 'name' and 'options'")
        if any(not isinstance(v, str) for v in data["options"].values()):
            raise ValueError("an option's value is not a string")
        return cls(data["name"], dict(data["options"]), data.get("comment"))


@dataclass
class StoreCatalog:
    """A catalog of our own: each database a Catalog store, on disk under `root` (the default database in `root`
    itself, the others in `root/databases/<name>`) or, with `root` None, in memory."""

    name: str
    root: Path | None
    default_database: str = DEFAULT_DATABASE
    read_only: bool = False
    stores: dict[str, Catalog] = field(default_factory=dict)
    spelled: dict[str, str] = field(default_factory=dict)  # lower-cased database name -> its spelling
    comments: dict[str, str | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._keep(self.default_database, Catalog.open(self.root), None)
        folder = self.root / "databases" if self.root is not None else None
        for path in sorted(folder.iterdir()) if folder is not None and folder.is_dir() else []:
            try:
                data = read_json(path / DATABASE_FILE)
                if not isinstance(data, dict) or not isinstance(data.get("name"), str):
                    raise FileProblem(path / DATABASE_FILE, "not a database definition", "fix it or move the folder away")
            except FileProblem as problem:
                self.warnings.append(f"skipped database {problem}")
                continue
            store = Catalog.open(path)
            self.warnings += store.warnings
            self._keep(data["name"], store, data.get("comment"))
        self.warnings += self.stores[self.default_database.lower()].warnings

    def _keep(self, name: str, store: Catalog, comment: str | None) -> None:
        self.stores[name.lower()] = store
        self.spelled[name.lower()] = name
        self.comments[name.lower()] = comment

    # databases ------------------------------------------------------------------------------------------------

    def databases(self) -> list[str]:
        return sorted(self.spelled.values(), key=str.lower)

    def has_database(self, name: str) -> bool:
        return name.lower() in self.stores

    def store(self, database: str) -> Catalog:
        try:
            return self.stores[database.lower()]
        except KeyError:
            raise unknown_database(self.name, database, self.databases()) from None

    def create_database(self, name: str, comment: str | None, if_not_exists: bool) -> bool:
        if self.has_database(name):
            if if_not_exists:
                return False
            raise CatalogError(f"database '{name}' already exists in catalog '{self.name}'",
                               hint="CREATE DATABASE IF NOT EXISTS keeps it")  # fmt: skip
        folder = None if self.root is None else self.root / "databases" / file_name(name)
        if folder is not None:
            try:
                write_atomically(folder / DATABASE_FILE, _json({"name": name, "comment": comment}))
            except OSError as exc:
                raise CatalogError(f"cannot create database '{name}' in {folder}: {exc.strerror or exc}") from None
        self._keep(name, Catalog(folder), comment)
        return True

    def drop_database(self, name: str, if_exists: bool, cascade: bool) -> bool:
        if not self.has_database(name):
            if if_exists:
                return False
            raise unknown_database(self.name, name, self.databases())
        store = self.stores[name.lower()]
        if store.objects and not cascade:
            raise CatalogError(f"database '{name}' is not empty ({len(store.objects)} tables and views)",
                               hint=f"DROP DATABASE {name} CASCADE drops them too")  # fmt: skip
        if name.lower() == self.default_database.lower():
            raise CatalogError(f"'{name}' is the default database of catalog '{self.name}' and cannot be dropped")
        if store.directory is not None:
            try:
                shutil.rmtree(store.directory)
            except OSError as exc:
                raise CatalogError(f"cannot remove {store.directory}: {exc.strerror or exc}; nothing was dropped") from None
        for mapping in (self.stores, self.spelled, self.comments):
            mapping.pop(name.lower(), None)
        return True

    # objects --------------------------------------------------------------------------------------------------

    def find(self, database: str, name: str) -> TableDef | ViewDef | None:
        store = self.stores.get(database.lower())
        return store.find(name) if store is not None else None

    def names(self, database: str, kind: type) -> list[str]:
        return self.store(database).names(kind)


@dataclass
class ExternalCatalog:
    """A catalog read from another system (a Pulsar cluster's topics, a Postgres database's tables): `source` has
    `databases()`, `tables(database)` and `table(database, name)`. Tables are looked up once per session."""

    name: str
    source: Any
    default_database: str
    read_only: bool = True
    warnings: list[str] = field(default_factory=list)
    seen: dict[tuple[str, str], TableDef | None] = field(default_factory=dict)

    def databases(self) -> list[str]:
        return sorted(self.source.databases(), key=str.lower)

    def has_database(self, name: str) -> bool:
        return any(d.lower() == name.lower() for d in self.source.databases())

    def store(self, database: str) -> Catalog:
        raise read_only(self.name)

    def find(self, database: str, name: str) -> TableDef | ViewDef | None:
        key = (database.lower(), name.lower())
        if key not in self.seen:
            found = self.source.table(database, name)
            self.seen[key] = replace(found, name=name) if found is not None else None
        return self.seen[key]

    def names(self, database: str, kind: type) -> list[str]:
        if kind is ViewDef:
            return []
        if not self.has_database(database):
            raise unknown_database(self.name, database, self.databases())
        return sorted(self.source.tables(database), key=str.lower)

    def create_database(self, name: str, comment: str | None, if_not_exists: bool) -> bool:
        raise read_only(self.name)

    def drop_database(self, name: str, if_exists: bool, cascade: bool) -> bool:
        raise read_only(self.name)


def read_only(catalog: str) -> CatalogError:
    return CatalogError(f"catalog '{catalog}' is read-only: its tables come from the system it describes",
                        hint="create tables and views in a catalog of type 'generic_in_memory' or 'streamshell'")  # fmt: skip


def unknown_database(catalog: str, name: str, known: list[str]) -> CatalogError:
    return CatalogError(f"unknown database '{name}' in catalog '{catalog}'",
                        hint=suggest(name, known) or "SHOW DATABASES lists them")  # fmt: skip


def _json(data: Any) -> str:
    import json

    return json.dumps(data, indent=2, sort_keys=True)


# --- the types CREATE CATALOG knows -----------------------------------------------------------------------------

COMMON = (
    OptionSpec("type", required=True, description="generic_in_memory, streamshell, pulsar or jdbc"),
    OptionSpec("default-database", description="the database USE CATALOG starts in"),
)


@dataclass(frozen=True)
class CatalogType:
    """One `type` of catalog: its options and how to open one (the home, the definition, in memory or not)."""

    name: str
    description: str
    options: tuple[OptionSpec, ...]
    open: Callable[[Path | None, CatalogDef, bool, Callable[[], Any]], Any]  # home, definition, in memory, spark


def _in_memory(home: Path | None, definition: CatalogDef, _: bool, __: Callable[[], Any]) -> StoreCatalog:
    return StoreCatalog(definition.name, None, definition.options.get("default-database", "default"))


def _on_disk(home: Path | None, definition: CatalogDef, in_memory: bool, _: Callable[[], Any]) -> StoreCatalog:
    path = definition.options.get("path")
    root = None if in_memory or home is None else Path(path) if path else home / "catalogs" / file_name(definition.name)
    return StoreCatalog(definition.name, root, definition.options.get("default-database", DEFAULT_DATABASE))


def _pulsar(home: Path | None, definition: CatalogDef, _: bool, __: Callable[[], Any]) -> ExternalCatalog:
    from shell.catalogs.pulsar_catalog import PulsarCatalog

    source = PulsarCatalog.from_options(dict(definition.options))
    return ExternalCatalog(definition.name, source, definition.options.get("default-database", "public/default"))


def _jdbc(home: Path | None, definition: CatalogDef, _: bool, spark: Callable[[], Any]) -> ExternalCatalog:
    from shell.catalogs.jdbc_catalog import PostgresCatalog

    source = PostgresCatalog.from_options(definition.options, spark, definition.name)
    return ExternalCatalog(definition.name, source, definition.options["default-database"])


def _external_options(module: str) -> tuple[OptionSpec, ...]:
    """The options an external catalog's module declares (it may not be importable on a minimal install)."""
    import importlib

    try:
        return tuple(importlib.import_module(module).OPTIONS)
    except (ImportError, AttributeError):
        return ()


def catalog_types() -> dict[str, CatalogType]:
    return {
        "generic_in_memory": CatalogType("generic_in_memory", "databases, tables and views in the session's memory, "
                                         "as Flink's (the definition is kept; its contents are not)", (), _in_memory),
        "streamshell": CatalogType("streamshell", "databases, tables and views kept on disk, like default_catalog",
                                   (OptionSpec("path", description="the folder (default: <home>/catalogs/<name>)"),),
                                   _on_disk),
        "pulsar": CatalogType("pulsar", "a Pulsar cluster: tenant/namespace as databases, topics as tables, columns "
                              "from the schema registry", _external_options("shell.catalogs.pulsar_catalog"), _pulsar),
        "jdbc": CatalogType("jdbc", "a Postgres server: its databases as databases, tables named schema.table",
                            _external_options("shell.catalogs.jdbc_catalog"), _jdbc),
    }


def validate_catalog(definition: CatalogDef) -> CatalogType:
    """The catalog's type, its options checked: a missing or unknown type, an unknown or missing option."""
    types = catalog_types()
    kind = definition.options.get("type")
    if not kind:
        raise OptionError(f"catalog '{definition.name}' needs a 'type'", hint=f"one of: {', '.join(types)}")
    if kind not in types:
        raise OptionError(f"unknown catalog type '{kind}'", hint=suggest(kind, list(types)) or f"one of: {', '.join(types)}")
    specs = COMMON + types[kind].options
    for key in definition.options:
        if not any(spec.matches(key, set()) for spec in specs):
            known = [s.key for s in specs]
            raise OptionError(f"unknown option '{key}' for a catalog of type '{kind}'",
                              hint=suggest(key, known) or f"known options: {', '.join(known)}")  # fmt: skip
    for spec in specs:
        if spec.required and spec.key not in definition.options:
            raise OptionError(f"a catalog of type '{kind}' needs the option '{spec.key}'", hint=spec.description or None)
    return types[kind]
