"""What a SELECT says beside its rows: a micro-batch shown in part (the per-batch row cap) and bad records that are
no longer kept. On the status line in table mode; one `[WARNING]` line on stderr, after that batch's rows, in the
printers (stdout keeps only rows)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from shell.config import SETTINGS, Settings
from shell.engine.path_parts import SHOWN_ROWS, shown_note
from shell.errors import OptionError
from shell.render.changelog_view import ChangelogView
from shell.render.live import LiveTableView
from shell.render.materialize import MaterializingStream, ResultTable
from shell.render.printers import PRINTERS, PrinterOptions
from shell.results import Change, ChangeStream

pytestmark = pytest.mark.unit

CUT = "showing 2 of 5 rows of batch 7 (sql-client.display.max-rows-per-batch = 2)"


def test_the_note_says_how_many_rows_of_which_batch_are_shown():
    assert shown_note(2, 5, 7, 2) == (SHOWN_ROWS, CUT)
    assert shown_note(5, 5, 0, 10) is None, "a batch shown whole says nothing"
    assert shown_note(2, None, 3, 2) == (SHOWN_ROWS, "showing the first 2 rows of batch 3 (sql-client.display.max-rows-per-batch = 2)")


def test_the_cap_is_a_setting_with_a_default_and_checked_values():
    assert SETTINGS["sql-client.display.max-rows-per-batch"].default == "10000"
    settings = Settings()
    settings.set("sql-client.display.max-rows-per-batch", "50")
    assert settings.get("sql-client.display.max-rows-per-batch") == "50"
    with pytest.raises(OptionError, match="must be a positive integer, got '0'"):
        settings.set("sql-client.display.max-rows-per-batch", "0")


def noted_stream() -> ChangeStream:
    stream = ChangeStream(columns=["id"], types=["bigint"])
    stream.publish([Change("+I", (1,)), Change("+I", (2,))], (SHOWN_ROWS, CUT))
    stream.note("dead-letters:t", "bad records of table t are not kept: OSError: disk full")
    stream.publish([Change("+I", (3,))])
    stream.finish()
    return stream


@pytest.mark.parametrize("mode", ["tableau", "changelog", "json"])
def test_printers_write_each_note_once_on_stderr(mode):
    out, err = io.StringIO(), io.StringIO()
    PRINTERS[mode](out, err, PrinterOptions()).changes(noted_stream())
    assert err.getvalue() == f"[WARNING] {CUT}\n[WARNING] bad records of table t are not kept: OSError: disk full\n"
    assert "WARNING" not in out.getvalue() and "showing" not in out.getvalue()


def test_printers_write_the_notes_of_a_query_that_failed_too():
    stream = ChangeStream(columns=["id"])
    stream.publish([Change("+I", (1,))], (SHOWN_ROWS, CUT))
    stream.finish(RuntimeError("the query failed"))
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(RuntimeError):
        PRINTERS["tableau"](out, err, PrinterOptions()).changes(stream)
    assert err.getvalue() == f"[WARNING] {CUT}\n"


def test_the_live_table_shows_the_latest_note_of_each_kind_on_its_status_line():
    stream = noted_stream()
    stream.publish([Change("+I", (4,))], (SHOWN_ROWS, CUT.replace("batch 7", "batch 8")))
    console = Console(file=io.StringIO(), width=400, force_terminal=True, height=30)
    table = ResultTable(["id"])
    view = LiveTableView(console, table)
    view.changes(MaterializingStream(stream, table))
    status = view.render("finished").renderables[-1].plain
    assert "showing 2 of 5 rows of batch 8" in status and "batch 7" not in status
    assert "bad records of table t are not kept: OSError: disk full" in status


def test_the_terminal_changelog_view_prints_the_notes_after_the_rows():
    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    ChangelogView(console).changes(noted_stream())
    lines = console.file.getvalue().splitlines()
    assert lines[3:5] == [CUT, "bad records of table t are not kept: OSError: disk full"], lines  # after two rows
    assert lines[-1] == "Received a total of 3 changes"
