"""OVER aggregations in event time: a row waits in keyed state until the watermark passes its time, then leaves
with the aggregates of its frame, the rows of its partition up to it in event-time order.

Why it exists: Spark's streaming queries refuse window functions, and Flink runs
`SUM(x) OVER (PARTITION BY k ORDER BY rowtime ROWS|RANGE BETWEEN .. PRECEDING AND CURRENT ROW)` over append-only
input, emitting each row once, when the watermark passes it (a row that arrives behind the watermark is late and
dropped). This module is the pure part (Arrow in, Arrow out); engine/stage_operators.py runs it with Spark's
event-time timeout, one call per key bucket.

A call works on the whole bucket at once: its rows are sorted by (key, time, arrival), so each row's frame is an
interval [start, end] of that order. Sums and counts are differences of prefix sums; MIN and MAX are range-minimum
queries on a sparse table of the values' sorted codes. No Python runs per row or per key.

- ROWS BETWEEN n PRECEDING: the row and the n before it (rows with equal times in the order they arrived).
- RANGE BETWEEN INTERVAL .. PRECEDING: the rows whose time is at most the interval before the row's time; rows
  with equal times are peers and all get the same result (frame end = the last peer).
- UNBOUNDED PRECEDING (also no frame at all: Flink's default is RANGE UNBOUNDED PRECEDING): every row so far.

State per bucket, two Arrow tables: the rows still waiting (KEY and the input's columns, in arrival order), and
per key what later frames still need, in one *contribution* form (a row count, and per argument its sum, count of
values, minimum and maximum): the last n rows (ROWS), the rows no older than the watermark minus the interval
(RANGE), or one row of running totals without a time (UNBOUNDED).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from shell.engine.keyed_stage import KEY, SRC, W, Step

TIME, ROWS = "__t", "__rows"  # history: a row's time (us; NULL for running totals) and how many rows it stands for


@dataclass(frozen=True)
class OverSpec:
    """What the operator needs to know, pickled to the Python workers with it."""

    schema: pa.Schema  # the stage's input columns (the input's columns, then the control columns)
    columns: tuple[str, ...]  # the input's columns (stage names), passed through to the output
    time: str  # the stage column of the rowtime the rows are ordered by
    rows: bool  # a ROWS frame (else RANGE)
    preceding: int | None  # ROWS: how many rows before the current one; RANGE: microseconds; None: UNBOUNDED
    functions: tuple[tuple[str, str, str | None], ...]  # (output column, count|sum|avg|min|max, argument or None)
    types: tuple[pa.DataType, ...]  # of each output column

    @property
    def arguments(self) -> list[str]:
        return sorted({a for _, _, a in self.functions if a is not None})

    def waiting_schema(self) -> pa.Schema:
        return pa.schema([self.schema.field(KEY)] + [self.schema.field(c) for c in self.columns])

    def history_schema(self) -> pa.Schema:
        fields = [self.schema.field(KEY), pa.field(TIME, pa.int64()), pa.field(ROWS, pa.int64())]
        for i, name in enumerate(self.arguments):
            kind = self.schema.field(name).type
            fields += [pa.field(f"__s{i}", _sum_type(kind)), pa.field(f"__c{i}", pa.int64()),
                       pa.field(f"__lo{i}", kind), pa.field(f"__hi{i}", kind)]
        return pa.schema(fields)

    def output_schema(self) -> pa.Schema:
        fields = [self.schema.field(c) for c in self.columns]
        fields += [pa.field(name, kind) for (name, _, _), kind in zip(self.functions, self.types)]
        return pa.schema(fields + [pa.field(W, pa.int64())])


def _sum_type(kind: pa.DataType) -> pa.DataType:
    return pa.int64() if pa.types.is_integer(kind) else pa.float64()


def micros(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Event times as float microseconds (NaN for NULL), so they compare with the watermark."""
    return np.asarray(pc.cast(column, pa.int64()).to_numpy(zero_copy_only=False), dtype="float64")


def step_over(spec: OverSpec, old: list[pa.Table], batch: pa.Table, watermark: int) -> Step:
    """One batch of one bucket, with the watermark in microseconds: (waiting rows, history) after it, the rows the
    watermark released with their aggregates (weight 1 each), and when to wake for the next waiting row."""
    waiting, history = old
    if batch.num_rows:
        arriving = batch.filter(pc.equal(batch.column(SRC), 0)).select(spec.waiting_schema().names)
        times = micros(arriving.column(spec.time))
        arriving = arriving.filter(pa.array(~np.isnan(times) & (times > watermark)))  # late rows are dropped
        waiting = pa.concat_tables([waiting, arriving.cast(spec.waiting_schema())])
    times = micros(waiting.column(spec.time))
    due = times <= watermark
    ready, still = waiting.filter(pa.array(due)), waiting.filter(pa.array(~due))
    wake_at = int(times[~due].min()) if (~due).any() else None
    if ready.num_rows == 0:
        return Step([still, history], spec.output_schema().empty_table(), wake_at)
    output, history = _release(spec, history, ready, watermark)
    return Step([still, history], output, wake_at)


def _contributions(spec: OverSpec, ready: pa.Table) -> pa.Table:
    """The released rows in history form: each stands for one row, its argument values as sum, count, min, max."""
    schema = spec.history_schema()
    columns = {KEY: ready.column(KEY), TIME: pc.cast(ready.column(spec.time), pa.int64()),
               ROWS: pa.array(np.ones(ready.num_rows, np.int64))}
    for i, name in enumerate(spec.arguments):
        values = ready.column(name)
        kind = schema.field(f"__s{i}").type
        numeric = pa.types.is_integer(values.type) or pa.types.is_floating(values.type) or pa.types.is_decimal(values.type)
        columns[f"__s{i}"] = pc.fill_null(pc.cast(values, kind), 0) if numeric else \
            pa.array(np.zeros(ready.num_rows), kind)  # only MIN and MAX read a non-number
        columns[f"__c{i}"] = pc.cast(pc.is_valid(values), pa.int64())
        columns[f"__lo{i}"] = columns[f"__hi{i}"] = values
    return pa.table([columns[f.name] for f in schema], schema=schema)


def _release(spec: OverSpec, history: pa.Table, ready: pa.Table, watermark: int) -> tuple[pa.Table, pa.Table]:
    """The ready rows with their frames' aggregates, and the history the next rows will need."""
    rows = pa.concat_tables([history, _contributions(spec, ready)])
    released = np.arange(rows.num_rows) >= history.num_rows
    keys = pd.factorize(rows.column(KEY).to_pandas(), use_na_sentinel=False)[0].astype(np.int64)
    times = rows.column(TIME).to_numpy(zero_copy_only=False)
    times = np.asarray(times, dtype="float64")  # NaN: running totals, which come before every row of their key
    distinct = np.unique(times[~np.isnan(times)])
    rank = np.where(np.isnan(times), 0, np.searchsorted(distinct, np.nan_to_num(times)) + 1).astype(np.int64)
    order = np.lexsort((np.arange(rows.num_rows), rank, keys))
    rows, keys, rank, released = rows.take(pa.array(order)), keys[order], rank[order], released[order]
    times = times[order]
    place = keys * (len(distinct) + 2) + rank  # increasing along the order: (key, time) as one number
    first = np.searchsorted(keys, keys, "left")
    last = np.searchsorted(keys, keys, "right") - 1
    index = np.arange(rows.num_rows)
    if spec.rows:
        end = index
        start = first if spec.preceding is None else np.maximum(first, index - spec.preceding)
    else:
        end = np.searchsorted(place, place, "right") - 1  # the last peer
        if spec.preceding is None:
            start = first
        else:
            lowest = np.searchsorted(distinct, np.nan_to_num(times) - spec.preceding, "left") + 1
            start = np.searchsorted(place, keys * (len(distinct) + 2) + lowest, "left")
    shown = np.flatnonzero(released)
    payload = ready.take(pa.array(order[shown] - history.num_rows)).select(list(spec.columns))
    output = _aggregates(spec, rows, start[shown], end[shown], payload)
    return output, _kept(spec, rows, first, last, times, watermark)


def _aggregates(spec: OverSpec, rows: pa.Table, start: np.ndarray, end: np.ndarray, payload: pa.Table) -> pa.Table:
    """`payload` (one row per frame) with each function over its frame [start, end] of `rows` (history form)."""
    columns = {c: payload.column(c) for c in spec.columns}
    counted = _window_sum(rows.column(ROWS), start, end)
    arguments = spec.arguments
    for (name, function, argument), kind in zip(spec.functions, spec.types):
        if argument is None:
            columns[name] = pa.array(counted, kind)
            continue
        i = arguments.index(argument)
        present = _window_sum(rows.column(f"__c{i}"), start, end)
        if function == "count":
            columns[name] = pa.array(present, kind)
        elif function in ("min", "max"):
            columns[name] = _window_extreme(rows.column(f"__{'lo' if function == 'min' else 'hi'}{i}"), start, end,
                                            function).cast(kind)
        else:
            total = _window_sum(rows.column(f"__s{i}"), start, end)
            if function == "avg":
                mean = total.astype("float64") / np.where(present > 0, present, 1)
                total = np.trunc(mean).astype(np.int64) if pa.types.is_integer(kind) else mean
            columns[name] = pa.array(total, mask=present == 0).cast(kind)
    columns[W] = pa.array(np.ones(payload.num_rows, np.int64))
    return pa.table(columns, schema=spec.output_schema())


def _window_sum(column: pa.ChunkedArray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The sum of `column` over each [start, end], by prefix sums (exact for integers)."""
    values = column.to_numpy(zero_copy_only=False)
    prefix = np.concatenate([np.zeros(1, values.dtype), np.cumsum(values)])
    return prefix[end + 1] - prefix[start]


def _window_extreme(column: pa.ChunkedArray, start: np.ndarray, end: np.ndarray, function: str) -> pa.Array:
    """MIN or MAX of `column` over each [start, end] (NULLs skipped; NULL when there is no value), through a sparse
    table of the values' sorted codes: log2(n) levels, each the extreme over 2^j rows."""
    codes, distinct = pd.factorize(column.to_pandas(), sort=True)
    empty = np.inf if function == "min" else -np.inf
    level = np.where(codes < 0, empty, codes).astype("float64")
    pick = np.fmin if function == "min" else np.fmax
    table = [level]
    width = 1
    while width * 2 <= len(level):
        level = pick(level[:-width], level[width:])
        table.append(level)
        width *= 2
    length = end - start + 1
    j = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
    best = np.full(len(start), empty)
    for k in np.unique(j):  # one pass per level (at most log2 n), each over all frames of that length class
        at = np.flatnonzero(j == k)
        best[at] = pick(table[k][start[at]], table[k][end[at] - (1 << k) + 1])
    found = np.isfinite(best)
    values = pa.array(distinct).take(pa.array(np.where(found, best, 0).astype(np.int64))) if len(distinct) else \
        pa.nulls(len(best), column.type)
    return pc.if_else(pa.array(found), values, pa.nulls(len(best), values.type))


def _kept(spec: OverSpec, rows: pa.Table, first: np.ndarray, last: np.ndarray, times: np.ndarray,
          watermark: int) -> pa.Table:
    """What later frames can still reach, per key: the last n rows (ROWS n PRECEDING), the rows no older than
    the watermark minus the interval (RANGE), or the running totals of every row so far (UNBOUNDED)."""
    index = np.arange(rows.num_rows)
    if spec.preceding is None:  # one row per key: the totals over [first, last]
        ends = np.flatnonzero(index == last)
        starts = first[ends]
        columns = {KEY: rows.column(KEY).take(pa.array(ends)), TIME: pa.nulls(len(ends), pa.int64()),
                   ROWS: pa.array(_window_sum(rows.column(ROWS), starts, ends))}
        for i, _ in enumerate(spec.arguments):
            for part in ("s", "c"):
                columns[f"__{part}{i}"] = pa.array(_window_sum(rows.column(f"__{part}{i}"), starts, ends))
            columns[f"__lo{i}"] = _window_extreme(rows.column(f"__lo{i}"), starts, ends, "min")
            columns[f"__hi{i}"] = _window_extreme(rows.column(f"__hi{i}"), starts, ends, "max")
        schema = spec.history_schema()
        return pa.table([columns[f.name].cast(f.type) for f in schema], schema=schema)
    if spec.rows:
        keep = index > last - spec.preceding - 1 if spec.preceding else np.zeros(rows.num_rows, bool)
    else:
        keep = times >= watermark - spec.preceding
    return rows.filter(pa.array(keep))
