"""The session's catalog of tables and views, persisted so they survive a restart of the shell.

Each definition is one JSON file under `<home>/catalog/`, written atomically, so a crash never leaves a half
catalog and two shells on the same home see each other's tables after a restart. Temporary objects (`CREATE
TEMPORARY TABLE`) live only in memory, as in Flink. Names are case-insensitive and keep their spelling.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from shell.catalog.model import TableDef, ViewDef
from shell.errors import CatalogError
from shell.sql.hints import suggest

KINDS = {"table": TableDef, "view": ViewDef}


@dataclass
class Catalog:
    """Tables and views by lower-cased name; `directory` None keeps everything in memory."""

    directory: Path | None = None
    objects: dict[str, TableDef | ViewDef] = field(default_factory=dict)
    temporary: set[str] = field(default_factory=set)

    @classmethod
    def open(cls, directory: Path | None) -> "Catalog":
        catalog = cls(directory)
        if directory is None:
            return catalog
        for kind, model in KINDS.items():
            folder = directory / f"{kind}s"
            for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                try:
                    obj = model.from_dict(json.loads(path.read_text(encoding="utf-8")))
                except (ValueError, KeyError, TypeError) as exc:
                    raise CatalogError(
                        f"catalog file {path} is unreadable: {exc}", hint="move it away and re-create the object"
                    ) from None
                catalog.objects[obj.name.lower()] = obj
        return catalog

    # lookups -------------------------------------------------------------------------------------------------

    def find(self, name: str) -> TableDef | ViewDef | None:
        return self.objects.get(name.lower())

    def table(self, name: str) -> TableDef:
        obj = self.find(name)
        if not isinstance(obj, TableDef):
            raise self._unknown(name, "table", TableDef)
        return obj

    def view(self, name: str) -> ViewDef:
        obj = self.find(name)
        if not isinstance(obj, ViewDef):
            raise self._unknown(name, "view", ViewDef)
        return obj

    def names(self, kind: type) -> list[str]:
        return sorted((o.name for o in self.objects.values() if isinstance(o, kind)), key=str.lower)

    # changes -------------------------------------------------------------------------------------------------

    def add(self, obj: TableDef | ViewDef, *, temporary: bool = False, if_not_exists: bool = False) -> bool:
        """Register a definition; False if it existed and `if_not_exists` was given."""
        key = obj.name.lower()
        if key in self.objects:
            if if_not_exists:
                return False
            kind = "table" if isinstance(self.objects[key], TableDef) else "view"
            raise CatalogError(
                f"{kind} '{obj.name}' already exists",
                hint=f"use CREATE ... IF NOT EXISTS, or DROP {kind.upper()} {obj.name} first",
            )
        self._put(obj, temporary)
        return True

    def replace(self, obj: TableDef | ViewDef) -> None:
        """Store a changed definition of an existing object (ALTER TABLE)."""
        self._put(obj, obj.name.lower() in self.temporary)

    def drop(self, name: str, kind: type, *, if_exists: bool = False) -> bool:
        obj = self.find(name)
        if not isinstance(obj, kind):
            if if_exists:
                return False
            raise self._unknown(name, "table" if kind is TableDef else "view", kind)
        key = name.lower()
        del self.objects[key]
        if key in self.temporary:
            self.temporary.discard(key)
        elif self.directory is not None:
            self._path(obj).unlink(missing_ok=True)
        return True

    # internals -----------------------------------------------------------------------------------------------

    def _put(self, obj: TableDef | ViewDef, temporary: bool) -> None:
        key = obj.name.lower()
        self.objects[key] = obj
        if temporary:
            self.temporary.add(key)
            return
        self.temporary.discard(key)
        if self.directory is not None:
            self._write(self._path(obj), obj.to_dict())

    def _path(self, obj: TableDef | ViewDef) -> Path:
        kind = "table" if isinstance(obj, TableDef) else "view"
        assert self.directory is not None
        safe = "".join(c if c.isalnum() or c in "-_" else f"%{ord(c):02x}" for c in obj.name.lower())
        return self.directory / f"{kind}s" / f"{safe}.json"

    @staticmethod
    def _write(path: Path, data: dict) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
        os.replace(tmp, path)

    def _unknown(self, name: str, kind: str, model: type) -> CatalogError:
        hint = suggest(name, self.names(model))
        return CatalogError(f"unknown {kind} '{name}'", hint=hint or f"SHOW {kind.upper()}S lists them")
