"""The keyed stage's steps that wait for event time: a window Top-N and an event-time temporal join.

Why it exists: both keep their rows as the keyed stage does (engine/keyed_stage.py, whose helpers they use) but
are woken by Spark's event-time timeout rather than by new rows: a window's rows wait until it closes, a left row
until the watermark passes its time and it meets the version valid then. Pure functions, Arrow tables in and out;
engine/stage_operators.py runs them in Spark.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from shell.engine.keyed_stage import KEY, N, POS, SRC, W, StageSpec, Step, _apply_weighted, _join, _top
from shell.planner.stages import Rank, Temporal


def step_window_rank(spec: StageSpec, old: list[pa.Table], batch: pa.Table, watermark: int) -> Step:
    """One batch of a window Top-N (keyed by PARTITION BY, which holds the window), watermark in microseconds.

    As Flink's window Top-N: the rows of a window wait until it closes (the watermark reaches its end minus one
    millisecond, when Flink fires it), then the first `limit` of each key leave once, numbered, insert-only, and the
    window's rows are forgotten. Over a window aggregation the rows arrive as their window closes and leave at once;
    over the window's own rows (`drop_late`) a row whose window has closed already is late and dropped.
    """
    rank = spec.rank
    rows = batch
    if rank.drop_late and rows.num_rows:
        rows = rows.filter(pa.array(~_closed(rows, rank, watermark)))
    schema = spec.state_schema(0)
    waiting = _apply_weighted(old[0], rows, schema, [KEY, *spec.inputs[0].columns]) if rows.num_rows else old[0]
    closed = _closed(waiting, rank, watermark)
    ready, still = waiting.filter(pa.array(closed)), waiting.filter(pa.array(~closed))
    (counts, ranked), _ = _top(rank, _join(spec, [ready]), ready)
    output = ranked.append_column(pa.field(W, pa.int64()), pa.array(counts))
    ends = _micros(still.column(rank.window_end))
    return Step([still], output, int(ends.min()) - 1000 if len(ends) else None)


def _closed(rows: pa.Table, rank: Rank, watermark: int) -> np.ndarray:
    """Whether each row's window has closed: the watermark has reached its end minus one millisecond."""
    return _micros(rows.column(rank.window_end)) - 1000 <= watermark


# ---- event-time temporal join ------------------------------------------------------------------------------


def step_temporal(spec: StageSpec, old: list[pa.Table], batch: pa.Table, watermark: int) -> Step:
    """One batch of a temporal join, with the watermark in microseconds (pure; no Spark here).

    State 0 holds the left rows still waiting (a multiset, as `_apply_weighted` keeps it); state 1 the versions of
    the versioned table in arrival order, `__n` = +1 for a version and -1 for a delete. A left row is joined once the
    watermark has passed its time, with the latest version of its key at or before that time (the last to arrive
    among equal times), as Flink does; a delete there, or no version at all, means no match (NULLs for LEFT JOIN).
    Versions that no waiting or future row can see any more are dropped: all but the latest one at or before the
    watermark, per key.
    """
    temporal = spec.temporal
    sources = batch.column(SRC).to_numpy(zero_copy_only=False)
    waiting = _apply_weighted(old[0], batch.filter(pa.array(sources == 0)), spec.state_schema(0),
                              [KEY, *spec.inputs[0].columns]) \
        if (sources == 0).any() else old[0]
    versions = _add_versions(old[1], batch.filter(pa.array(sources == 1)), spec.state_schema(1), temporal, watermark)
    left_times = _micros(waiting.column(temporal.left_time))
    due = np.isnan(left_times) | (left_times <= watermark)
    ready, still = waiting.filter(pa.array(due)), waiting.filter(pa.array(~due))
    timeline = _version_frame(versions, temporal)  # sorted once: the lookup and the pruning both read it
    output = _join_versions(spec, ready, versions, timeline)
    kept = _prune_versions(versions, timeline, watermark)
    times = _micros(still.column(temporal.left_time))
    return Step([still, kept], output, int(np.nanmin(times)) if len(times) else None)


def _micros(column: pa.ChunkedArray) -> np.ndarray:
    """Event times as float microseconds (NaN for NULL), so they compare with the watermark."""
    values = pc.cast(column, pa.int64()).to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype="float64")


def _add_versions(old: pa.Table, rows: pa.Table, schema: pa.Schema, temporal: Temporal, watermark: int) -> pa.Table:
    """Append the batch's versions (ordered as they arrived); a delete without a time takes effect at the watermark."""
    if rows.num_rows == 0:
        return old
    rows = rows.take(pa.array(np.argsort(rows.column(POS).to_numpy(), kind="stable")))
    marks = pa.array(np.where(rows.column(W).to_numpy(zero_copy_only=False) > 0, 1, -1).astype(np.int64))
    time = rows.column(temporal.right_time)
    now = pa.scalar(watermark, pa.int64()).cast(time.type) if watermark > 0 else None
    if now is not None:
        time = pc.if_else(pc.and_(pc.is_null(time), pc.less(marks, 0)), now, time)
    fresh = pa.table({f.name: (marks if f.name == N else time if f.name == temporal.right_time else rows.column(f.name))
                      for f in schema}, schema=schema)
    return pa.concat_tables([old, fresh])


def _version_frame(versions: pa.Table, temporal: Temporal) -> pd.DataFrame:
    """Key, time (us) and row of every version that can match, ordered by time, then arrival."""
    frame = pd.DataFrame({"k": versions.column(KEY).to_numpy(zero_copy_only=False).astype(object),
                          "t": _micros(versions.column(temporal.right_time)),
                          "v": np.arange(versions.num_rows)})
    return frame[frame["t"].notna() & frame["k"].notna()].sort_values(["t", "v"], kind="stable")


def _join_versions(spec: StageSpec, ready: pa.Table, versions: pa.Table, right: pd.DataFrame) -> pa.Table:
    """Each ready left row with its version (weight = the row's count); inner join drops rows without one."""
    temporal = spec.temporal
    left_columns, right_columns = spec.inputs[0].columns, spec.inputs[1].columns
    left = pd.DataFrame({"k": ready.column(KEY).to_numpy(zero_copy_only=False).astype(object),
                         "t": _micros(ready.column(temporal.left_time)), "r": np.arange(ready.num_rows)})
    matched = np.full(ready.num_rows, -1, dtype=np.int64)
    searchable = left[left["t"].notna() & left["k"].notna()].sort_values("t", kind="stable")
    if len(searchable) and len(right):
        found = pd.merge_asof(searchable, right, on="t", by="k", direction="backward", allow_exact_matches=True)
        rows, version = found["r"].to_numpy(), found["v"].to_numpy(dtype="float64", na_value=np.nan)
        hit = ~np.isnan(version)
        matched[rows[hit]] = version[hit].astype(np.int64)
    if versions.num_rows:
        marks = versions.column(N).to_numpy()
        matched = np.where((matched >= 0) & (marks[np.maximum(matched, 0)] > 0), matched, -1)
    keep = np.arange(ready.num_rows) if temporal.outer else np.flatnonzero(matched >= 0)
    take_right = pa.array(np.maximum(matched[keep], 0), mask=matched[keep] < 0)
    columns = {c: ready.column(c).take(pa.array(keep)) for c in left_columns}
    for c in right_columns:
        columns[c] = versions.column(c).take(take_right) if versions.num_rows else \
            pa.nulls(len(keep), versions.schema.field(c).type)
    columns[W] = pa.array(ready.column(N).to_numpy()[keep], pa.int64())
    return pa.table(columns, schema=spec.output_schema())


def _prune_versions(versions: pa.Table, frame: pd.DataFrame, watermark: int) -> pa.Table:
    """Keep, per key, the versions after the watermark and the latest one at or before it."""
    if versions.num_rows == 0:
        return versions
    settled = frame[frame["t"] <= watermark]
    latest = settled.groupby("k", sort=False)["v"].last()
    keep = np.concatenate([frame.loc[frame["t"] > watermark, "v"].to_numpy(), latest.to_numpy()])
    return versions.take(pa.array(np.sort(keep)))
