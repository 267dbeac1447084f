"""The session's catalog of tables and views, persisted so they survive a restart of the shell.

Each definition is one JSON file under `<home>/catalog/`, written atomically (shell.files), so a crash never leaves
a half catalog and two shells on the same home see each other's tables after a restart. The catalog in memory
changes only once the disk has: a write that fails (a full disk) leaves both as they were. A file that cannot be
read is skipped with a warning naming it, and left as it is: the shell still starts, and CREATE refuses to
overwrite it. Temporary objects (`CREATE TEMPORARY TABLE`) live only in memory, as in Flink. Names are
case-insensitive and keep their spelling.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shell.catalog.model import Column, TableDef, ViewDef
from shell.errors import CatalogError
from shell.files import FileProblem, read_json, write_atomically
from shell.suggestions import suggest

KINDS = {"table": TableDef, "view": ViewDef}


@dataclass
class Catalog:
    """Tables and views by lower-cased name; `directory` None keeps everything in memory.

    `skipped` holds the files `open` could not read, with the one-line warning for each.
    """

    directory: Path | None = None
    objects: dict[str, TableDef | ViewDef] = field(default_factory=dict)
    temporary: set[str] = field(default_factory=set)
    skipped: dict[Path, str] = field(default_factory=dict)

    @classmethod
    def open(cls, directory: Path | None) -> "Catalog":
        catalog = cls(directory)
        if directory is None:
            return catalog
        for kind, model in KINDS.items():
            folder = directory / f"{kind}s"
            for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                try:
                    obj = _load(path, model)
                except FileProblem as problem:
                    catalog.skipped[path] = f"skipped catalog file {problem} (left as it is)"
                    continue
                catalog.objects[obj.name.lower()] = obj
        return catalog

    @classmethod
    def from_snapshot(cls, snapshot: list[dict[str, Any]]) -> "Catalog":
        """An in-memory catalog holding the definitions `snapshot` gives (a job's record: what it was planned with)."""
        catalog = cls(None)
        for entry in snapshot:
            model = KINDS[entry["kind"]]
            obj = model.from_dict(entry["definition"])
            catalog.objects[obj.name.lower()] = obj
        return catalog

    def snapshot(self) -> list[dict[str, Any]]:
        """Every definition, temporary ones included, as a job's record keeps them (see `from_snapshot`)."""
        return [{"kind": _kind(obj), "definition": obj.to_dict()} for obj in self.objects.values()]

    @property
    def warnings(self) -> list[str]:
        """One line per catalog file that was skipped: which file, what is wrong, what to do."""
        return list(self.skipped.values())

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
        """Register a definition; False if it existed and `if_not_exists` was given or it is the same definition
        (so a script can be run again, as Flink's in-memory catalog starts fresh each time); a different definition
        of an existing name is an error that says what differs."""
        key = obj.name.lower()
        if key in self.objects:
            stored = self.objects[key]
            differences = definition_differences(stored, obj, temporary, key in self.temporary)
            if if_not_exists or not differences:  # the same definition again (a script run twice): nothing to do
                return False
            kind = "table" if isinstance(stored, TableDef) else "view"
            raise CatalogError(
                f"{kind} '{obj.name}' already exists with another definition: {'; '.join(differences)}",
                hint=f"DROP {kind.upper()} {obj.name} first to replace it, or CREATE ... IF NOT EXISTS to keep it",
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
        if key not in self.temporary and self.directory is not None:
            path = self._path(obj)
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise CatalogError(f"cannot remove {path}: {exc.strerror or exc}; nothing was dropped") from None
        del self.objects[key]
        self.temporary.discard(key)
        return True

    # internals -----------------------------------------------------------------------------------------------

    def _put(self, obj: TableDef | ViewDef, temporary: bool) -> None:
        """Keep `obj`: on disk first (unless temporary), then in memory, so a failed write changes nothing."""
        key = obj.name.lower()
        if not temporary and self.directory is not None:
            path = self._path(obj)
            if path in self.skipped:
                raise CatalogError(
                    f"cannot save {_kind(obj)} '{obj.name}': {path} could not be read when the shell started; "
                    "fix the file or move it away first"
                )
            try:
                write_atomically(path, json.dumps(obj.to_dict(), indent=2, sort_keys=True))
            except OSError as exc:
                raise CatalogError(
                    f"cannot save {_kind(obj)} '{obj.name}' to {path}: {exc.strerror or exc}; the catalog is unchanged"
                ) from None
        self.objects[key] = obj
        if temporary:
            self.temporary.add(key)
        else:
            self.temporary.discard(key)

    def _path(self, obj: TableDef | ViewDef) -> Path:
        assert self.directory is not None
        return self.directory / f"{_kind(obj)}s" / f"{file_name(obj.name)}.json"

    def _unknown(self, name: str, kind: str, model: type) -> CatalogError:
        hint = suggest(name, self.names(model))
        return CatalogError(f"unknown {kind} '{name}'", hint=hint or f"SHOW {kind.upper()}S lists them")


def file_name(name: str) -> str:
    """A catalog name as a file name: lower-cased, characters other than letters, digits, '-' and '_' escaped."""
    return "".join(c if c.isalnum() or c in "-_" else f"%{ord(c):02x}" for c in name.lower())


def _kind(obj: TableDef | ViewDef) -> str:
    return "table" if isinstance(obj, TableDef) else "view"


def _load(path: Path, model: type) -> TableDef | ViewDef:
    """The definition in one catalog file; FileProblem when it cannot be read or is not a definition."""
    data = read_json(path)
    problem = _shape_problem(data, model)
    if problem is None:
        try:
            return model.from_dict(data)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            problem = f"not a {model.__name__.removesuffix('Def').lower()} definition ({type(exc).__name__})"
    raise FileProblem(path, problem, "fix the file or move it away")


def _shape_problem(data: Any, model: type) -> str | None:
    """What is wrong with the JSON of a definition (the types the rest of the shell relies on), or None."""
    if not isinstance(data, dict):
        return f"expected a JSON object, found {type(data).__name__}"
    expected: dict[str, tuple[type, ...]] = {"name": (str,), "comment": (str, type(None))}
    if model is TableDef:
        expected.update(columns=(list,), options=(dict,), primary_key=(list,), partitioned_by=(list,),
                        watermark=(dict, type(None)), like=(dict, type(None)))  # fmt: skip
    else:
        expected.update(query_sql=(str,), columns=(list, type(None)))
    required = ("name",) if model is TableDef else ("name", "query_sql")
    for key in required:
        if key not in data:
            return f"'{key}' is missing"
    for key, types in expected.items():
        if key in data and not isinstance(data[key], types):
            return f"'{key}' is {_json_type(type(data[key]))}, expected {' or '.join(map(_json_type, types))}"
    if not data["name"].strip():
        return "'name' is empty"
    if model is TableDef:
        if any(not isinstance(c, dict) or not isinstance(c.get("name"), str) for c in data.get("columns", [])):
            return "a column is not an object with a 'name'"
        if any(not isinstance(v, str) for v in data.get("options", {}).values()):
            return "an option's value is not a string"
        if any(not isinstance(k, str) for k in (*data.get("primary_key", []), *data.get("partitioned_by", []))):
            return "a key column is not a string"
    elif any(not isinstance(c, str) for c in data.get("columns") or []):
        return "a column name is not a string"
    return None


def _json_type(python_type: type) -> str:
    names = {str: "a string", list: "a list", dict: "an object", type(None): "null", bool: "true or false"}
    return names.get(python_type, "a number")


def column_differences(stored: list[Column], new: list[Column]) -> list[str]:
    """What differs between two column lists, one phrase per column (its types named: `column 'v' is stored as INT,
    not STRING`), or their order when only that differs."""
    before = {c.name.lower(): c for c in stored}
    after = {c.name.lower(): c for c in new}
    found = []
    for column in new:
        old = before.get(column.name.lower())
        if old is None:
            found.append(f"column '{column.name}' is new")
        elif old.data_type != column.data_type and old.data_type is not None and column.data_type is not None:
            found.append(f"column '{column.name}' is stored as {old.data_type}, not {column.data_type}")
        elif old.to_dict() != column.to_dict():
            found.append(f"column '{column.name}' differs")
    found += [f"column '{c.name}' is missing" for c in stored if c.name.lower() not in after]
    if not found:
        found.append(f"the columns' order ({', '.join(c.name for c in stored)} stored)")
    return found


def definition_differences(stored: TableDef | ViewDef, new: TableDef | ViewDef, new_temporary: bool,
                           stored_temporary: bool) -> list[str]:
    """What differs between a stored definition and a new one of the same name, one phrase each (none: equal).
    Option values are named, not shown: they may be secrets."""
    if type(stored) is not type(new):
        return [f"it is a {_kind(stored)}"]
    found = []
    if stored_temporary != new_temporary:
        found.append("the stored one is " + ("TEMPORARY" if stored_temporary else "not TEMPORARY"))
    old, now = stored.to_dict(), new.to_dict()
    old.pop("name"), now.pop("name")
    if isinstance(new, TableDef):
        before, after = old.pop("options"), now.pop("options")
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        found += [f"option '{k}' " + ("is new" if k not in before else "is missing" if k not in after else "differs")
                  for k in changed]
        if old.pop("columns") != now.pop("columns"):
            found += column_differences(stored.columns, new.columns)
    found += [f"{part.replace('_', ' ')} differs" for part in sorted(old) if old[part] != now.get(part)]
    return found
