"""The keyed stage's operator over a stand-in for Spark's MapState: a sub-bucket's changes kept as a delta beside its
rows and folded in once it grows give the same output and the same rows as rewriting the sub-bucket every call."""

from __future__ import annotations

import random
from collections import Counter

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from shell.engine import keyed_stage as ks
from shell.planner.stages import Rank, Temporal
from shell.engine import stage_cache
from shell.engine import stage_operators as so

SUBS = 4


class MapState:
    """What the operator uses of pyspark's MapState, in a dict."""

    def __init__(self):
        self.data: dict[tuple, tuple] = {}
        self.put_bytes = 0
        self.puts = 0

    def getValue(self, key):  # noqa: N802 - pyspark's names
        return self.data.get(key)

    def updateValue(self, key, value):  # noqa: N802
        if key != (stage_cache.VERSIONS,):  # the local copies' versions: one small write per call either way
            self.put_bytes += sum(len(v) for v in value if v)
            self.puts += 1
        self.data[key] = value

    def removeKey(self, key):  # noqa: N802
        self.data.pop(key, None)


class Handle:
    def __init__(self, state: MapState):
        self.state = state

    def getMapState(self, *_):  # noqa: N802
        return self.state


CONTROL = [pa.field(ks.W, pa.int32()), pa.field(ks.SRC, pa.int32()), pa.field(ks.KEY, pa.string()),
           pa.field(ks.SUB, pa.int32()), pa.field(ks.PK, pa.string()), pa.field(ks.POS, pa.int64())]


def stage_spec() -> ks.StageSpec:
    """users (upsert, keyed by its primary key) JOIN orders (a changelog keyed by the user), as the orders per
    account pipeline's join stage."""
    users = ks.InputSpec(ks.UPSERT, ("u_acct",), key_is_pk=True)
    orders = ks.InputSpec(ks.CHANGELOG, ("o_oid",), join="inner", joins_with=0)
    return ks.StageSpec((users, orders), pa.schema([pa.field("u_acct", pa.string()), pa.field("o_oid", pa.string()), *CONTROL]))


def outer_joins() -> ks.StageSpec:
    inputs = (ks.InputSpec(ks.UPSERT, ("u_acct",), key_is_pk=True),
              ks.InputSpec(ks.UPSERT, ("c_color",), join="left", joins_with=0, key_is_pk=True),
              ks.InputSpec(ks.CHANGELOG, ("h_cheese",), join="full", joins_with=0),
              ks.InputSpec(ks.CHANGELOG, (), join="anti", joins_with=0))  # fmt: skip
    payload = [pa.field(c, pa.string()) for c in ("u_acct", "c_color", "h_cheese")]
    return ks.StageSpec(inputs, pa.schema([*payload, *CONTROL]))


def semi_join() -> ks.StageSpec:
    inputs = (ks.InputSpec(ks.UPSERT, ("u_acct",), key_is_pk=True), ks.InputSpec(ks.CHANGELOG, (), join="semi"))
    return ks.StageSpec(inputs, pa.schema([pa.field("u_acct", pa.string()), *CONTROL]))


def aggregate() -> ks.StageSpec:
    functions = (("n", "count", None, False), ("lo", "min", "v", False), ("hi", "max", "v", False),
                 ("s", "sum", "v", False), ("d", "count", "v", True))  # fmt: skip
    schema = pa.schema([pa.field("g", pa.string()), pa.field("v", pa.int64()), *CONTROL])
    return ks.StageSpec((ks.InputSpec(ks.CHANGELOG, ("g", "v")),), schema,
                        aggregate=ks.AggregateSpec(("g",), functions, (pa.int64(),) * len(functions)))


def top_n(kind: str) -> ks.StageSpec:
    schema = pa.schema([pa.field("g", pa.string()), pa.field("v", pa.int64()), *CONTROL])
    return ks.StageSpec((ks.InputSpec(kind, ("g", "v")),), schema, rank=Rank((("v", True, False),), 2))


def changes(rng: random.Random, spec: ks.StageSpec, n: int, keys: int) -> pa.Table:
    """`n` random changes of `keys` keys, for any of the specs above (a NULL key now and then)."""
    grouped = spec.aggregate is not None or spec.rank is not None  # keyed by the column `g`
    rows = []
    for pos in range(n):
        i = rng.randrange(len(spec.inputs))
        source = spec.inputs[i]
        k = rng.randrange(keys)
        key = None if rng.random() < 0.02 else f"{'g' if grouped else 'u'}{k}"
        row = {f.name: None for f in spec.schema}
        for c in source.columns:
            row[c] = rng.randrange(10) if c == "v" else f"{c[0]}{rng.randrange(4)}"
        if grouped:
            row["g"] = key
        weight = 1 if source.kind == ks.APPEND else -1 if rng.random() < (0.1 if source.kind == ks.UPSERT else 0.4) else 1
        row.update({ks.SRC: i, ks.KEY: key, ks.SUB: (k if key else 0) % SUBS, ks.POS: pos, ks.W: weight,
                    ks.PK: key if source.kind == ks.UPSERT else None})
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=spec.schema)


def call(stage: so.SubBucketStage, table: pa.Table) -> list[tuple]:
    packed = pd.DataFrame({so.BUCKET_COLUMN: [0], so.ROWS_COLUMN: [ks.encode(table)]})
    frames = list(stage.handleInputRows((0,), iter([packed]), None))
    if not frames:
        return []
    out = pd.concat(frames)
    return sorted(map(tuple, out.astype(object).where(out.notna(), None).itertuples(index=False)), key=repr)


def rows_of(spec: ks.StageSpec, state: MapState) -> list[list[tuple]]:
    """Every input's current rows, read as the operator reads them (each sub-bucket's rows with the delta's)."""
    delta = so.decode_delta(spec, state.getValue((so.DELTA,)))
    changed = delta.filter(pc.equal(delta.column(ks.SRC), so.MARK)).column(ks.KEY)
    found: list[list[tuple]] = [[] for _ in spec.inputs]
    for i in range(len(spec.inputs)):
        for s in range(SUBS):
            value = state.getValue((s,))
            base = ks.decode_part(spec, i, value[i], s) if value and value[i] else spec.state_schema(i).empty_table()
            found[i] += [tuple(r.values()) for r in base.filter(pc.invert(so._in(base, changed))).to_pylist()]
        found[i] += [tuple(r.values()) for r in so._by_source(spec, delta)[i + 1].to_pylist()]
    return [sorted(rows, key=repr) for rows in found]


def stage(spec: ks.StageSpec, share: float, copies: str | None = None) -> tuple[so.SubBucketStage, MapState]:
    state = MapState()
    operator = so.SubBucketStage(spec, copies, delta_share=share)
    operator.init(Handle(state))
    return operator, state


SHAPES = {"join": stage_spec, "outer-and-anti-joins": outer_joins, "semi-join": semi_join, "aggregate": aggregate,
          "top-n-append": lambda: top_n(ks.APPEND), "top-n-changelog": lambda: top_n(ks.CHANGELOG)}


@pytest.mark.parametrize(("shape", "share", "copies"), [
    ("join", so.DELTA_SHARE, False), ("join", so.DELTA_SHARE, True), ("join", 0.5, True), ("join", 100.0, False),
    *((shape, share, False) for shape in list(SHAPES)[1:] for share in (so.DELTA_SHARE, 100.0)),
])  # fmt: skip
def test_deltas_give_the_output_and_rows_of_whole_rewrites(tmp_path, monkeypatch, shape, share, copies):
    """`share` 100: a sub-bucket is never rewritten once it has rows, everything goes through the delta."""
    monkeypatch.setattr(stage_cache, "folder", lambda scope: tmp_path / scope)
    spec = SHAPES[shape]()
    rng = random.Random(7)
    whole, whole_state = stage(spec, 0.0)  # never a delta: every touched sub-bucket rewritten, as before deltas
    tried, tried_state = stage(spec, share, "job" if copies else None)
    batches = [changes(rng, spec, 4000, 1200)] + [changes(rng, spec, rng.choice([2, 5, 20, 300]), 1200) for _ in range(40)]
    deltas = 0
    for n, table in enumerate(batches):
        assert call(tried, table) == call(whole, table), f"batch {n}"
        if n % 10 == 0 or n == len(batches) - 1:
            assert rows_of(spec, tried_state) == rows_of(spec, whole_state), f"batch {n}"
        assert (so.DELTA,) not in whole_state.data, "no delta when the share is 0"
        deltas += (so.DELTA,) in tried_state.data
    assert deltas, "a delta is kept"
    if share == so.DELTA_SHARE:
        assert tried_state.put_bytes < whole_state.put_bytes / 2, "the point: fewer bytes written"
        assert tried_state.puts < whole_state.puts * 0.6, "and fewer round trips to the state store"


def test_a_sub_buckets_rows_in_the_delta_are_folded_in_once_they_grow(tmp_path):
    spec = stage_spec()
    rng = random.Random(3)
    operator, state = stage(spec, so.DELTA_SHARE)
    call(operator, changes(rng, spec, 8000, 2000))
    assert (so.DELTA,) not in state.data, "a first write is whole"
    written = dict(state.data)
    call(operator, changes(rng, spec, 2, 2000))
    assert (so.DELTA,) in state.data
    assert all(state.data[(s,)] is written[(s,)] for s in range(SUBS)), "the sub-buckets are left as they were"
    folds = 0
    for _ in range(150):
        before = dict(state.data)
        call(operator, changes(rng, spec, 8, 2000))
        folds += sum(state.data.get((s,)) is not before.get((s,)) for s in range(SUBS))
        delta = so.decode_delta(spec, state.getValue((so.DELTA,)))
        in_delta = Counter(delta.column(ks.SUB).to_pylist())
        for s in range(SUBS):
            stored = sum(ks.decode_part(spec, i, blob, s).num_rows for i, blob in enumerate(state.data[(s,)]) if blob)
            assert in_delta[s] <= stored * so.DELTA_SHARE, "no sub-bucket's rows in the delta outgrow their share"
    assert 0 < folds < 150, "sub-buckets are written whole now and then, not at every call"


def test_state_written_before_deltas_reads_on(tmp_path):
    """A job's state from before deltas has no DELTAS entry: its sub-buckets are read as they are."""
    spec = stage_spec()
    rng = random.Random(5)
    before, state = stage(spec, 0.0)
    reference, reference_state = stage(spec, 0.0)
    first = changes(rng, spec, 2000, 300)
    call(before, first), call(reference, first)
    after = so.SubBucketStage(spec, None)
    after.init(Handle(state))
    for _ in range(30):
        table = changes(rng, spec, 10, 300)
        assert call(after, table) == call(reference, table)
    assert rows_of(spec, state) == rows_of(spec, reference_state)


def test_a_delta_round_trips_with_null_keys_and_marks():
    spec = stage_spec()
    keys = pa.table({ks.KEY: pa.array(["u1", None, "u2"]), ks.SUB: pa.array([1, 1, 2], pa.int32())})
    orders = pa.Table.from_pylist([{ks.KEY: "u1", ks.SUB: 1, ks.PK: None, ks.N: 2, "o_oid": "o1"}],
                                  schema=spec.state_schema(1))
    table = pa.concat_tables([so._marks(spec, keys), so._as_delta_rows(spec, 1, orders)])
    value = so.encode_delta(spec, table)
    assert value[1] is None, "one blob, in the first field"
    back = so.decode_delta(spec, value)
    assert back.equals(table)
    marks, users, orders_back = so._by_source(spec, back)
    assert marks.num_rows == 3 and users.num_rows == 0 and orders_back.equals(orders)
    assert so.decode_delta(spec, None).num_rows == 0
    assert so._unique_keys(pa.concat_tables([keys, keys])).equals(keys)
