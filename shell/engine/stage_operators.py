"""The Spark operators that run the keyed stage (engine/keyed_stage.py) and keep its rows in Spark's state store.

Why it exists: the stage's step is pure Arrow; this module is where it meets Spark's state API, and the only place
that knows how the rows are stored.

- `SubBucketStage` (`transformWithStateInPandas`): per key bucket, a MapState from sub-bucket to that
  sub-bucket's rows (one Arrow IPC blob per input). A call reads and writes only the sub-buckets its batch
  touches, so few buckets (few Python calls per micro-batch, each with a fixed cost) do not mean large reads:
  docs/changelog-engine.md, "Design 1b", has the measurements behind this layout. A sub-bucket is read from
  its local copy when there is one of the version the state store holds (engine/stage_cache.py).
- `temporal_operator` and `over_operator` (`applyInPandasWithState` with an event-time timeout): the temporal
  join and the OVER aggregation (engine/over_stage.py), whose waiting rows are woken by the watermark; a bucket's
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


class SubBucketStage(StatefulProcessor):
    """The keyed stage (joins, Top-N, aggregates in the stage) over sub-bucketed state."""

    def __init__(self, spec: ks.StageSpec, copies_scope: str | None = None):
        self.spec = spec
        self.copies_scope = copies_scope  # the job's local copies of its sub-buckets (engine/stage_cache.py)

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.rows = handle.getMapState("rows", StructType([StructField("sub", IntegerType())]),
                                       state_value_type(self.spec))

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:  # noqa: ANN001, N802 - Spark's API
        spec = self.spec
        batch = _unpack(spec, rows)
        subs = sorted(pc.unique(batch.column(ks.SUB)).to_pylist())
        copies = None
        if self.copies_scope is not None:
            versions = self.rows.getValue((stage_cache.VERSIONS,))
            copies = stage_cache.Copies(stage_cache.folder(self.copies_scope), int(key[0]), versions and versions[0])
        stored = {}
        for s in subs:
            value = copies.read(s) if copies is not None else stage_cache.MISS
            stored[s] = self.rows.getValue((s,)) if value is stage_cache.MISS else value
        old = []
        for i in range(len(spec.inputs)):
            parts = [ks.decode_part(spec, i, value[i], s) for s, value in stored.items() if value is not None]
            old.append(pa.concat_tables(parts) if parts else spec.state_schema(i).empty_table())
        change = ks.step(spec, old, batch)
        for s, tables in ks.by_sub_bucket(change.state, subs).items():
            value = None
            if any(t.num_rows for t in tables):
                value = tuple(ks.encode_part(spec, i, t) for i, t in enumerate(tables))
                self.rows.updateValue((s,), value)
            elif stored[s] is not None:
                self.rows.removeKey((s,))
            if copies is not None:
                copies.write(s, value)
        if copies is not None:
            self.rows.updateValue((stage_cache.VERSIONS,), copies.state_value(len(spec.inputs)))
        else:  # versions left from a run with copies would name copies of sub-buckets since rewritten
            self.rows.removeKey((stage_cache.VERSIONS,))
        if change.output.num_rows:
            yield change.output.to_pandas(date_as_object=True)


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
    return _event_time_operator(spec, schemas, ks.step_temporal)


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
