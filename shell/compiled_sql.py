"""Use the compiled SQL front end when one was built for exactly these sources.

Why it exists: sqlglot's parser and our grammar are pure Python, about 1.8 s for a 1 MB script
(0.7-0.95 s compiled: docs/benchmarks.md, "SQL front end"). `make compile-sql` (scripts/compile-sql)
compiles sqlglot and the front end's hot modules with mypyc into .build/compiled-sql/lib, with a
manifest of the sources it compiled. This module, run from shell/__init__.py before anything
imports sqlglot, puts that build first on the import path only if every source it was built from
is unchanged: a stale build would run old grammar code, so it is ignored and the pure-Python
modules are used. Nothing else changes: the compiled
modules are the same source, so they give the same trees, statements and errors.

STREAMSHELL_COMPILED_SQL: "auto" (default, and any other value: use a fresh build, else pure Python),
"off" (always pure Python), "require" (fail at import when no fresh build can be used: for testing
the build itself, `make test-compiled-sql`).
STREAMSHELL_COMPILED_SQL_DIR: where the build is (default .build/compiled-sql/lib in the repository).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent
DEFAULT_DIR = PACKAGE_ROOT.parent / ".build" / "compiled-sql" / "lib"
MANIFEST = "manifest.json"
# The sources a build depends on: the front end and the error types it raises.
SOURCE_GLOBS = ("sql/*.py", "errors.py")

# Set by activate(): the build's directory when it is in use, else None; and why not, when not.
active_dir: Path | None = None
reason = "not checked"


class CompiledSqlUnavailable(RuntimeError):
    """STREAMSHELL_COMPILED_SQL=require and no fresh compiled build could be used."""


def source_digests(root: Path = PACKAGE_ROOT) -> dict[str, str]:
    """sha256 of every source a build depends on, by path relative to the package."""
    digests = {}
    for pattern in SOURCE_GLOBS:
        for path in sorted(root.glob(pattern)):
            digests[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def _why_not(build: Path) -> str | None:
    """None when the build at `build` can be used in this process, else the reason it cannot."""
    manifest_path = build / MANIFEST
    if not manifest_path.is_file():
        return f"no compiled build in {build} (make compile-sql builds one)"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as error:
        return f"unreadable {manifest_path}: {error}"
    if manifest.get("cache_tag") != sys.implementation.cache_tag:
        return f"built for {manifest.get('cache_tag')}, this is {sys.implementation.cache_tag}"
    if "sqlglot" in sys.modules or "shell.sql" in sys.modules:
        return "sqlglot or shell.sql was imported before the build could be put first"
    if manifest.get("sources") != source_digests():
        return "the SQL front end's sources changed since the build (make compile-sql rebuilds it)"
    return None


def activate() -> Path | None:
    """Put a fresh compiled build first on the import path; return its directory, or None."""
    global active_dir, reason
    mode = os.environ.get("STREAMSHELL_COMPILED_SQL", "auto").strip().lower()
    if mode == "off":
        reason = "STREAMSHELL_COMPILED_SQL=off"
        return None
    build = Path(os.environ.get("STREAMSHELL_COMPILED_SQL_DIR") or DEFAULT_DIR)
    why_not = _why_not(build)
    if why_not is not None:
        reason = why_not
        if mode == "require":
            raise CompiledSqlUnavailable(f"STREAMSHELL_COMPILED_SQL=require: {why_not}")
        return None
    sys.path.insert(0, str(build))
    active_dir, reason = build, "in use"
    return build


def sql_package_dirs() -> list[str]:
    """Directories shell.sql's submodules are found in: the build's first when it is in use."""
    return [str(active_dir / "shell" / "sql")] if active_dir is not None else []


def describe() -> str:
    """One line for benchmarks: which front end this process runs."""
    if active_dir is None:
        return f"pure Python ({reason})"
    return f"compiled by mypyc ({active_dir})"
