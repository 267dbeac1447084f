"""Every ```sql block in README.md and docs/ parses: the SQL users copy from the docs is SQL the shell accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```sql\n(.*?)```", re.S)


def sql_blocks() -> list[tuple[str, str]]:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            found.append((f"{path.relative_to(ROOT)}:{text[:match.start()].count(chr(10)) + 1}", match.group(1)))
    return found


def test_the_docs_have_sql_blocks() -> None:
    assert len(sql_blocks()) >= 20  # the walk finds them: a renamed folder or fence would pass the test below vacuously


@pytest.mark.parametrize("where, sql", sql_blocks(), ids=[w for w, _ in sql_blocks()])
def test_every_sql_block_in_the_docs_parses(where: str, sql: str) -> None:
    assert parse_script(sql), where
