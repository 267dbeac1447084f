"""Table mode's keys: where each key sequence leaves the view (shell/render/navigation.py, as a table of cases),
how terminal bytes become key names (shell/render/keys.py), the late rows summed over a query's batches, and the
live view driven by typed keys: it draws only the rows on the screen, a paused view stays put while rows come, `q`
stops the query, and a result that ended without fitting stays to be read until `q`."""

from __future__ import annotations

import io
import re
import threading

import pytest
from rich.console import Console

from shell.render.keys import KeyReader, terminal_keys
from shell.render.live import LateRowTally, LiveTableView, ProgressPoller
from shell.render.materialize import MaterializingStream, ResultTable
from shell.render.navigation import Action, Frame, Navigation, find_row, row_matches
from shell.results import Change, ChangeStream, Progress

pytestmark = pytest.mark.unit

ROWS = [(i, f"name{i}") for i in range(100)]  # the result the cases move through: 100 rows, 10 on a screen
PAGE = 10
HINT = "100 rows (last 10 shown; PgUp pages back, / searches)"


def find(text: str, start: int, forward: bool) -> int | None:
    return find_row(ROWS, text, start, forward)


def typed(text: str) -> list[str]:
    return list(text)


def navigate(keys: list[str], rows: int = len(ROWS), page: int = PAGE, columns: int = 2, fields: int = 2):
    navigation = Navigation()
    actions = [navigation.press(key, Frame(rows, page, columns, fields), find) for key in keys]
    return navigation, actions


# keys -> (the rows shown, the selected row when paused (None: following), open, what the status line says)
CASES = {
    "at first it follows the newest rows": ([], (90, 100), None, False, HINT),
    "page up pauses a page back": (["pageup"], (80, 90), 80, False,
                                   "rows 81-90 of 100 · paused at row 81 · End follows"),
    "b is page up": (["b", "b"], (70, 80), 70, False, "rows 71-80 of 100 · paused at row 71 · End follows"),
    "page up stops at the first row": (["pageup"] * 20, (0, 10), 0, False,
                                       "rows 1-10 of 100 · paused at row 1 · End follows"),
    "home": (["home"], (0, 10), 0, False, "rows 1-10 of 100 · paused at row 1 · End follows"),
    "g is home": (["g"], (0, 10), 0, False, "rows 1-10 of 100 · paused at row 1 · End follows"),
    "page down": (["g", "pagedown"], (10, 20), 10, False, "rows 11-20 of 100 · paused at row 11 · End follows"),
    "space is page down": (["g", " "], (10, 20), 10, False, "rows 11-20 of 100 · paused at row 11 · End follows"),
    "page down stops at the last page, paused": (["g"] + ["pagedown"] * 20, (90, 100), 99, False,
                                                 "rows 91-100 of 100 · paused at row 100 · End follows"),
    "page down while following does nothing": (["pagedown"], (90, 100), None, False, HINT),
    "end follows again": (["g", "end"], (90, 100), None, False, HINT),
    "G follows again": (["b", "G"], (90, 100), None, False, HINT),
    "F follows again": (["b", "F"], (90, 100), None, False, HINT),
    "up pauses on the newest row": (["up"], (90, 100), 99, False, "rows 91-100 of 100 · paused at row 100 · End follows"),
    "k and k": (["k", "k"], (90, 100), 98, False, "rows 91-100 of 100 · paused at row 99 · End follows"),
    "down moves the selection": (["g", "j", "j"], (0, 10), 2, False, "rows 1-10 of 100 · paused at row 3 · End follows"),
    "down past the screen scrolls": (["g"] + ["down"] * 12, (3, 13), 12, False,
                                     "rows 4-13 of 100 · paused at row 13 · End follows"),
    "up past the screen scrolls": (["b"] + ["up"] * 3, (77, 87), 77, False,
                                   "rows 78-87 of 100 · paused at row 78 · End follows"),
    "o opens the newest row while following": (["o"], (90, 100), 99, True, "row 100 of 100 · Esc goes back"),
    "enter opens the selected row": (["g", "j", "enter"], (0, 10), 1, True, "row 2 of 100 · Esc goes back"),
    "down in an open row opens the next": (["g", "o", "down", "down"], (0, 10), 2, True, "row 3 of 100 · Esc goes back"),
    "esc closes the row": (["g", "o", "escape"], (0, 10), 0, False, "rows 1-10 of 100 · paused at row 1 · End follows"),
    "q closes the row, not the query": (["g", "o", "q"], (0, 10), 0, False,
                                        "rows 1-10 of 100 · paused at row 1 · End follows"),
    "a search finds the first match and shows it": (["/", *typed("name5"), "enter"], (5, 15), 5, False,
                                                    "rows 6-15 of 100 · paused at row 6 · End follows"),
    "n finds the next match": (["/", *typed("name5"), "enter", "n"], (50, 60), 50, False,
                               "rows 51-60 of 100 · paused at row 51 · End follows"),
    "N finds the one before": (["/", *typed("name5"), "enter", "n", "n", "N"], (50, 60), 50, False,
                               "rows 51-60 of 100 · paused at row 51 · End follows"),
    "a search in an open row opens the match": (["o", "/", *typed("name42"), "enter"], (42, 52), 42, True,
                                                "row 43 of 100 · Esc goes back"),
    "a search that finds nothing stays": (["/", *typed("zzz"), "enter"], (90, 100), None, False, HINT),
    "esc cancels a search": (["/", "x", "escape"], (90, 100), None, False, HINT),
    "q in a search is a letter": (["/", "q"], (90, 100), None, False, HINT),
    "an unknown key does nothing": (["x", "tab", "left"], (90, 100), None, False, HINT),
}


@pytest.mark.parametrize("keys, window, selected, opened, position", CASES.values(), ids=CASES.keys())
def test_keys_move_through_the_result(keys, window, selected, opened, position):
    navigation, _ = navigate(keys)
    assert navigation.window(len(ROWS), PAGE) == window
    assert navigation.follow == (selected is None)
    if selected is not None:
        assert navigation.selected == selected
    assert navigation.opened == opened
    assert navigation.position(len(ROWS), PAGE) == position


MESSAGES = {
    "found": (["/", *typed("name7"), "enter"], "row 8 shows 'name7'"),
    "wrapped": (["/", *typed("name99"), "enter", "n"], "row 100 shows 'name99' (search wrapped)"),
    "nothing found": (["/", *typed("zzz"), "enter"], "no row shows 'zzz'"),
    "n before any search": (["n"], "nothing searched yet: / searches"),
    "typing": (["/", *typed("ab")], "/ab▏ Enter searches, Esc cancels"),
    "backspace": (["/", *typed("ab"), "backspace"], "/a▏ Enter searches, Esc cancels"),
    "backspace past the slash leaves the search": (["/", "backspace"], ""),
    "the next key clears the message": (["/", *typed("zzz"), "enter", "g"], ""),
    "/ and Enter alone search again": (["/", *typed("name1"), "enter", "/", "enter"], "row 11 shows 'name1'"),
}


@pytest.mark.parametrize("keys, prompt", MESSAGES.values(), ids=MESSAGES.keys())
def test_the_status_line_says_what_a_search_did(keys, prompt):
    navigation, _ = navigate(keys)
    assert navigation.prompt() == prompt


def test_q_asks_to_stop_and_other_keys_say_whether_to_redraw():
    _, actions = navigate(["q"])
    assert actions == [Action.QUIT]
    _, actions = navigate(["x", "pageup", "/", "q"])
    assert actions == [Action.NOTHING, Action.REDRAW, Action.REDRAW, Action.REDRAW]


def test_an_open_row_pages_through_its_columns():
    navigation, _ = navigate(["o", "pagedown"], columns=30, fields=10)
    assert navigation.field_top == 10
    navigation, _ = navigate(["o", "pagedown", "pagedown", "pagedown"], columns=30, fields=10)
    assert navigation.field_top == 20, "the last page shows the last columns"
    navigation, _ = navigate(["o", "end", "pageup"], columns=30, fields=10)
    assert navigation.field_top == 10
    navigation, _ = navigate(["o", "end", "down"], columns=30, fields=10)
    assert navigation.field_top == 0, "the next row starts at its first column"


@pytest.mark.parametrize(
    "rows, page, position",
    [(0, 10, "0 rows"), (1, 10, "1 row"), (10, 10, "10 rows"), (11, 10, "11 rows (last 10 shown; PgUp pages back, / searches)")],
)
def test_a_result_that_fits_says_only_its_rows(rows, page, position):
    assert Navigation().position(rows, page) == position


def test_without_keys_there_is_no_hint():
    assert Navigation().position(100, 10, keys=False) == "100 rows (last 10 shown)"


def test_keys_in_an_empty_result_do_nothing():
    navigation, actions = navigate(["pageup", "home", "up", "o"], rows=0)
    assert actions == [Action.NOTHING] * 4 and navigation.follow and not navigation.opened


def test_a_paused_view_keeps_its_rows_when_the_cap_drops_the_oldest():
    navigation, _ = navigate(["g", "pagedown"] + ["pagedown"] * 4)  # rows 50-59
    navigation.rows_dropped(5)
    assert navigation.window(len(ROWS), PAGE) == (45, 55) and navigation.selected == 45
    following = Navigation()
    following.rows_dropped(5)
    assert following.window(100, PAGE) == (90, 100)


def test_a_paused_view_stays_inside_a_result_that_shrinks_or_a_screen_that_grows():
    navigation, _ = navigate(["pageup"])  # rows 80-89
    assert navigation.window(50, PAGE) == (40, 50) and navigation.selected == 49
    navigation, _ = navigate(["g", "j", "j", "j"])
    assert navigation.window(100, 2) == (2, 4), "a smaller screen keeps the selected row on it"


@pytest.mark.parametrize(
    "text, start, forward, found",
    [
        ("name1", 0, True, 1),
        ("name1", 2, True, 10),
        ("NAME1", 2, True, 10),  # case is ignored
        ("name1", 20, True, 1),  # wraps around the end
        ("name1", 20, False, 19),
        ("name1", 0, False, 19),  # wraps around the start
        ("7", 0, True, 7),  # a number cell matches as it is shown
        ("nope", 0, True, None),
        ("", 0, True, None),
    ],
)
def test_find_row(text, start, forward, found):
    assert find_row(ROWS, text, start, forward) == found


def test_a_row_matches_as_the_tables_show_it():
    assert row_matches((None, True), "<null>") and row_matches((None, True), "TRUE")
    assert not row_matches((1.5,), "2")
    assert find_row([], "x", 0) is None


# terminal bytes -> keys ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, keys",
    [
        ("\x1b[5~", ["pageup"]),
        ("\x1b[6~", ["pagedown"]),
        ("\x1b[H", ["home"]),
        ("\x1b[1~", ["home"]),
        ("\x1bOH", ["home"]),
        ("\x1b[F", ["end"]),
        ("\x1b[4~", ["end"]),
        ("\x1b[A\x1b[B", ["up", "down"]),
        ("/ab\r", ["/", "a", "b", "enter"]),
        ("\x7f\x08", ["backspace", "backspace"]),
        ("\x02\x06", ["pageup", "pagedown"]),  # Ctrl-B, Ctrl-F
        ("q G F", ["q", " ", "G", " ", "F"]),
        ("\t\x1b[D", []),  # Tab, Left: nothing here
    ],
)
def test_terminal_bytes_become_key_names(data, keys):
    assert KeyReader(-1).feed(data) == keys


def test_a_lone_escape_is_the_escape_key_once_nothing_follows_it():
    reader = KeyReader(-1)
    assert reader.feed("\x1b") == []  # it may begin a sequence
    assert reader.feed("") == ["escape"]
    assert reader.feed("\x1b[5") == [] and reader.feed("~") == ["pageup"], "a sequence cut in two"


def test_keys_are_read_only_from_a_terminal():
    with terminal_keys(enabled=False) as keys:
        assert keys is None
    with terminal_keys() as keys:  # pytest's stdin is not a terminal
        assert keys is None


# late rows over the whole query -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reports, total",
    [
        ([], 0),
        ([(0, 2)], 2),
        ([(0, 2), (0, 2), (1, 3)], 5),  # the same batch read twice counts once
        ([(0, 2), (1, 3), (2, 0), (2, 0)], 5),
        ([(-1, 0), (4, 1), (3, 7), (5, 1)], 2),  # no batch yet; an older report after a newer one is not counted
    ],
)
def test_late_rows_are_summed_over_batches_once_each(reports, total):
    tally = LateRowTally()
    for batch_id, late in reports:
        tally.add(Progress(batch_id=batch_id, late_rows=late))
    assert tally.total == total


def test_the_poller_counts_each_batch_it_reads_once():
    reports = [Progress(batch_id=0, late_rows=4), Progress(batch_id=0, late_rows=4), Progress(batch_id=1, late_rows=0)]
    calls = []
    read_all = threading.Event()

    def progress() -> Progress:
        calls.append(threading.current_thread().name)
        if len(calls) >= len(reports):
            read_all.set()
        return reports[min(len(calls), len(reports)) - 1]

    poller = ProgressPoller(ChangeStream(["v"], progress_callback=progress), every=0.01).start()
    assert read_all.wait(30)
    poller.stop()
    assert poller.late_rows == 4 and poller.latest.batch_id == 1
    assert "MainThread" not in calls


def test_late_rows_of_the_whole_query_on_the_status_line():
    view = LiveTableView(terminal(), ResultTable(["v"]))
    view.progress, view.late_rows = Progress(batch_id=7, late_rows=3), 12
    assert "late rows 12 (3 in the last batch)" in view.render().renderables[-1].plain
    view.progress, view.late_rows = Progress(batch_id=8, late_rows=0), 0
    assert "late rows" not in view.render().renderables[-1].plain


# the live view with keys --------------------------------------------------------------------------------------


def terminal(height: int = 20, width: int = 100) -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=width, height=height, color_system=None)


class ScriptedKeys:
    """A KeyReader typing `steps` (one list of keys per read), then `q` for good."""

    def __init__(self, steps: list[list[str]]):
        self.steps = list(steps)
        self.reads = 0

    def read(self, wait: float = 0.0) -> list[str]:
        self.reads += 1
        return self.steps.pop(0) if self.steps else ["q"]


def numbered(count: int, key: bool = False) -> ResultTable:
    table = ResultTable(["n", "word"], key=["n"] if key else ())
    table.apply([Change("+I", (100_001 + i, f"w{i}")) for i in range(count)])
    return table


def plain(console: Console) -> str:
    return re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", console.file.getvalue())


def shown(view: LiveTableView) -> str:
    console = terminal(view.console.size.height, view.console.size.width)
    console.print(view.render())
    return console.file.getvalue()


def test_the_view_draws_only_the_rows_on_the_screen():
    table = numbered(10_000, key=True)

    def everything():  # noqa: ANN202
        raise AssertionError("a redraw must not copy every row")

    table.entries = table.rows = everything
    view = LiveTableView(terminal(), table)
    following = shown(view)
    assert "110000" in following and "100001" not in following
    view.press(["g"])
    paused = shown(view)
    assert "100001" in paused and "110000" not in paused and "rows 1-" in paused


@pytest.mark.parametrize("key", [False, True], ids=["append-only", "keyed"])
def test_a_table_gives_any_window_of_its_rows(key):
    table = numbered(50, key=key)
    assert [e.row[0] for e in table.window(0, 3)] == [100_001, 100_002, 100_003]
    assert [e.row[0] for e in table.window(47, 60)] == [100_048, 100_049, 100_050]
    assert [e.row[0] for e in table.window(20, 22)] == [100_021, 100_022]
    assert table.window(60, 70) == [] and table.window(5, 5) == []


def test_a_paused_view_stays_put_while_rows_come_and_end_follows_them():
    table = numbered(100)
    view = LiveTableView(terminal(), table)
    view.render()
    view.press(["g", "j"])
    table.apply([Change("+I", (200_000 + i, "new")) for i in range(50)])
    paused = shown(view)
    assert "100001" in paused and "200049" not in paused and "rows 1-" in paused and "of 150" in paused
    assert "paused at row 2" in paused
    view.press(["end"])
    following = shown(view)
    assert "200049" in following and "150 rows (last" in following


def test_a_search_shows_the_row_and_o_shows_every_column_of_it():
    table = ResultTable([f"column_{i}" for i in range(5)])
    table.apply([Change("+I", tuple(f"r{n}c{i}" for i in range(5))) for n in range(200)])
    view = LiveTableView(terminal(), table)
    view.render()
    view.press(["/", *typed("r42c3"), "enter"])
    found = shown(view)
    assert "r42c0" in found and "row 43 shows 'r42c3'" in found
    view.press(["o"])
    opened = shown(view)
    for i in range(5):
        assert f"column_{i}:" in opened and f"r42c{i}" in opened
    assert "row 43 of 200" in opened and "r41c0" not in opened
    view.press(["escape"])
    assert "rows 43-" in shown(view)


def test_an_open_row_with_more_columns_than_lines_pages_through_them():
    table = ResultTable([f"c{i:02d}" for i in range(40)])
    table.apply([Change("+I", tuple(range(40)))])
    view = LiveTableView(terminal(height=15), table)
    view.render()
    view.press(["o"])
    first = shown(view)
    assert "c00:" in first and "c39:" not in first and "columns 1-" in first
    view.press(["end"])
    last = shown(view)
    assert "c39:" in last and "c00:" not in last


def running_stream(rows: int) -> ChangeStream:
    stream = ChangeStream(["n", "word"], progress_callback=lambda: Progress(batch_id=1, late_rows=2))
    stream.publish([Change("+I", (100_001 + i, f"w{i}")) for i in range(rows)])
    return stream  # never finished: only `q` ends the view


def test_q_stops_a_running_query():
    table = ResultTable(["n", "word"])
    console = terminal()
    view = LiveTableView(console, table)
    keys = ScriptedKeys([["pageup"], [], ["q"]])
    view.changes(MaterializingStream(running_stream(100), table), keys)
    assert view.stopped_by_key and keys.reads == 3
    final = plain(console).rsplit("─", 1)[-1]  # the last frame's rows and status line
    assert "paused at row" in final and final.rstrip().endswith("stopped")
    assert "End follows" not in final and "PgUp" not in final, "no hint about keys once they are not read"


def test_a_finished_result_that_does_not_fit_stays_until_q():
    table = ResultTable(["n", "word"])
    stream = running_stream(100)
    stream.finish()
    console = terminal()
    view = LiveTableView(console, table)
    keys = ScriptedKeys([[], ["g"], ["/", *typed("100050"), "enter"], ["o"], ["escape", "end"], ["q"]])
    view.changes(MaterializingStream(stream, table), keys)
    text = plain(console)
    assert not view.stopped_by_key and not keys.steps, "every key was read before q"
    assert "finished · q returns to the prompt" in text and "rows 1-" in text and "row 50 of 100" in text
    assert text.rstrip().endswith("finished") and "late rows 2 (2 in the last batch)" in text


def test_a_finished_result_that_fits_ends_the_view_at_once():
    table = ResultTable(["n", "word"])
    stream = running_stream(5)
    stream.finish()
    keys = ScriptedKeys([])
    LiveTableView(terminal(), table).changes(MaterializingStream(stream, table), keys)
    assert keys.reads <= 1, "no key was waited for"
