"""The README's quick start as the tests read it: the fenced blocks under its `<!-- quickstart:NAME -->` markers.

Why it exists: the quick start is what a new user copies first, so the tests run those blocks verbatim, read from
README.md each time (tests/e2e/test_readme_quickstart.py), and check where they stand (tests/unit/
test_readme_first_screen.py): an edit to the README is what gets tested, not a copy of it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FIRST_SCREEN = 45  # lines: what a README shows before anyone scrolls
BLOCK = re.compile(r"^<!-- quickstart:(?P<name>[\w-]+) -->\n```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)


def text() -> str:
    return README.read_text(encoding="utf-8")


def blocks() -> dict[str, tuple[int, str, str]]:
    """name -> (line number of the marker, the block's language, the block's text)."""
    readme = text()
    return {
        m["name"]: (readme[: m.start()].count("\n") + 1, m["lang"], m["body"])
        for m in BLOCK.finditer(readme)
    }


def block(name: str) -> str:
    found = blocks()
    assert name in found, f"README.md has no block under <!-- quickstart:{name} -->"
    return found[name][2]


def first_screen() -> str:
    return "\n".join(text().splitlines()[:FIRST_SCREEN])


def paragraph_after(name: str) -> str:
    """The prose between a quick-start block and the next heading or block (what it tells the user to do next)."""
    readme = text()
    match = next(m for m in BLOCK.finditer(readme) if m["name"] == name)
    rest = readme[match.end():]
    end = min((i for i in (rest.find("\n```"), rest.find("\n#"), rest.find("\n<!--")) if i >= 0), default=len(rest))
    return rest[:end]


def paragraph_before(name: str) -> str:
    """The prose just above a quick-start block's marker."""
    readme = text()
    match = next(m for m in BLOCK.finditer(readme) if m["name"] == name)
    return readme[: match.start()].rstrip("\n").rsplit("\n\n", 1)[-1]


def code_spans(prose: str) -> list[str]:
    return re.findall(r"`([^`]+)`", prose)
