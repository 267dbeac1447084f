"""The keyed stage's step on Arrow tables, without Spark: upserts, multisets, outer joins and their differences."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from shell.engine import event_time_steps
from shell.engine import keyed_stage as ks
from shell.planner.stages import Rank, Temporal


def spec(*inputs: ks.InputSpec, types: dict[str, pa.DataType] | None = None) -> ks.StageSpec:
    payload = [pa.field(c, (types or {}).get(c, pa.string())) for i in inputs for c in i.columns]
    control = [
        pa.field(ks.W, pa.int32()), pa.field(ks.SRC, pa.int32()), pa.field(ks.KEY, pa.string()), pa.field(ks.SUB, pa.int32()),
        pa.field(ks.PK, pa.string()), pa.field(ks.POS, pa.int64()),
    ]  # fmt: skip
    return ks.StageSpec(tuple(inputs), pa.schema(payload + control))


def batch(s: ks.StageSpec, rows: list[dict]) -> pa.Table:
    """Rows of the stage's input, as Spark builds them."""
    full = []
    for pos, row in enumerate(rows):
        src = row["src"]
        values = {c: row.get(c) for c in s.inputs[src].columns}
        full.append({
            **{f.name: None for f in s.schema}, **values, ks.SRC: src, ks.KEY: row.get("key"), ks.PK: row.get("pk"),
            ks.W: row.get("w", 1), ks.POS: pos,
        })  # fmt: skip
    return pa.Table.from_pylist(full, schema=s.schema)


def run(s: ks.StageSpec, batches: list[list[dict]]) -> list[list[tuple]]:
    """Each batch's output rows as sorted (columns..., weight) tuples."""
    state = [s.state_schema(i).empty_table() for i in range(len(s.inputs))]
    out = []
    for rows in batches:
        result = ks.step(s, state, batch(s, rows))
        state = result.state
        out.append(sorted((tuple(r.values()) for r in result.output.to_pylist()), key=repr))
    return out


USERS = ks.InputSpec(ks.UPSERT, ("acct",))


def test_an_upsert_retracts_the_old_row_and_adds_the_new_one():
    s = spec(USERS)
    out = run(s, [
        [{"src": 0, "key": "u1", "pk": "u1", "acct": "a"}],
        [{"src": 0, "key": "u1", "pk": "u1", "acct": "b"}],
        [{"src": 0, "key": "u1", "pk": "u1", "w": -1}],
    ])  # fmt: skip
    assert out == [[("a", 1)], [("a", -1), ("b", 1)], [("b", -1)]]


def test_an_update_that_changes_no_column_read_emits_nothing():
    s = spec(USERS)
    out = run(s, [[{"src": 0, "key": "u1", "pk": "u1", "acct": "a"}], [{"src": 0, "key": "u1", "pk": "u1", "acct": "a"}]])
    assert out == [[("a", 1)], []]


def test_the_latest_change_of_a_key_in_a_batch_wins():
    s = spec(USERS)
    out = run(s, [[
        {"src": 0, "key": "u1", "pk": "u1", "acct": "a"},
        {"src": 0, "key": "u1", "pk": "u1", "acct": "b"},
        {"src": 0, "key": "u2", "pk": "u2", "acct": "c"},
        {"src": 0, "key": "u2", "pk": "u2", "w": -1},
    ]])  # fmt: skip
    assert out == [[("b", 1)]]


def test_a_delete_of_an_unknown_key_emits_nothing():
    assert run(spec(USERS), [[{"src": 0, "key": "u9", "pk": "u9", "w": -1}]]) == [[]]


def test_a_changelog_input_is_a_multiset_of_rows():
    s = spec(ks.InputSpec(ks.CHANGELOG, ("v",)), ks.InputSpec(ks.CHANGELOG, ("x",), join="inner"))
    out = run(s, [
        [{"src": 0, "key": "k", "v": "a"}, {"src": 0, "key": "k", "v": "a"}, {"src": 1, "key": "k", "x": "1"}],
        [{"src": 0, "key": "k", "v": "a", "w": -1}],
    ])  # fmt: skip
    assert out == [[("a", "1", 2)], [("a", "1", -1)]]


def test_rows_are_told_apart_by_every_value_nested_values_and_the_place_of_a_null_included():
    point = pa.struct([("x", pa.int64())])
    s = spec(ks.InputSpec(ks.CHANGELOG, ("a", "b", "tags", "point")), types={"tags": pa.list_(pa.string()), "point": point})
    r1 = {"src": 0, "key": "k", "a": "x", "b": None, "tags": ["p"], "point": {"x": 1}}
    r2 = {**r1, "a": None, "b": "x"}
    r3 = {**r1, "tags": ["q"]}
    r4 = {**r1, "point": {"x": 2}}
    out = run(s, [[r1, r2, r3, r4, r1], [{**r1, "w": -1}, {**r2, "w": -1}, {**r4, "w": -1}]])
    values = lambda r, w: (r["a"], r["b"], r["tags"], r["point"], w)  # noqa: E731
    assert out == [
        sorted([values(r1, 2), values(r2, 1), values(r3, 1), values(r4, 1)], key=repr),
        sorted([values(r1, -1), values(r2, -1), values(r4, -1)], key=repr),
    ]


LEFT3 = (
    ks.InputSpec(ks.UPSERT, ("u_acct",)),
    ks.InputSpec(ks.UPSERT, ("c_color",), join="left", joins_with=0),
    ks.InputSpec(ks.UPSERT, ("h_cheese",), join="left", joins_with=0),
)


def test_a_left_join_pads_with_nulls_then_updates_and_returns_to_nulls():
    s = spec(*LEFT3)
    out = run(s, [
        [{"src": 0, "key": "1", "pk": "1", "u_acct": "103"}],
        [{"src": 1, "key": "1", "pk": "1", "c_color": "blue"}],
        [{"src": 2, "key": "1", "pk": "1", "h_cheese": "brie"}],
        [{"src": 1, "key": "1", "pk": "1", "w": -1}],
        [{"src": 0, "key": "1", "pk": "1", "w": -1}],
    ])  # fmt: skip
    assert out == [sorted(b, key=repr) for b in [
        [("103", None, None, 1)],
        [("103", None, None, -1), ("103", "blue", None, 1)],
        [("103", "blue", None, -1), ("103", "blue", "brie", 1)],
        [("103", None, "brie", 1), ("103", "blue", "brie", -1)],
        [("103", None, "brie", -1)],
    ]]


def test_right_side_rows_without_a_left_row_emit_nothing_in_a_left_join():
    assert run(spec(*LEFT3), [[{"src": 1, "key": "1", "pk": "1", "c_color": "red"}]]) == [[]]


@pytest.mark.parametrize("how, expected", [
    ("inner", []),
    ("left", [("a", None, 1)]),
    ("right", [(None, "x", 1)]),
    ("full", [("a", None, 1), (None, "x", 1)]),
])  # fmt: skip
def test_null_keys_never_match(how, expected):
    s = spec(ks.InputSpec(ks.CHANGELOG, ("l",)), ks.InputSpec(ks.CHANGELOG, ("r",), join=how))
    out = run(s, [[{"src": 0, "key": None, "l": "a"}, {"src": 1, "key": None, "r": "x"}]])
    assert out == [sorted(expected, key=repr)]


SEMI = (ks.InputSpec(ks.CHANGELOG, ("o",)), ks.InputSpec(ks.CHANGELOG, (), join=ks.SEMI))
ANTI = (ks.InputSpec(ks.CHANGELOG, ("o",)), ks.InputSpec(ks.CHANGELOG, (), join=ks.ANTI))


def test_a_semi_join_shows_a_row_once_while_its_key_has_any_match():
    out = run(spec(*SEMI), [
        [{"src": 0, "key": "1", "o": "a"}, {"src": 0, "key": "1", "o": "a"}, {"src": 0, "key": "2", "o": "b"}],
        [{"src": 1, "key": "1"}],  # the first match: both copies of a come
        [{"src": 1, "key": "1"}],  # a second match adds nothing
        [{"src": 1, "key": "1", "w": -1}],  # one match is left
        [{"src": 1, "key": "1", "w": -1}, {"src": 1, "key": "2"}],  # the last one goes; b's first comes
        [{"src": 0, "key": "2", "o": "c"}],  # a new row of a matched key comes at once
    ])  # fmt: skip
    assert out == [[], [("a", 2)], [], [], [("a", -2), ("b", 1)], [("c", 1)]]


def test_an_anti_join_shows_a_row_while_its_key_has_no_match_and_a_null_key_never_matches():
    out = run(spec(*ANTI), [
        [{"src": 0, "key": "1", "o": "a"}, {"src": 0, "key": None, "o": "n"}, {"src": 1, "key": None}],
        [{"src": 1, "key": "1"}],
        [{"src": 1, "key": "1", "w": -1}],
    ])  # fmt: skip
    assert out == [[("a", 1), ("n", 1)], [("a", -1)], [("a", 1)]]


def test_a_semi_join_after_a_left_join_tests_the_left_sides_key():
    s = spec(ks.InputSpec(ks.CHANGELOG, ("o",)), ks.InputSpec(ks.CHANGELOG, ("c",), join="left"),
             ks.InputSpec(ks.CHANGELOG, (), join=ks.SEMI))
    out = run(s, [
        [{"src": 0, "key": "1", "o": "a"}, {"src": 2, "key": "1"}],
        [{"src": 1, "key": "1", "c": "x"}],
        [{"src": 2, "key": "1", "w": -1}],
    ])  # fmt: skip
    assert out == [[("a", None, 1)], sorted([("a", None, -1), ("a", "x", 1)], key=repr), [("a", "x", -1)]]


def test_state_is_kept_per_input_and_survives_encoding():
    s = spec(*LEFT3)
    result = ks.step(s, [s.state_schema(i).empty_table() for i in range(3)],
                     batch(s, [{"src": 0, "key": "1", "pk": "1", "u_acct": "a"}, {"src": 2, "key": "1", "pk": "1", "h_cheese": "feta"}]))
    restored = [ks.decode(ks.encode(t), s.state_schema(i)) for i, t in enumerate(result.state)]
    assert [t.num_rows for t in restored] == [1, 0, 1]
    assert restored[2].column("h_cheese").to_pylist() == ["feta"]


def test_top_n_keeps_the_first_rows_of_each_key_and_renumbers_when_a_better_row_arrives():
    s = ks.StageSpec(spec(ks.InputSpec(ks.CHANGELOG, ("v",))).inputs, spec(ks.InputSpec(ks.CHANGELOG, ("v",))).schema,
                     rank=Rank((("v", True, False),), 2))
    out = run(s, [
        [{"src": 0, "key": "g", "v": "5"}, {"src": 0, "key": "g", "v": "3"}, {"src": 0, "key": "g", "v": "1"}],
        [{"src": 0, "key": "g", "v": "4"}],
        [{"src": 0, "key": "g", "v": "5", "w": -1}],
    ])  # fmt: skip
    assert out == [
        sorted([("5", 1, 1), ("3", 2, 1)], key=repr),
        sorted([("3", 2, -1), ("4", 2, 1)], key=repr),
        sorted([("5", 1, -1), ("4", 2, -1), ("4", 1, 1), ("3", 2, 1)], key=repr),
    ]


def test_an_append_only_top_n_keeps_only_the_rows_that_rank_and_still_ranks_the_same():
    ranked = {}
    for kind in (ks.APPEND, ks.CHANGELOG):
        base = spec(ks.InputSpec(kind, ("v",)))
        s = ks.StageSpec(base.inputs, base.schema, rank=Rank((("v", True, False),), 2))
        state, outputs = [s.state_schema(0).empty_table()], []
        for values in (["5", "3", "1"], ["4"], ["2", "9"], ["1"]):
            result = ks.step(s, state, batch(s, [{"src": 0, "key": "g", "v": v} for v in values]))
            state = result.state
            outputs.append(sorted(tuple(r.values()) for r in result.output.to_pylist()))
        ranked[kind] = (outputs, sorted(state[0].column("v").to_pylist()))
    assert ranked[ks.APPEND][0] == ranked[ks.CHANGELOG][0]
    assert ranked[ks.APPEND][1] == ["5", "9"], "rows that can never rank again are not kept"
    assert ranked[ks.CHANGELOG][1] == ["1", "2", "3", "4", "5", "9"], "a changelog's rows may rank again after a delete"


def test_min_max_count_distinct_follow_deletes_of_the_current_extreme():
    base = spec(ks.InputSpec(ks.CHANGELOG, ("g", "v")))
    s = ks.StageSpec(base.inputs, base.schema, aggregate=ks.AggregateSpec(
        ("g",), (("lo", "min", "v", False), ("hi", "max", "v", False), ("d", "count", "v", True), ("n", "count", None, False)),
        (pa.string(), pa.string(), pa.int64(), pa.int64())))
    out = run(s, [
        [{"src": 0, "key": "x", "g": "x", "v": "a"}, {"src": 0, "key": "x", "g": "x", "v": "c"},
         {"src": 0, "key": "x", "g": "x", "v": "c"}],
        [{"src": 0, "key": "x", "g": "x", "v": "c", "w": -1}],
        [{"src": 0, "key": "x", "g": "x", "v": "c", "w": -1}],
        [{"src": 0, "key": "x", "g": "x", "v": "a", "w": -1}],
    ])  # fmt: skip
    assert out == [
        [("x", "a", "c", 2, 3, 1)],
        sorted([("x", "a", "c", 2, 3, -1), ("x", "a", "c", 2, 2, 1)], key=repr),
        sorted([("x", "a", "c", 2, 2, -1), ("x", "a", "a", 1, 1, 1)], key=repr),
        [("x", "a", "a", 1, 1, -1)],
    ]


def test_sum_and_avg_distinct_count_each_value_once_however_many_rows_hold_it():
    base = spec(ks.InputSpec(ks.CHANGELOG, ("g", "v")), types={"v": pa.int64()})
    s = ks.StageSpec(base.inputs, base.schema, aggregate=ks.AggregateSpec(
        ("g",), (("s", "sum", "v", True), ("a", "avg", "v", True), ("t", "sum", "v", False)),
        (pa.int64(), pa.int64(), pa.int64())))
    row = lambda v, w=1: {"src": 0, "key": "x", "g": "x", "v": v, "w": w}  # noqa: E731
    out = run(s, [
        [row(5), row(5), row(8), row(None)],  # 5 twice (two rows), 8 once, a NULL
        [row(5, -1)],  # one 5 goes: 5 is still there
        [row(5, -1)],  # the last 5 goes
        [row(8, -1), row(None, -1)],  # nothing left but nothing: the group goes
    ])  # fmt: skip
    assert out == [
        [("x", 13, 6, 18, 1)],  # SUM(DISTINCT) 5 + 8, AVG(DISTINCT) 13 / 2 truncated, SUM 18
        sorted([("x", 13, 6, 18, -1), ("x", 13, 6, 13, 1)], key=repr),
        sorted([("x", 13, 6, 13, -1), ("x", 8, 8, 8, 1)], key=repr),
        [("x", 8, 8, 8, -1)],
    ]


# ---- event-time temporal join -------------------------------------------------------------------------------

ORDERS = ks.InputSpec(ks.APPEND, ("o_id", "o_t"))
RATES = ks.InputSpec(ks.CHANGELOG, ("r_rate", "r_t"), join="inner")


def temporal_spec(outer: bool = False) -> ks.StageSpec:
    rates = ks.InputSpec(ks.CHANGELOG, RATES.columns, join="left" if outer else "inner")
    payload = [pa.field("o_id", pa.int64()), pa.field("o_t", pa.timestamp("us")),
               pa.field("r_rate", pa.float64()), pa.field("r_t", pa.timestamp("us"))]
    control = [
        pa.field(ks.W, pa.int32()), pa.field(ks.SRC, pa.int32()), pa.field(ks.KEY, pa.string()), pa.field(ks.SUB, pa.int32()),
        pa.field(ks.PK, pa.string()), pa.field(ks.POS, pa.int64()),
    ]  # fmt: skip
    return ks.StageSpec((ORDERS, rates), pa.schema(payload + control), temporal=Temporal("o_t", "r_t", outer))


def order(key: str, order_id: int, minute: int) -> dict:
    return {"src": 0, "key": key, "o_id": order_id, "o_t": minute * 60_000_000}


def rate(key: str, value: float | None, minute: int | None, w: int = 1) -> dict:
    return {"src": 1, "key": key, "r_rate": value, "r_t": None if minute is None else minute * 60_000_000, "w": w}


def run_temporal(s: ks.StageSpec, batches: list[tuple[int, list[dict]]]) -> tuple[list[list[tuple]], list]:
    """Each (watermark minute, rows) batch's output as sorted (order id, rate, weight), and the last state."""
    state = [s.state_schema(i).empty_table() for i in range(len(s.inputs))]
    out = []
    for minute, rows in batches:
        result = event_time_steps.step_temporal(s, state, batch(s, rows), minute * 60_000_000)
        state = result.state
        out.append(sorted((r["o_id"], r["r_rate"], r[ks.W]) for r in result.output.to_pylist()))
    return out, state


def test_a_row_waits_for_the_watermark_then_meets_the_version_valid_at_its_time():
    s = temporal_spec()
    out, _ = run_temporal(s, [
        (0, [rate("EUR", 1.1, 9), order("EUR", 1, 8), order("EUR", 2, 9), order("EUR", 3, 30), order("EUR", 4, 61)]),
        (10, [rate("EUR", 1.2, 60)]),  # arrives later, but is valid only from minute 60
        (90, []),
    ])  # fmt: skip
    # order 1 is before any version: no row; order 2 at exactly minute 9 sees 1.1 (valid from its time, inclusive)
    assert out == [[], [(2, 1.1, 1)], [(3, 1.1, 1), (4, 1.2, 1)]]


def test_a_left_join_keeps_rows_without_a_version_and_a_delete_ends_the_version():
    s = temporal_spec(outer=True)
    out, _ = run_temporal(s, [
        (0, [rate("EUR", 1.1, 9), rate("EUR", 1.1, 20, w=-1), order("EUR", 1, 5), order("EUR", 2, 15),
             order("EUR", 3, 25), order("GBP", 4, 25)]),
        (60, []),
    ])  # fmt: skip
    assert out == [[], [(1, None, 1), (2, 1.1, 1), (3, None, 1), (4, None, 1)]]


def test_equal_rows_count_and_the_last_version_at_equal_times_wins():
    s = temporal_spec()
    out, _ = run_temporal(s, [(60, [rate("EUR", 1.0, 9), rate("EUR", 2.0, 9), order("EUR", 1, 10), order("EUR", 1, 10)])])
    assert out == [[(1, 2.0, 2)]]


def test_versions_no_future_row_can_see_are_dropped():
    s = temporal_spec()
    _, state = run_temporal(s, [(30, [rate("EUR", 1.0, 9), rate("EUR", 2.0, 20), rate("EUR", 3.0, 40),
                                      order("EUR", 1, 50)])])  # fmt: skip
    waiting, versions = state
    assert waiting.column("o_id").to_pylist() == [1]
    assert versions.column("r_rate").to_pylist() == [2.0, 3.0], "1.0 is older than the latest version before minute 30"


def test_a_tombstone_without_a_time_deletes_from_the_watermark_on():
    s = temporal_spec(outer=True)
    out, _ = run_temporal(s, [
        (0, [rate("EUR", 1.1, 9), order("EUR", 1, 20), order("EUR", 2, 40)]),
        (30, [rate("EUR", None, None, w=-1)]),  # an upsert tombstone carries no value, so no time either
        (60, []),
    ])  # fmt: skip
    assert out == [[], [(1, 1.1, 1)], [(2, None, 1)]]


def test_state_splits_into_the_requested_sub_buckets_and_empty_ones_stay_empty():
    s = spec(USERS)
    rows = [{"src": 0, "key": f"u{i}", "pk": f"u{i}", "acct": str(i)} for i in range(6)]
    table = batch(s, rows)
    table = table.set_column(table.schema.get_field_index(ks.SUB), ks.SUB, pa.array([0, 2, 0, 2, 2, 0], pa.int32()))
    state = ks.step(s, [s.state_schema(0).empty_table()], table).state
    parts = ks.by_sub_bucket(state, [0, 1, 2])
    assert sorted(parts[0][0].column("acct").to_pylist()) == ["0", "2", "5"]
    assert parts[1][0].num_rows == 0
    assert sorted(parts[2][0].column("acct").to_pylist()) == ["1", "3", "4"]


@pytest.mark.parametrize("source", [
    ks.InputSpec(ks.UPSERT, ("acct",), key_is_pk=True),
    ks.InputSpec(ks.UPSERT, ("uid", "acct"), key_is_pk=True, pk_column="uid"),
    ks.InputSpec(ks.UPSERT, ("acct",)),
    ks.InputSpec(ks.CHANGELOG, ("acct",)),
], ids=["upsert-keyed-by-its-primary-key", "upsert-reading-its-primary-key", "upsert-keyed-otherwise",
        "changelog"])  # fmt: skip
def test_a_sub_bucket_is_stored_without_its_implied_columns_and_read_back_whole(source):
    s = spec(source)
    rows = [{"src": 0, "key": f"u{i}", "pk": f"u{i}", "uid": f"u{i}", "acct": str(i), "w": 1} for i in range(5)]
    table = batch(s, rows)
    table = table.set_column(table.schema.get_field_index(ks.SUB), ks.SUB, pa.array([3] * 5, pa.int32()))
    state = ks.step(s, [s.state_schema(0).empty_table()], table).state[0]
    blob = ks.encode_part(s, 0, state)
    assert ks.decode_part(s, 0, blob, 3).equals(state)
    assert len(blob) < len(ks.encode(state)), "the implied columns are not stored"
    assert source.pk_column not in ks.stored_columns(s, 0)


def test_split_by_groups_rows_by_value_in_one_sort():
    table = pa.table({"x": ["a", "b", "c", "d", "e"]})
    groups = ks.split_by(table, np.array([2, 0, 2, 5, 0]))
    assert {k: v.column("x").to_pylist() for k, v in groups.items()} == {0: ["b", "e"], 2: ["a", "c"], 5: ["d"]}
    assert ks.split_by(table.slice(0, 0), np.zeros(0, dtype="int64")) == {}



def random_changes(rng: np.random.Generator, inputs: int, n: int) -> list[dict]:
    """Upserts (value v0..v4) and deletes of keys k0..k39 in random inputs; each input is keyed by its primary key."""
    rows = []
    for _ in range(n):
        src, key = int(rng.integers(inputs)), f"k{rng.integers(40)}"
        value = None if rng.random() < 0.2 else f"v{rng.integers(5)}"
        rows.append({"src": src, "key": key, "pk": key, "w": -1 if value is None else 1, f"c{src}": value})
    return rows


def joined_by_hand(how: str, tables: list[dict[str, str]]) -> Counter:
    """`t0 JOIN t1 ON t0.key = t1.key JOIN t2 ON t0.key = t2.key` (how: inner, left or full), row by row."""
    result = [(key, (value,)) for key, value in tables[0].items()]  # (t0's key, the row's values)
    for width, table in enumerate(tables[1:], start=1):
        joined, matched = [], set()
        for key, values in result:
            if key in table:
                joined.append((key, (*values, table[key])))
                matched.add(key)
            elif how != "inner":
                joined.append((key, (*values, None)))
        if how == "full":
            joined += [(None, (*([None] * width), value)) for key, value in table.items() if key not in matched]
        result = joined
    return Counter(values for _, values in result)


@pytest.mark.parametrize("how", ["inner", "left", "full"])
def test_a_three_way_join_of_upsert_inputs_changes_as_joining_by_hand_says(how):
    """Random upserts and deletes in three inputs keyed by their primary key: after every batch, the output is
    the difference between the join of the tables before and after it, computed row by row."""
    rng = np.random.default_rng(7)
    s = spec(*(ks.InputSpec(ks.UPSERT, (f"c{i}",), join=how if i else "", key_is_pk=True) for i in range(3)))
    state = [s.state_schema(i).empty_table() for i in range(3)]
    tables: list[dict[str, str]] = [{}, {}, {}]
    changed = 0
    for _ in range(15):
        rows = random_changes(rng, 3, 30)
        before = joined_by_hand(how, tables)
        for row in rows:
            if row["w"] < 0:
                tables[row["src"]].pop(row["key"], None)
            else:
                tables[row["src"]][row["key"]] = row[f"c{row['src']}"]
        expected = joined_by_hand(how, tables)
        expected.subtract(before)
        result = ks.step(s, state, batch(s, rows))
        state = result.state
        got = Counter()
        for r in result.output.to_pylist():
            got[(r["c0"], r["c1"], r["c2"])] += r[ks.W]
        assert +got == +expected and -got == -expected
        assert [sorted(t.column(ks.PK).to_pylist()) for t in state] == [sorted(t) for t in tables]
        changed += sum(abs(n) for n in expected.values())
    assert changed > 100  # the batches did change the join


# ---- window Top-N ------------------------------------------------------------------------------------------

BIDS = ks.InputSpec(ks.APPEND, ("item", "price", "wend"))


def window_rank_spec(drop_late: bool) -> ks.StageSpec:
    types = {"price": pa.int64(), "wend": pa.timestamp("us")}
    base = spec(BIDS, types=types)
    return ks.StageSpec(base.inputs, base.schema, rank=Rank((("price", True, False),), 2, "wend", drop_late))


def bid(window_end_minute: int, item: str, price: int) -> dict:
    # keyed as the planner keys a window Top-N: by PARTITION BY window_start, window_end (here the end alone)
    return {"src": 0, "key": str(window_end_minute), "item": item, "price": price, "wend": window_end_minute * 60_000_000}


def run_window_rank(s: ks.StageSpec, batches: list[tuple[float, list[dict]]]) -> tuple[list[list[tuple]], list]:
    """Each (watermark minute, rows) batch's output as sorted (item, price, row number, weight), and the wake-ups."""
    state, out, wakes = [s.state_schema(0).empty_table()], [], []
    for minute, rows in batches:
        result = event_time_steps.step_window_rank(s, state, batch(s, rows), int(minute * 60_000_000))
        state = result.state
        out.append(sorted((r["item"], r["price"], r[ks.ROWNUM], r[ks.W]) for r in result.output.to_pylist()))
        wakes.append(result.wake_at)
    return out, wakes


def test_a_window_top_n_emits_each_windows_first_rows_once_when_it_closes_and_forgets_them():
    s = window_rank_spec(drop_late=True)
    out, wakes = run_window_rank(s, [
        (0, [bid(10, "a", 5), bid(10, "b", 9), bid(20, "c", 1)]),
        (5, [bid(10, "d", 7), bid(10, "a", 5)]),  # a tie: two equal rows are two rows
        (10 - 1 / 60_000, [bid(20, "e", 3)]),  # the watermark reaches window 10's end minus 1 ms: it closes
        (12, [bid(10, "late", 99), bid(20, "f", 2)]),  # window 10 has closed: its row is late
        (30, []),
    ])  # fmt: skip
    assert out == [[], [], [("b", 9, 1, 1), ("d", 7, 2, 1)], [], [("e", 3, 1, 1), ("f", 2, 2, 1)]]
    # the earliest waiting window wakes the bucket at its end minus 1 ms; nothing waits once all have left
    assert wakes[:2] == [10 * 60_000_000 - 1000] * 2 and wakes[2] == 20 * 60_000_000 - 1000 and wakes[-1] is None


def test_a_window_top_n_over_an_aggregation_ranks_a_closed_windows_rows_at_once_and_keeps_nothing():
    # a window aggregation's rows arrive in the micro-batch whose watermark closed their window: the keyed stage's
    # plain step ranks them with no watermark of its own
    s = window_rank_spec(drop_late=False)
    result = ks.step(s, [s.state_schema(0).empty_table()], batch(s, [bid(10, "a", 5), bid(10, "b", 9), bid(10, "c", 7)]))
    assert sorted((r["item"], r["price"], r[ks.ROWNUM], r[ks.W]) for r in result.output.to_pylist()) == \
        [("b", 9, 1, 1), ("c", 7, 2, 1)]
    assert result.state[0].num_rows == 0
