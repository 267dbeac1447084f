"""The live table's model: a changelog applied to rows by key, or by full row without one, with a row cap."""

from __future__ import annotations

from shell.render.materialize import MaterializingStream, ResultTable
from shell.results import Change, ChangeStream


def changes(*items: tuple) -> list[Change]:
    return [Change(op, tuple(row)) for op, *row in items]


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_append_only_keeps_arrival_order():
    table = ResultTable(["id", "name"])
    table.apply(changes(("+I", 1, "a"), ("+I", 2, "b")))
    table.apply(changes(("+I", 3, "c")))
    assert table.rows() == [(1, "a"), (2, "b"), (3, "c")]
    assert not table.keyed and table.changes == 3 and table.batches == 2


def test_keyed_upserts_and_deletes_keep_a_rows_place():
    table = ResultTable(["customer", "total"], key=["customer"])
    table.apply(changes(("+I", "a", 1), ("+I", "b", 2), ("+I", "c", 3)))
    table.apply(changes(("-U", "a", 1), ("+U", "a", 10)))
    assert table.rows() == [("a", 10), ("b", 2), ("c", 3)]
    table.apply(changes(("-D", "b", 2)))
    assert table.rows() == [("a", 10), ("c", 3)]
    table.apply(changes(("+U", "d", 4)))  # an upsert of a new key inserts it
    assert table.rows() == [("a", 10), ("c", 3), ("d", 4)]


def test_keyed_retraction_without_its_update_deletes():
    table = ResultTable(["k", "v"], key=["K"])  # key names ignore case
    table.apply(changes(("+I", 1, "x")))
    table.apply(changes(("-U", 1, "x")))
    assert table.rows() == []


def test_unknown_key_column_falls_back_to_full_row_retraction():
    table = ResultTable(["a"], key=["missing"])
    assert not table.keyed


def test_without_key_retractions_remove_the_matching_row():
    table = ResultTable(["word", "n"])
    table.apply(changes(("+I", "x", 1), ("+I", "y", 1), ("+I", "z", 1)))
    table.apply(changes(("-U", "y", 1), ("+U", "y", 2)))
    assert table.rows() == [("x", 1), ("y", 2), ("z", 1)], "an update takes the retracted row's place"
    table.apply(changes(("-D", "x", 1)))
    assert table.rows() == [("y", 2), ("z", 1)]
    table.apply(changes(("-D", "nope", 9)))  # nothing matches: nothing changes
    assert table.rows() == [("y", 2), ("z", 1)]


def test_retraction_removes_the_most_recent_equal_row():
    table = ResultTable(["v"])
    table.apply(changes(("+I", 1), ("+I", 2), ("+I", 1)))
    table.apply(changes(("-D", 1)))
    assert table.rows() == [(1,), (2,)]


def test_row_cap_drops_the_oldest_rows():
    table = ResultTable(["id"], cap=3)
    table.apply(changes(*[("+I", i) for i in range(5)]))
    assert table.rows() == [(2,), (3,), (4,)]
    assert table.dropped == 2
    keyed = ResultTable(["id"], key=["id"], cap=2)
    keyed.apply(changes(("+I", 1), ("+I", 2), ("+I", 3)))
    assert keyed.rows() == [(2,), (3,)]


def test_changed_rows_carry_the_time_of_their_change():
    clock = Clock()
    table = ResultTable(["k", "v"], key=["k"], clock=clock)
    table.apply(changes(("+I", 1, "a"), ("+I", 2, "b")))
    clock.now = 105.0
    table.apply(changes(("-U", 1, "a"), ("+U", 1, "c")))
    times = {e.row[0]: (e.changed_at, e.op) for e in table.entries()}
    assert times == {1: (105.0, "+U"), 2: (100.0, "+I")}


def test_change_rate_over_the_last_seconds():
    clock = Clock()
    table = ResultTable(["v"], clock=clock)
    clock.now = 102.0
    table.apply(changes(*[("+I", i) for i in range(10)]))
    assert table.changes_per_second() == 5.0  # 10 changes in the 2 s since the table was made
    clock.now = 120.0
    assert table.changes_per_second() == 0.0


def test_contains_text_looks_at_cells_as_printed():
    table = ResultTable(["a", "b"])
    table.apply(changes(("+I", None, "customer-3")))
    assert table.contains_text("customer-3") and table.contains_text("<NULL>")
    assert not table.contains_text("customer-4")


def test_materializing_stream_applies_batches_and_can_stop_early():
    stream = ChangeStream(columns=["v"])
    for i in range(5):
        stream.publish([Change("+I", (i,))])
    stream.finish()
    table = ResultTable(["v"])
    view = MaterializingStream(stream, table, stop=lambda t: len(t) >= 3)
    seen = [batch for batch in view.batches(poll_seconds=0.01) if batch]
    assert len(seen) == 3 and len(table) == 3 and view.stopped_early
    assert view.columns == ["v"], "everything else is the stream's"
