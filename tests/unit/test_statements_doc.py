"""docs/reference/statements.md covers every statement the shell accepts, and its examples are statements it accepts.

The page is written by hand; these tests tie it to the code: each example is parsed, every kind of statement the
parser produces (a class of shell/sql/statements.py, every SHOW kind) has an example, every line of HELP is a
heading, a section says "Not run yet" exactly when the session has no handler for its statements, and the
examples' CREATE TABLE and SET are valid against the connector and setting declarations.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shell.commands import COMMANDS
from shell.config import check_setting
from shell.connectors.registry import validate_table
from shell.session import Session, SessionOptions
from shell.sql import statements as st
from shell.sql.grammar_catalog import SCOPED_SHOW
from shell.sql.grammar_shell import SHOW_KINDS
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "statements.md"
TEXT = PAGE.read_text(encoding="utf-8")
NOT_RUN = "**Not run yet.**"


def sections() -> dict[str, str]:
    """`### heading` -> the text under it, up to the next heading."""
    parts = re.split(r"^### (.+)$", TEXT, flags=re.M)
    return {heading: re.split(r"^## ", body, flags=re.M)[0] for heading, body in zip(parts[1::2], parts[2::2])}


def examples(text: str) -> list[st.Statement]:
    return [s for block in re.findall(r"```sql\n(.*?)```", text, flags=re.S) for s in parse_script(block)]


def kinds_of(statement: st.Statement) -> set[type]:
    """The statement's class and those of the statements inside it (EXPLAIN's, a statement set's INSERTs)."""
    found = {type(statement)}
    if isinstance(statement, st.Explain):
        found |= kinds_of(statement.statement)
    if isinstance(statement, st.StatementSet):
        found |= {type(i) for i in statement.inserts}
    return found


def statement_classes() -> set[type]:
    classes, pending = set(), [st.Statement]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub.__module__ == st.__name__ and sub not in classes:
                classes.add(sub)
                pending.append(sub)
    return classes


def test_every_section_has_a_meaning_and_an_example():
    assert sections(), "no ### sections"
    for heading, body in sections().items():
        prose = [p for p in body.strip().split("\n\n") if p.strip() and not p.startswith("```")]
        assert prose, f"{heading}: say in a line what the statement does"
        assert examples(body), f"{heading}: give an example"


def test_every_statement_kind_the_shell_accepts_has_an_example():
    shown: set[type] = set()
    for statement in examples(TEXT):
        shown |= kinds_of(statement)
    missing = statement_classes() - shown
    assert not missing, f"statements.md has no example of {sorted(c.__name__ for c in missing)}"


def test_every_show_kind_has_an_example():
    shown = {s.kind.upper() for s in examples(TEXT) if isinstance(s, st.Show)}
    assert {*SHOW_KINDS, *SCOPED_SHOW, "CURRENT CATALOG", "CURRENT DATABASE"} <= shown


@pytest.mark.parametrize("command", COMMANDS, ids=[c.syntax for c in COMMANDS])
def test_every_help_line_is_a_section(command):
    assert f"`{command.syntax}`" in sections(), f"statements.md has no section '### `{command.syntax}`'"


def test_not_run_yet_says_exactly_which_statements_the_session_refuses(tmp_path):
    handled = set(Session(SessionOptions(home=tmp_path)).handlers)
    for heading, body in sections().items():
        refused = {type(s) for s in examples(body)} - handled
        if refused:
            assert NOT_RUN in body, f"{heading}: the session does not run {sorted(c.__name__ for c in refused)}"
        else:
            assert NOT_RUN not in body, f"{heading}: the session runs it now; take '{NOT_RUN}' out"


def test_the_examples_tables_and_settings_are_valid():
    for statement in examples(TEXT):
        if isinstance(statement, st.CreateTable) and statement.table.like is None and statement.query is None:
            validate_table(statement.table)
        if isinstance(statement, st.Set) and statement.key is not None:
            check_setting(statement.key, statement.value or "")
