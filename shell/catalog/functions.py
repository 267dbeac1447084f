"""Functions created without TEMPORARY, kept under `<home>/catalog/functions/` so they survive a restart.

Why it exists: a persistent `CREATE FUNCTION f AS 'module.name' LANGUAGE PYTHON` must be there when the shell
starts again, as a persistent table is. Each function is one JSON file (its FunctionDef), written atomically
(shell.files): a crash never leaves half a definition, and a write the disk refuses changes nothing. A file that
cannot be read is skipped with a one-line warning naming it, and left as it is. Only the definition is stored;
the Python module it names is imported when a query uses the function (shell/functions/loading.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from shell.catalog.function_def import FunctionDef
from shell.files import FileProblem, read_json, write_atomically

FOLDER = "functions"
ACTION = "fix or remove the file (DROP FUNCTION removes a function)"


class FunctionStore:
    """The persistent functions of one home; `directory` is `<home>/catalog`."""

    def __init__(self, directory: Path):
        self.folder = directory / FOLDER
        self.warnings: list[str] = []

    def load(self) -> dict[str, FunctionDef]:
        """Every readable definition by lower-cased name; a warning for each file that is not one."""
        found: dict[str, FunctionDef] = {}
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                data = read_json(path)
                definition = FunctionDef.from_dict(data)
            except FileProblem as problem:
                self.warnings.append(f"skipped catalog file {problem} (left as it is)")
                continue
            except ValueError as exc:
                self.warnings.append(f"skipped catalog file {path}: {exc}; {ACTION} (left as it is)")
                continue
            found[definition.name.lower()] = FunctionDef(definition.name, definition.target, definition.language)
        return found

    def path(self, name: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_" else f"%{ord(c):02x}" for c in name.lower())
        return self.folder / f"{safe}.json"

    def save(self, definition: FunctionDef) -> None:
        """Write the definition atomically; OSError when the disk refuses it (then nothing changed)."""
        text = json.dumps(definition.to_dict(), indent=2) + "\n"
        write_atomically(self.path(definition.name), text)

    def remove(self, name: str) -> None:
        self.path(name).unlink(missing_ok=True)
