"""Reading demo files: steps in order, annotations attached to the statement above, errors with positions."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.errors import StreamshellError
from shell.render.materialize import ResultTable
from shell.repl.demo_script import (
    DEFAULT_WAIT_SECONDS,
    DemoError,
    ErrorLike,
    OutputContains,
    Pause,
    RowContains,
    RowCount,
    Run,
    Say,
    Succeeded,
    parse_condition,
    parse_demo,
)
from shell.results import Change
from shell.sql import statements as st

ROOT = Path(__file__).resolve().parents[2]

DEMO = """\
-- a plain comment
-- @say Hello, room
SHOW TABLES;
-- @expect rows>=0
-- @pause
SELECT 1 AS x;
-- @wait rows>=1 timeout 5 s
-- @expect row contains '1'
-- @expect no row contains 'zzz'
SELECT * FROM nope;
  -- @expect error 'unknown table'
"""


def test_steps_come_in_file_order_with_annotations_attached():
    steps = parse_demo(DEMO)
    kinds = [type(s).__name__ for s in steps]
    assert kinds == ["Say", "Run", "Pause", "Run", "Run"]
    say, show, pause, select, bad = steps
    assert isinstance(say, Say) and say.text == "Hello, room" and say.line == 2
    assert isinstance(pause, Pause)
    assert isinstance(show, Run) and isinstance(show.statement, st.Show)
    assert [e.condition for e in show.expects] == [RowCount(">=", 0)]
    assert isinstance(select, Run) and select.wait is not None
    assert select.wait.condition == RowCount(">=", 1) and select.wait.timeout_seconds == 5
    assert [e.condition for e in select.expects] == [RowContains("1"), RowContains("zzz", negated=True)]
    assert bad.expects_error and bad.expects[0].line == 11


def test_wait_timeout_forms_and_default():
    steps = parse_demo("SELECT 1;\n-- @wait rows>=2 timeout 2min\n")
    assert steps[0].wait.timeout_seconds == 120
    steps = parse_demo("SELECT 1;\n-- @wait row contains 'a'\n")
    assert steps[0].wait.timeout_seconds == DEFAULT_WAIT_SECONDS


@pytest.mark.parametrize(
    ("text", "condition"),
    [
        ("rows>=10", RowCount(">=", 10)),
        ("rows = 3", RowCount("=", 3)),
        ("rows<5", RowCount("<", 5)),
        ("row contains 'it''s'", RowContains("it's")),
        ("no row contains 'x'", RowContains("x", negated=True)),
        ("error", ErrorLike(None)),
        ("error 'unknown table'", ErrorLike("unknown table")),
        ("ok", Succeeded()),
        ("output contains 'created'", OutputContains("created")),
    ],
)
def test_conditions(text, condition):
    assert parse_condition(text) == condition


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-- @expect rows>=1\nSELECT 1;", "must follow the statement"),
        ("SHOW TABLES;\n-- @wait rows>=1", "must follow a SELECT"),
        ("SELECT 1;\n-- @expect rows maybe", "expected rows>=N"),
        ("SELECT 1;\n-- @wait error 'x'", "@wait takes"),
        ("SELECT 1;\n-- @shout hi", "known annotations"),
        ("SELECT 1;\n-- @wait rows>=1 timeout 3 fortnights", "unknown time unit"),
    ],
)
def test_bad_annotations_are_positioned_errors(text, message):
    with pytest.raises(DemoError) as caught:
        parse_demo(text)
    assert message in caught.value.message
    assert caught.value.has_position
    assert caught.value.render("demo.sql").startswith(f"demo.sql:{caught.value.line}:1: ")


def test_sql_errors_point_into_the_file():
    with pytest.raises(StreamshellError) as caught:
        parse_demo("SHOW TABLES;\n-- @say hi\nSELEC 1;\n")
    assert (caught.value.line, caught.value.col) == (3, 1)


def test_annotations_inside_a_statement_are_its_comments():
    steps = parse_demo("SELECT\n-- @say not narration\n1;\n")
    assert [type(s) for s in steps] == [Run]


def test_conditions_on_results():
    table = ResultTable(["a"])
    table.apply([Change("+I", ("customer-1",)), Change("+I", (None,))])
    assert RowCount(">=", 2).met(table) and not RowCount(">", 2).met(table)
    assert RowContains("customer-1").met(table) and RowContains("customer-2", negated=True).met(table)
    assert not RowCount(">=", 0).met(None)
    assert "got 2" in RowCount(">", 2).explain(table)


def test_the_walkthrough_reads():
    steps = parse_demo((ROOT / "examples" / "walkthrough.sql").read_text())
    runs = [s for s in steps if isinstance(s, Run)]
    assert len(runs) >= 8
    assert any(r.wait is not None for r in runs) and any(r.expects_error for r in runs)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples").glob("*.sql")))
def test_every_example_reads_as_a_demo_with_its_checks(name):
    """Every example parses, statements and annotations: the Pulsar walkthroughs are played by `make
    test-walkthroughs` (their pipelines' exact sink messages are checked in `make test` by tests/e2e/test_scenarios.py),
    so a statement or an annotation broken in one of them is caught here."""
    steps = parse_demo((ROOT / "examples" / name).read_text(encoding="utf-8"))
    assert any(isinstance(s, Run) for s in steps)
