"""What `CREATE FUNCTION` records: a name bound to a Python target, kept as JSON in the catalog and in job records.

Why it exists: the catalog folder, a job's record and the session's registry all hold the same few facts about a
function; loading the target (importing user code) happens later and elsewhere (shell/functions/loading.py), so a
definition can be stored, listed and copied into a job without importing anything. It sits with the catalog, below
the functions package, because the catalog's function store (functions.py) keeps it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

PYTHON = "PYTHON"


@dataclass(frozen=True)
class FunctionDef:
    """`name` keeps the user's spelling (lookups ignore case); `target` is 'package.module.attribute'."""

    name: str
    target: str
    language: str = PYTHON
    temporary: bool = False
    system: bool = False  # TEMPORARY SYSTEM: shadows a built-in function of the same name, as in Flink

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> "FunctionDef":
        """A definition from its JSON form; ValueError naming what is wrong when it is not one."""
        if not isinstance(data, dict):
            raise ValueError("not a function definition (not a JSON object)")
        for key in ("name", "target"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise ValueError(f"not a function definition ('{key}' is missing or not a string)")
        language = data.get("language", PYTHON)
        if language != PYTHON:
            raise ValueError(f"language {language!r} is not PYTHON")
        return cls(data["name"], data["target"], PYTHON, bool(data.get("temporary")), bool(data.get("system")))
