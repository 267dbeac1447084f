"""The Spark operators that run the keyed stage (engine/keyed_stage.py) and keep its rows in Spark's state store.

Why it exists: the stage's step is pure Arrow; this module is where it meets Spark's state API, and the only place
that knows how the rows are stored.

- `SubBucketStage` (`transformWithStateInPandas`): per key bucket, a MapState from sub-bucket to that
  sub-bucket's rows (one Arrow IPC blob per input). A call reads and writes only the sub-buckets its batch
  touches, so few buckets (few Python calls per micro-batch, each with a fixed cost) do not mean large reads:
  docs/changelog-engine.md, "Design 1b", has the measurements behind this layout. A sub-bucket is read from
  its local copy when there is one of the version the state store holds (engine/stage_cache.py).
- `temporal_operator`, `window_rank_operator` and `over_operator` (`applyInPandasWithState` with an event-time
  timeout): the temporal join, the window Top-N and the OVER aggregation (engine/over_stage.py), whose waiting rows
  are woken by the watermark; a bucket's
  state is one value (every sub-bucket), since the timeout must see the earliest waiting row of the whole bucket.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

from shell.engine import event_time_steps
from shell.engine import keyed_stage as ks
from shell.engine import over_stage
from shell.engine import stage_cache


def state_value_type(spec: ks.StageSpec) -> StructType:
    """One binary field per input: its rows in a (sub-)bucket, as an Arrow IPC stream."""
    return StructType([StructField(f"s{i}", BinaryType(), True) for i in range(len(spec.inputs))])


BUCKET_COLUMN, ROWS_COLUMN = "stage_bucket", "stage_rows"
PACKED_SCHEMA = f"{BUCKET_COLUMN} INT, {ROWS_COLUMN} BINARY"


def pack_by_bucket(spec: ks.StageSpec, bucket: str):  # noqa: ANN201 - the function mapInArrow calls
    """Each Arrow batch of the stage's input as one row per bucket holding that bucket's rows (an Arrow IPC blob).

    Why: `transformWithStateInPandas` hands its input to Python one row at a time (pyspark converts each row to a
    tuple and back); packed, that is one row per bucket and input partition, and the stage gets its rows as Arrow,
    as they were. Runs before the shuffle, in the input's partitions."""
    names = spec.schema.names

    def pack(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            table = pa.Table.from_batches([batch])
            rows = pa.Table.from_arrays([table.column(n).cast(spec.schema.field(n).type) for n in names],
                                        schema=spec.schema)
            groups = ks.split_by(rows, table.column(bucket).to_numpy(zero_copy_only=False).astype(np.int64))
            blobs = [ks.encode(group) for group in groups.values()]
            yield pa.RecordBatch.from_arrays([pa.array(list(groups), pa.int32()), pa.array(blobs, pa.binary())],
                                             names=[BUCKET_COLUMN, ROWS_COLUMN])

    return pack


def _unpack(spec: ks.StageSpec, frames: Iterator[pd.DataFrame]) -> pa.Table:
    """The bucket's rows, out of the packed rows `pack_by_bucket` made."""
    blobs = [blob for frame in frames for blob in frame.iloc[:, 1]]  # pyspark renames the columns here: by position
    if not blobs:
        return spec.schema.empty_table()
    return pa.concat_tables([ks.decode(blob, spec.schema) for blob in blobs])


DELTA = -2  # the bucket's entry holding its delta (stage_cache.VERSIONS is -1)
DELTA_SHARE = 1 / 8  # a sub-bucket's rows in the delta are folded into it once they outnumber this share of its rows
MARK = -1  # the `__src` of a delta's row that names a key the delta holds (the key's rows, if any, follow it)


class SubBucketStage(StatefulProcessor):
    """The keyed stage (joins, Top-N, aggregates in the stage) over sub-bucketed state.

    A bucket's MapState holds, under sub-bucket s >= 0, the sub-bucket's rows (one blob per input), and under
    `DELTA` the bucket's *delta*: keys changed since their sub-bucket was last written, with the current rows of
    those keys (none for a key that is gone). A sub-bucket's rows are its stored rows of the keys not in the
    delta plus the delta's rows of its keys. A call writes the delta, once, and not the sub-buckets it touches: at
    1K changes/s a micro-batch touches nearly every sub-bucket for a few keys each, and each write is a round trip
    to the JVM's state server (~1 ms on a busy machine) carrying the whole sub-bucket (docs/changelog-engine.md).
    Once a touched sub-bucket's rows in the delta outnumber `delta_share` of its own, the call writes the
    sub-bucket whole again, with them folded in, and leaves them out of the delta. The batch is stepped over the
    touched keys' rows alone (`ks.step` leaves the other keys' rows as they are)."""

    def __init__(self, spec: ks.StageSpec, copies_scope: str | None = None, delta_share: float = DELTA_SHARE):
        self.spec = spec
        self.copies_scope = copies_scope  # the job's local copies of its sub-buckets (engine/stage_cache.py)
        self.delta_share = delta_share

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.rows = handle.getMapState("rows", StructType([StructField("sub", IntegerType())]),
                                       state_value_type(self.spec))

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:  # noqa: ANN001, N802 - Spark's API
        spec = self.spec
        inputs = range(len(spec.inputs))
        batch = _unpack(spec, rows)
        if batch.num_rows == 0:
            return
        subs = sorted(pc.unique(batch.column(ks.SUB)).to_pylist())
        copies = None
        if self.copies_scope is not None:
            versions = self.rows.getValue((stage_cache.VERSIONS,))
            copies = stage_cache.Copies(stage_cache.folder(self.copies_scope), int(key[0]), versions and versions[0])

        def load(entry: int) -> tuple | None:
            value = copies.read(entry) if copies is not None else stage_cache.MISS
            return self.rows.getValue((entry,)) if value is stage_cache.MISS else value

        stored = {s: load(s) for s in subs}  # each touched sub-bucket's stored rows (a blob per input), or None
        base = [_concat(spec.state_schema(i), [ks.decode_part(spec, i, value[i], s) for s, value in stored.items()
                                               if value is not None and value[i] is not None]) for i in inputs]
        # with copies, the versions in state name the delta whenever there is one: no delta is looked for in vain
        looked = copies is None or not copies.known or DELTA in copies.versions
        had_delta = (delta_value := load(DELTA) if looked else None) is not None
        delta = decode_delta(spec, delta_value)
        marks, *held = _by_source(spec, delta)  # the keys the delta holds, and each input's rows in it
        touched = pc.unique(batch.column(ks.KEY))
        base_touched = [_in(t, touched) for t in base]
        old, kept = [], []  # each input's rows of the touched keys (from the delta for a key it holds, else the
        for i in inputs:  # stored ones), and its rows in the delta of the other keys
            in_batch = _in(held[i], touched)
            stored_rows = base[i].filter(base_touched[i])
            if marks.num_rows:
                stored_rows = stored_rows.filter(pc.invert(_in(stored_rows, marks.column(ks.KEY))))
            old.append(pa.concat_tables([held[i].filter(in_batch), stored_rows]))
            kept.append(held[i].filter(pc.invert(in_batch)))
        change = ks.step(spec, old, batch)  # the touched keys' rows after the batch, and the change of the result
        # The delta after the call: its keys and the batch's, with the rows it held of the keys the batch did not
        # touch and the touched keys' rows now.
        keys = _unique_keys(pa.concat_tables([marks.select([ks.KEY, ks.SUB]), batch.select([ks.KEY, ks.SUB])]))
        now = [pa.concat_tables([kept[i], change.state[i]]) for i in inputs]
        delta = pa.concat_tables([_marks(spec, keys), *(_as_delta_rows(spec, i, now[i]) for i in inputs)])
        size = max(subs) + 1
        in_delta = np.bincount(delta.column(ks.SUB).to_numpy(zero_copy_only=False), minlength=size)
        in_base = sum(np.bincount(t.column(ks.SUB).to_numpy(zero_copy_only=False), minlength=size) for t in base)
        folding = [s for s in subs if stored[s] is None or in_delta[s] > in_base[s] * self.delta_share]
        if folding:  # these sub-buckets are written whole again: their stored rows of other keys, and the delta's
            chosen = pa.array(folding, spec.schema.field(ks.SUB).type)
            every = len(folding) == len(subs)  # `base` holds the touched sub-buckets' rows only
            # the stored rows of keys in the delta after the call (the touched keys and the delta's own) are replaced
            shadowed = [t if not marks.num_rows else pc.or_(t, _in(b, marks.column(ks.KEY)))
                        for t, b in zip(base_touched, base)]
            whole = [pa.concat_tables([
                base[i].filter(pc.invert(shadowed[i]) if every else pc.and_(_of(base[i], chosen), pc.invert(shadowed[i]))),
                now[i].filter(_of(now[i], chosen)),
            ]) for i in inputs]  # fmt: skip
            for s, tables in ks.by_sub_bucket(whole, folding).items():
                value = None
                if any(t.num_rows for t in tables):
                    value = tuple(ks.encode_part(spec, i, t) for i, t in enumerate(tables))
                    self.rows.updateValue((s,), value)
                elif stored[s] is not None:
                    self.rows.removeKey((s,))
                if copies is not None:
                    copies.write(s, value)
            delta = delta.filter(pc.invert(_of(delta, chosen)))
        if delta.num_rows:
            value = encode_delta(spec, delta.combine_chunks())
            self.rows.updateValue((DELTA,), value)
            if copies is not None:
                copies.write(DELTA, value)
        elif had_delta:
            self.rows.removeKey((DELTA,))
            if copies is not None:
                copies.forget(DELTA)
        if copies is not None:
            self.rows.updateValue((stage_cache.VERSIONS,), copies.state_value(len(spec.inputs)))
        else:  # versions left from a run with copies would name copies of sub-buckets since rewritten
            self.rows.removeKey((stage_cache.VERSIONS,))
        if change.output.num_rows:
            yield change.output.to_pandas(date_as_object=True)


# ---- a bucket's delta --------------------------------------------------------------------------------------------
# A delta is one Arrow IPC blob of rows in one schema for every input: `__src` (the input, or MARK for a row that
# only names a key), the key, its sub-bucket, the primary key, the count and every input's columns (NULL where
# another input's).


def _delta_schema(spec: ks.StageSpec) -> pa.Schema:
    fields = [spec.schema.field(ks.SRC), spec.schema.field(ks.KEY), spec.schema.field(ks.SUB), spec.schema.field(ks.PK),
              pa.field(ks.N, pa.int64())]
    return pa.schema(fields + [spec.schema.field(c) for source in spec.inputs for c in source.columns])


def encode_delta(spec: ks.StageSpec, table: pa.Table) -> tuple:
    """A bucket's delta (rows in `_delta_schema(spec)`) as the state store keeps it: one blob, in the first field."""
    return (ks.encode(table),) + (None,) * (len(spec.inputs) - 1)


def decode_delta(spec: ks.StageSpec, value: tuple | None) -> pa.Table:
    """What `encode_delta` made (no rows: no delta)."""
    if value is None or not value[0]:
        return _delta_schema(spec).empty_table()
    return ks.decode(value[0], _delta_schema(spec))


def _by_source(spec: ks.StageSpec, delta: pa.Table) -> list[pa.Table]:
    """A delta's rows naming its keys, then each input's rows in its state's schema. A delta is written in that
    order (`__src` ascending), so each part is a slice; a delta in another order is filtered."""
    sources = delta.column(ks.SRC).to_numpy(zero_copy_only=False)
    wanted = np.arange(MARK, len(spec.inputs))
    if np.all(sources[1:] >= sources[:-1]):
        starts = np.searchsorted(sources, wanted, side="left")
        ends = np.searchsorted(sources, wanted, side="right")
        parts = [delta.slice(a, b - a) for a, b in zip(starts.tolist(), ends.tolist())]
    else:
        parts = [delta.filter(pa.array(sources == n)) for n in wanted.tolist()]
    schemas = [spec.state_schema(i) for i in range(len(spec.inputs))]
    return [parts[0]] + [pa.Table.from_arrays([p.column(name) for name in s.names], schema=s)
                         for p, s in zip(parts[1:], schemas)]


def _as_delta_rows(spec: ks.StageSpec, i: int, table: pa.Table) -> pa.Table:
    """Input `i`'s rows (in its state's schema) as rows of a delta."""
    schema = _delta_schema(spec)
    n = table.num_rows
    source = pa.array(np.full(n, i, dtype=np.int32), schema.field(ks.SRC).type)
    columns = [source if f.name == ks.SRC else table.column(f.name) if f.name in table.column_names else pa.nulls(n, f.type)
               for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _marks(spec: ks.StageSpec, keys: pa.Table) -> pa.Table:
    """A delta's rows naming `keys` (a key and its sub-bucket per row)."""
    schema = _delta_schema(spec)
    n = keys.num_rows
    mark = pa.array(np.full(n, MARK, dtype=np.int32), schema.field(ks.SRC).type)
    columns = [mark if f.name == ks.SRC else keys.column(f.name) if f.name in (ks.KEY, ks.SUB) else pa.nulls(n, f.type)
               for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _unique_keys(table: pa.Table) -> pa.Table:
    """The rows of `table` with a key not seen before in it (NULL is a key too: the stage keeps NULL-key rows)."""
    codes, _ = ks._value_codes(table.column(ks.KEY))  # noqa: SLF001 - the stage's own value codes
    _, first = np.unique(codes, return_index=True)
    return table.take(pa.array(np.sort(first)))


def _in(table: pa.Table, keys: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    """Whether each row's key is one of `keys` (NULL matches NULL, as the stage's `step` matches them)."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    return pc.is_in(table.column(ks.KEY), value_set=keys, skip_nulls=False)


def _of(table: pa.Table, subs: pa.Array) -> pa.ChunkedArray:
    """Whether each row is of one of the sub-buckets `subs`."""
    return pc.is_in(table.column(ks.SUB), value_set=subs)


def _concat(schema: pa.Schema, tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _frames_to_table(spec: ks.StageSpec | over_stage.OverSpec, frames: Iterator[pd.DataFrame]) -> pa.Table:
    parts = list(frames)
    if not parts:
        return spec.schema.empty_table()
    return pa.Table.from_pandas(pd.concat(parts, ignore_index=True), schema=spec.schema, preserve_index=False)


def wake_time(wake_at: int, watermark_ms: int) -> int:
    """The event-time timeout (ms) that wakes a bucket once the watermark reaches `wake_at` (us). Spark times out
    when the watermark passes the timestamp, Flink fires a timer when it reaches it: one millisecond earlier."""
    return max(wake_at // 1000 - 1, watermark_ms)


def temporal_operator(spec: ks.StageSpec):  # noqa: ANN201 - the function applyInPandasWithState calls
    """The function Spark calls once per touched (or timed-out) bucket of a temporal join."""
    schemas = [spec.state_schema(i) for i in range(len(spec.inputs))]
    return _event_time_operator(spec, schemas, event_time_steps.step_temporal)


def window_rank_operator(spec: ks.StageSpec):  # noqa: ANN201 - the function applyInPandasWithState calls
    """The function Spark calls once per touched (or timed-out) bucket of a window Top-N."""
    return _event_time_operator(spec, [spec.state_schema(0)], event_time_steps.step_window_rank)


OVER_STATE_TYPE = StructType([StructField("waiting", BinaryType(), True), StructField("history", BinaryType(), True)])


def over_operator(spec: over_stage.OverSpec):  # noqa: ANN201 - the function applyInPandasWithState calls
    """The function Spark calls once per touched (or timed-out) bucket of an OVER aggregation."""
    return _event_time_operator(spec, [spec.waiting_schema(), spec.history_schema()], over_stage.step_over)


def _event_time_operator(spec, schemas: list[pa.Schema], step):  # noqa: ANN001, ANN202 - see the two above
    """A bucket's state is one Arrow blob per schema; `step(spec, old, batch, watermark_us)` returns the state after
    the batch, the rows to emit and when the earliest waiting row is due (`wake_at`, or None)."""

    def operator(_bucket: tuple, frames: Iterator[pd.DataFrame], state) -> Iterator[pd.DataFrame]:  # noqa: ANN001
        batch = _frames_to_table(spec, frames)  # empty: the bucket was called because its timeout passed
        old = [ks.decode(state.get[i], schema) if state.exists else schema.empty_table()
               for i, schema in enumerate(schemas)]
        change = step(spec, old, batch, state.getCurrentWatermarkMs() * 1000)
        if all(t.num_rows == 0 for t in change.state):
            state.remove()
        else:
            state.update(tuple(ks.encode(t) for t in change.state))
            if change.wake_at is not None:
                state.setTimeoutTimestamp(wake_time(change.wake_at, state.getCurrentWatermarkMs()))
        if change.output.num_rows:
            yield change.output.to_pandas(date_as_object=True)

    return operator
