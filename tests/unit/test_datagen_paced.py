"""The paced row source of a bounded datagen table with a rate (shell/connectors/datagen_paced.py), on a fake clock:
rows fall due at the rate, a bounded query (Trigger.AvailableNow) waits for the next row instead of ending early,
a restart keeps the pace from its offset, and the last offset is the table's end."""

from __future__ import annotations

import datetime as dt

import pytest

from shell.connectors.datagen_paced import Pace, PacedRowsReader, RowRange, rows, split

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self):
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def reader(rows_total: int = 21, per_second: float = 10, available_now: bool = True) -> tuple[PacedRowsReader, Clock]:
    clock = Clock()
    paced = PacedRowsReader(Pace(rows_total, per_second, 1_700_000_000_000, 2), clock=clock, sleep=clock.sleep)
    if available_now:
        paced.prepareForTriggerAvailableNow()
    return paced, clock


def test_rows_fall_due_at_the_rate():
    paced, clock = reader()
    assert paced.initialOffset() == {"next": 0}
    assert paced.latestOffset({"next": 0}, None) == {"next": 1}  # row 0 is due at once
    clock.now += 0.55
    assert paced.latestOffset({"next": 1}, None) == {"next": 6}  # rows 1..5 fell due at 0.1 .. 0.5 s


def test_a_bounded_query_waits_for_the_next_row_instead_of_ending():
    paced, clock = reader()
    paced.latestOffset({"next": 0}, None)
    assert paced.latestOffset({"next": 1}, None) == {"next": 2}
    assert clock.slept == [pytest.approx(0.1)]  # AvailableNow ends at a batch without new rows: wait for row 1


def test_beside_an_unbounded_table_nothing_due_is_no_new_rows():
    paced, clock = reader(available_now=False)
    paced.latestOffset({"next": 0}, None)
    assert paced.latestOffset({"next": 1}, None) == {"next": 1}
    assert clock.slept == []


def test_the_offsets_end_at_the_last_row_and_stay_there():
    paced, clock = reader(rows_total=21)
    paced.latestOffset({"next": 0}, None)
    clock.now += 60
    assert paced.latestOffset({"next": 1}, None) == {"next": 11}  # a second's rows at most at once
    clock.now += 60
    assert paced.latestOffset({"next": 11}, None) == {"next": 21}  # never past the last row
    assert paced.latestOffset({"next": 21}, None) == {"next": 21}
    assert clock.slept == []


def test_a_restart_keeps_the_pace_from_its_checkpointed_offset():
    paced, clock = reader()
    assert paced.latestOffset({"next": 8}, None) == {"next": 9}  # not 8 rows at once: those were given before


def test_ranges_split_a_batch_and_rows_carry_their_event_time():
    assert split(5, 12, 3) == [RowRange(5, 7), RowRange(7, 9), RowRange(9, 12)]
    assert split(5, 6, 4) == [RowRange(5, 6)]
    batch = rows(Pace(21, 4, 1_700_000_000_000, 1), 2, 5)
    assert batch.column("value").to_pylist() == [2, 3, 4]
    start = dt.datetime.fromtimestamp(1_700_000_000, dt.timezone.utc)
    assert batch.column("timestamp").to_pylist() == [start + dt.timedelta(seconds=s) for s in (0.5, 0.75, 1.0)]


def test_a_rate_must_be_a_positive_number_of_rows():
    from shell.connectors.registry import validate_table
    from shell.errors import OptionError
    from shell.sql.parse import parse_script

    (create,) = parse_script("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5', "
                             "'rows-per-second' = '0');")
    with pytest.raises(OptionError, match="'rows-per-second' must be a positive integer"):
        validate_table(create.table)


def test_rows_due_during_a_slow_batch_come_a_second_at_a_time():
    paced, clock = reader(rows_total=101, per_second=10)
    assert paced.latestOffset({"next": 0}, None) == {"next": 1}
    clock.now += 4.7  # the first micro-batch took 4.7 s (Spark warming up): 47 rows fell due meanwhile
    assert paced.latestOffset({"next": 1}, None) == {"next": 11}  # a second's worth, not a jump to 48
    clock.now += 0.5
    assert paced.latestOffset({"next": 11}, None) == {"next": 16}  # and the rate from there, not the backlog
    clock.now += 0.5
    assert paced.latestOffset({"next": 16}, None) == {"next": 21}
