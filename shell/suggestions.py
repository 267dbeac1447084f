"""'did you mean ...?': the closest of the known names to a misspelt one.

Why it exists: a typo should be answered with the word the user meant, whichever layer meets it (the parser for
keywords, the catalog for tables and databases, the connectors for options, the settings for keys), so the
comparison lives here, below all of them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate closest to `name` (compared case-insensitively), or None."""
    by_upper: dict[str, str] = {}
    for candidate in candidates:
        by_upper.setdefault(candidate.upper(), candidate)
    if not name or name.upper() in by_upper:
        return None
    match = difflib.get_close_matches(name.upper(), list(by_upper), n=1, cutoff=cutoff)
    return by_upper[match[0]] if match else None


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """'did you mean X?' for the closest candidate, or None when nothing is close."""
    match = closest(name, candidates)
    return f"did you mean {match}?" if match else None
