"""An option of a connector, a format or a catalog: its key (or key pattern), type, default and description.

Why it exists: connectors, formats and catalog types all declare their WITH options the same way, and the
formats and catalogs sit below the connectors, so the declaration lives here, below all three.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OptionSpec:
    """One option of a connector.

    `key` is exact (`topic`), or a pattern whose `*` matches any suffix (`properties.*`) and whose `#` matches a
    column name of the table (`fields.#.kind`).
    """

    key: str
    type: str = "string"  # string | int | bool | enum | duration
    required: bool = False
    default: str | None = None
    allowed: tuple[str, ...] = ()
    secret: bool = False
    description: str = ""

    def matches(self, key: str, columns: set[str]) -> bool:
        pattern = self.key.split(".")
        parts = key.split(".")
        for i, piece in enumerate(pattern):
            if piece == "*":
                return len(parts) > i
            if i >= len(parts):
                return False
            if piece == "#":
                if parts[i].lower() not in columns:
                    return False
            elif piece != parts[i]:
                return False
        return len(parts) == len(pattern)
