"""README.md's first screen (its first 45 lines) is a new user's first ten minutes: what the shell is, the two
set-up commands, the line that starts the shell (which `make setup` prints last), a first live query on
generated data, one on a Kafka topic with the command that starts the broker, and where to go next. Development
material (timings, CI, fuzzing, versions) lives in docs/development.md, which the first screen does not name.
tests/e2e/test_readme_quickstart.py runs the blocks themselves."""

from __future__ import annotations

import re

import pytest

from shell.sql import statements as st
from shell.sql.parse import parse_script
from tests import readme

pytestmark = pytest.mark.unit


def test_the_quick_start_blocks_are_on_the_first_screen():
    found = readme.blocks()
    assert {"shell", "datagen", "kafka"} <= set(found)
    for name, (line, _, body) in found.items():
        last = line + 1 + body.count("\n")  # the marker, the fence, the body; then the closing fence
        assert last + 1 <= readme.FIRST_SCREEN, f"the {name} block ends at line {last + 1}, below the first screen"


def test_the_first_screen_has_the_two_set_up_commands_and_where_to_go_next():
    screen = readme.first_screen()
    assert re.search(r"^make setup\b", screen, re.M) and re.search(r"^make test\b", screen, re.M)
    assert len(re.findall(r"\]\(docs/[\w/-]+\.md\)", screen)) >= 3, "link the docs a new user reads next"
    assert "development" not in screen.lower(), "the first screen is for users; development material goes further down"


def test_the_shell_starts_with_a_line_of_its_own_that_make_setup_prints_last():
    (start,) = readme.block("shell").splitlines()
    assert start == ".venv/bin/streamshell", "a launcher that works as written after make setup"
    makefile = (readme.ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^setup:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.M).group(1).splitlines()
    assert recipe[-1].strip() == f'@echo "{start}"'


def test_the_first_query_is_bounded_and_paced_so_it_changes_live_and_ends():
    statements = parse_script(readme.block("datagen"))
    create = next(s for s in statements if isinstance(s, st.CreateTable))
    assert create.table.options["connector"] == "datagen"
    assert {"number-of-rows", "rows-per-second"} <= set(create.table.options)
    assert int(create.table.options["number-of-rows"]) > int(create.table.options["rows-per-second"]), "one batch"
    assert isinstance(statements[-1], st.Select)


def test_the_topic_query_names_the_command_that_starts_its_broker():
    statements = parse_script(readme.block("kafka"))
    assert any(isinstance(s, st.CreateTable) and s.table.options["connector"] == "kafka" for s in statements)
    assert "scripts/services start kafka" in readme.code_spans(readme.paragraph_before("kafka"))
    assert isinstance(statements[-1], st.Select)
    assert any(c.startswith(".venv/bin/streamshell -e ") for c in readme.code_spans(readme.paragraph_after("kafka")))
