"""Where the user is in a live result: the state behind table mode's keys, free of any terminal.

Why it exists: a live table shows the newest rows as they come (following); a user who wants to read an earlier
row pages back, searches, or opens a row to see every column, as in the Flink SQL Client's table mode or `less`.
This module decides what those keys do: which rows are shown (`window`), which one is selected and whether it is
open, what was searched, and what the status line says about the position (`position`). It holds no rows and
draws nothing: the view (shell/render/live.py) gives it the number of rows and how many fit at each key, and a
`find` function for searches. So it is tested as a table of key presses (tests/unit/test_result_navigation.py).

Rows are numbered by their place in the result (0 is the oldest row kept); when the row cap drops the oldest
rows, the view calls `rows_dropped` so a paused screen keeps showing the same rows.

Keys (names as shell/render/keys.py reads them):

    PgUp, b, Ctrl-B     page back (pauses the view)        PgDn, space, Ctrl-F   page forward
    Up, k / Down, j     select the previous / next row     Home, g               the first row
    End, G, F           back to the newest rows, following new ones as they come
    /text Enter         search forward from the selected row (case ignored, wraps around); `/` Enter alone
                        searches again; n next match, N previous; Esc cancels the typing
    o, Enter            open the selected row: every column on a line of its own (column: value); in an open
                        row, Up/Down (k/j) go to the previous/next row, PgUp/PgDn scroll its columns, and
                        Esc, q, o or Enter go back to the table
    q                   stop the query (leave the result when it has ended)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, Sequence

from shell.values import format_value

# (text, start, forward) -> the first row at or after `start` (before it, backwards) whose cells show `text`,
# wrapping around the ends, or None.
Find = Callable[[str, int, bool], "int | None"]

PAGE_BACK = ("pageup", "b")
PAGE_FORWARD = ("pagedown", " ")
FIRST = ("home", "g")
FOLLOW = ("end", "G", "F")
UP = ("up", "k")
DOWN = ("down", "j")
OPEN = ("o", "enter")
CLOSE = ("escape", "q", "o", "enter", "backspace")


class Action(Enum):
    """What a key asks of the view."""

    NOTHING = "nothing"  # not a key of ours: no redraw needed
    REDRAW = "redraw"
    QUIT = "quit"  # stop the query, or leave a result that has ended


@dataclass(frozen=True)
class Frame:
    """What the view knows when a key comes: the rows in the result, how many fit on the screen, and for an open
    row its number of columns and how many of them fit."""

    rows: int
    page: int
    columns: int = 0
    fields: int = 0


def row_matches(row: Sequence, text: str) -> bool:
    """Whether one of the row's cells shows `text` (as the tables print it, NULL as <NULL>), ignoring case."""
    needle = text.lower()
    return any(needle in format_value(value).lower() for value in row)


def find_row(rows: Sequence[Sequence], text: str, start: int, forward: bool = True) -> int | None:
    """The first row at or after `start` (at or before it when not `forward`) that shows `text`, wrapping around
    the ends; None when no row does."""
    count = len(rows)
    if not count or not text:
        return None
    step = 1 if forward else -1
    for i in range(count):
        index = (start + step * i) % count
        if row_matches(rows[index], text):
            return index
    return None


@dataclass
class Navigation:
    """The position in a live result. `follow` shows the newest rows; otherwise `top` is the first row shown and
    `selected` the row that `o` opens (row numbers from 0)."""

    follow: bool = True
    top: int = 0
    selected: int = 0
    opened: bool = False  # the selected row is shown column by column
    field_top: int = 0  # the first column shown of an open row
    typing: str | None = None  # the search being typed after `/`; None when not typing
    search: str = ""  # the last search
    message: str = ""  # what the last key found, for the status line ("no row shows 'x'")

    # what is shown ----------------------------------------------------------------------------------------------

    def window(self, rows: int, page: int) -> tuple[int, int]:
        """The rows to draw, as (start, stop): the last `page` rows when following, else from `top`."""
        page = max(1, page)
        if self.follow:
            return max(0, rows - page), rows
        self._clamp(rows, page)
        return self.top, min(rows, self.top + page)

    def position(self, rows: int, page: int, keys: bool = True) -> str:
        """Where the user is, for the front of the status line. `keys`: whether keys are read (a hint is given)."""
        noun = "row" if rows == 1 else "rows"
        if self.opened and rows:
            self._clamp(rows, max(1, page))
            return f"row {self.selected + 1} of {rows}" + (" · Esc goes back" if keys else "")
        if self.follow or not rows:
            if rows <= page:
                return f"{rows} {noun}"
            hint = "; PgUp pages back, / searches" if keys else ""
            return f"{rows} {noun} (last {max(1, page)} shown{hint})"
        start, stop = self.window(rows, page)
        return f"rows {start + 1}-{stop} of {rows} · paused at row {self.selected + 1}" + (" · End follows" if keys else "")

    def prompt(self) -> str:
        """The search being typed, or what the last key found; '' when there is nothing to say."""
        if self.typing is not None:
            return f"/{self.typing}▏ Enter searches, Esc cancels"
        return self.message

    # changes that are not keys ----------------------------------------------------------------------------------

    def rows_dropped(self, count: int) -> None:
        """The row cap dropped the `count` oldest rows: a paused view keeps showing the same rows."""
        if count > 0 and not self.follow:
            self.top = max(0, self.top - count)
            self.selected = max(0, self.selected - count)

    def close(self) -> None:
        """Leave an open row and a search being typed (the view is ending)."""
        self.opened = False
        self.typing = None

    # keys -------------------------------------------------------------------------------------------------------

    def press(self, key: str, frame: Frame, find: Find | None = None) -> Action:
        """Do what `key` means here; what the view should do next."""
        if self.typing is not None:
            return self._type(key, frame, find)
        self.message = ""
        if self.opened:
            return self._press_open(key, frame, find)
        page = max(1, frame.page)
        if key == "q":
            return Action.QUIT
        if key == "/":
            self.typing = ""
            return Action.REDRAW
        if key in ("n", "N"):
            self._search_again(key == "n", frame, find)
            return Action.REDRAW
        if key in FOLLOW:
            self.follow, self.top, self.selected = True, 0, 0
            return Action.REDRAW
        if not frame.rows:
            return Action.NOTHING
        if key in PAGE_BACK:
            self._pause(frame, select_last=False)
            self.top = max(0, self.top - page)
            self.selected = self.top
        elif key in PAGE_FORWARD:
            if self.follow:
                return Action.NOTHING
            last_top = max(0, frame.rows - page)
            if self.top >= last_top:
                self.selected = frame.rows - 1
            else:
                self.top = min(self.top + page, last_top)
                self.selected = self.top
        elif key in FIRST:
            self.follow, self.top, self.selected = False, 0, 0
        elif key in UP:
            if not self._pause(frame):
                self.selected = max(0, self.selected - 1)
        elif key in DOWN:
            if self.follow:
                return Action.NOTHING
            self.selected = min(frame.rows - 1, self.selected + 1)
        elif key in OPEN:
            self._pause(frame)
            self.opened, self.field_top = True, 0
        else:
            return Action.NOTHING
        self._show_selected(frame.rows, page)
        return Action.REDRAW

    def _press_open(self, key: str, frame: Frame, find: Find | None) -> Action:
        fields = max(1, frame.fields)
        last = max(0, frame.columns - fields)
        if key in CLOSE:
            self.opened, self.field_top = False, 0
        elif key in UP:
            self.selected, self.field_top = max(0, self.selected - 1), 0
        elif key in DOWN:
            self.selected, self.field_top = min(max(0, frame.rows - 1), self.selected + 1), 0
        elif key in PAGE_BACK:
            self.field_top = max(0, self.field_top - fields)
        elif key in PAGE_FORWARD:
            self.field_top = min(last, self.field_top + fields)
        elif key in FIRST:
            self.field_top = 0
        elif key in ("end", "G"):
            self.field_top = last
        elif key == "/":
            self.typing = ""
        elif key in ("n", "N"):
            self._search_again(key == "n", frame, find)
        else:
            return Action.NOTHING
        self._show_selected(frame.rows, max(1, frame.page))
        return Action.REDRAW

    def _type(self, key: str, frame: Frame, find: Find | None) -> Action:
        if key == "escape":
            self.typing = None
        elif key == "backspace":
            self.typing = self.typing[:-1] if self.typing else None
        elif key == "enter":
            text, self.typing = self.typing, None
            if text:
                self.search = text
                self._search(frame, find, self._start(frame, forward=True, again=False), forward=True)
            elif self.search:  # `/` and Enter alone: the last search again, as in less
                self._search_again(True, frame, find)
        elif len(key) == 1 and key.isprintable():
            self.typing += key
        else:
            return Action.NOTHING
        return Action.REDRAW

    # helpers ----------------------------------------------------------------------------------------------------

    def _pause(self, frame: Frame, select_last: bool = True) -> bool:
        """Stop following at the newest rows; True when the view was following."""
        if not self.follow:
            return False
        page = max(1, frame.page)
        self.follow = False
        self.top = max(0, frame.rows - page)
        self.selected = frame.rows - 1 if select_last else self.top
        return True

    def _start(self, frame: Frame, forward: bool, again: bool) -> int:
        """Where a search starts: the selected row (the one after or before it for `n`/`N`); following, the
        newest rows are where the user is, so a search forward wraps to the first row."""
        if self.follow:
            return 0 if forward else frame.rows - 1
        if not again:
            return self.selected
        return self.selected + 1 if forward else self.selected - 1

    def _search_again(self, forward: bool, frame: Frame, find: Find | None) -> None:
        if not self.search:
            self.message = "nothing searched yet: / searches"
            return
        self._search(frame, find, self._start(frame, forward, again=True), forward)

    def _search(self, frame: Frame, find: Find | None, start: int, forward: bool) -> None:
        found = find(self.search, start % max(1, frame.rows), forward) if find is not None and frame.rows else None
        if found is None:
            self.message = f"no row shows '{self.search}'"
            return
        wrapped = (found < start) if forward else (found > start)
        if self.follow:
            wrapped = False  # following, a search starts at the first row by design
        self._pause(frame)
        self.selected = found
        self.message = f"row {found + 1} shows '{self.search}'" + (" (search wrapped)" if wrapped else "")
        page = max(1, frame.page)
        if not self.top <= found < self.top + page:
            self.top = found
        self._show_selected(frame.rows, page)

    def _show_selected(self, rows: int, page: int) -> None:
        """Keep `selected` a row of the result, and on the screen."""
        if self.follow:
            return
        self.selected = min(max(0, self.selected), max(0, rows - 1))
        if self.selected < self.top:
            self.top = self.selected
        elif self.selected >= self.top + page:
            self.top = self.selected - page + 1
        self.top = min(max(0, self.top), max(0, rows - page))

    def _clamp(self, rows: int, page: int) -> None:
        """Rows went away (deletions, a smaller terminal): keep the position inside the result."""
        self._show_selected(rows, page)
