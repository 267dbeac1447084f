"""The keyed stage of the changelog path: each input's current rows, kept in Spark's state store, and the weighted
change of their join for every key a micro-batch touched.

Why it exists: Spark has no retractions, and an update or a delete needs the row it replaces, which only state
has. This is the one operator of ours that keeps rows. Spark groups its input by key *bucket*
(`pmod(xxhash64(__key), B)`): Python runs once per touched bucket per micro-batch and works on whole columns
(Arrow, numpy, pandas merges), never once per row or per key. A bucket's rows are kept in *sub-buckets*
(`__sub`, another hash of the key), one Arrow IPC blob per input each, in Spark's state store (RocksDB,
checkpointed with the query, partitioned and recovered like any Spark state), so a batch reads and writes only
the sub-buckets it touches, nothing lives on the driver and the same job runs on a cluster. This module is the
pure part (Arrow tables in, Arrow tables out); engine/stage_operators.py holds the Spark operators around it.

The stage's input is the union of every input's rows, with these columns (built in Spark SQL by
`engine/changelog.py`):

    __src  INT     which input the row is from
    __key  STRING  the key the inputs are joined on (NULL if a key column is NULL: such a row matches nothing)
    __sub  INT     the key's sub-bucket within its bucket
    __pk   STRING  upsert inputs: the primary key (the latest row per primary key is the table); else NULL
    __pos  LONG    the order of the row among the batch's rows of its key (upsert inputs need it)
    __w    INT     +1 for a row that arrives, -1 for one that goes (an upsert tombstone, a debezium before-image)
    ...            the columns each input contributes (NULL in the other inputs' rows)

Per bucket: apply the batch to each input's rows (upsert: the latest change per primary key wins; others: a
multiset of rows with counts), join the inputs as the query says (inner/left/right/full, all on the key; semi and
anti joins of IN and EXISTS subqueries keep or drop rows by whether their key has a match) for the touched keys
before and after, and emit the difference: every result row with a weight `__w` (-n for rows
that went, +n for rows that came). A row equal before and after cancels out, so an update that changes no
column the query reads emits nothing. Rows are compared by value, through integer codes of their columns
computed for the touched rows alone (`_row_codes`): no hash is kept in state.

A window Top-N and an event-time temporal join keep the same kind of state and are woken by Spark's event-time
timeout (engine/event_time_steps.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from shell.changes import InputKind
from shell.planner.stages import Rank, Temporal  # noqa: F401 - Temporal: the type of StageSpec.temporal

SRC, KEY, SUB, PK, POS, W, N = "__src", "__key", "__sub", "__pk", "__pos", "__w", "__n"
ROWNUM = "__rownum"  # Top-N: the row's number within its key (ROW_NUMBER() OVER (PARTITION BY key ORDER BY ...))
APPEND, CHANGELOG, UPSERT = InputKind.APPEND, InputKind.CHANGELOG, InputKind.UPSERT
SEMI, ANTI = "semi", "anti"  # joins that keep or drop the rows so far by whether their key has a row of the input


@dataclass(frozen=True)
class InputSpec:
    kind: str  # APPEND, CHANGELOG or UPSERT
    columns: tuple[str, ...]  # the stage columns this input contributes
    join: str = ""  # how it joins the inputs before it: inner, left, right, full, semi, anti ("" for the first)
    joins_with: int = 0  # the earlier input whose key it is equated with
    key_is_pk: bool = False  # an upsert input keyed by its primary key: its __key equals its __pk
    pk_column: str = ""  # an upsert input's stage column that is its one STRING primary key column: equals its __pk


@dataclass(frozen=True)
class AggregateSpec:
    """GROUP BY in the stage, over one input keyed by the group columns: aggregates that need every row of a
    group (MIN, MAX, COUNT DISTINCT), or a GROUP BY whose result is aggregated again. The planner's `Aggregation`
    with the Arrow type of each result, which only the engine knows (from Spark's schema of the stage's rows)."""

    group: tuple[str, ...]  # stage columns
    functions: tuple[tuple[str, str, str | None, bool], ...]  # (output column, count|sum|avg|min|max, argument, distinct)
    types: tuple[pa.DataType, ...]  # of each output column


@dataclass(frozen=True)
class StageSpec:
    """What the operator needs to know, pickled to the Python workers with it. A Top-N and a temporal join are the
    planner's own stages (planner/stages.py, which imports nothing heavy); an input is described by `InputSpec`
    rather than the planner's `StageInput`, which holds the table's definition and a subquery's whole plan."""

    inputs: tuple[InputSpec, ...]
    schema: pa.Schema  # the stage's input columns (payload of every input, then the control columns)
    rank: Rank | None = None
    aggregate: AggregateSpec | None = None
    temporal: Temporal | None = None

    def state_schema(self, i: int) -> pa.Schema:
        fields = [self.schema.field(KEY), self.schema.field(SUB), self.schema.field(PK), pa.field(N, pa.int64())]
        return pa.schema(fields + [self.schema.field(c) for c in self.inputs[i].columns])

    @property
    def output_columns(self) -> list[str]:
        if self.aggregate is not None:
            return [*self.aggregate.group, *(f[0] for f in self.aggregate.functions)]
        return [c for spec in self.inputs for c in spec.columns]

    def output_schema(self) -> pa.Schema:
        if self.aggregate is not None:
            fields = [self.schema.field(c) for c in self.aggregate.group]
            fields += [pa.field(f[0], t) for f, t in zip(self.aggregate.functions, self.aggregate.types)]
            return pa.schema(fields + [pa.field(W, pa.int64())])
        fields = [self.schema.field(c) for c in self.output_columns]
        return pa.schema(fields + ([pa.field(ROWNUM, pa.int64())] if self.rank else []) + [pa.field(W, pa.int64())])


def encode(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def decode(blob: bytes | None, schema: pa.Schema) -> pa.Table:
    if not blob:
        return schema.empty_table()
    return pa.ipc.open_stream(blob).read_all()


def stored_columns(spec: StageSpec, i: int) -> list[str]:
    """The columns of input `i`'s state that a sub-bucket's blob holds. The others are implied, and not stored
    (the state's bytes are most of a micro-batch's cost): the sub-bucket (the blob's own), the count of an upsert
    input's row (always 1), the key of an input keyed by its primary key and the primary key's own column (both
    equal to the primary key)."""
    source = spec.inputs[i]
    implied = {SUB} | ({N} if source.kind == UPSERT else set()) | ({KEY} if source.key_is_pk else set())
    implied |= {source.pk_column} if source.pk_column else set()
    return [name for name in spec.state_schema(i).names if name not in implied]


def encode_part(spec: StageSpec, i: int, table: pa.Table) -> bytes:
    """One sub-bucket's rows of input `i`, as stored."""
    return encode(table.select(stored_columns(spec, i)))


def decode_part(spec: StageSpec, i: int, blob: bytes, sub: int) -> pa.Table:
    """What `encode_part` stored for sub-bucket `sub`, with the implied columns back."""
    schema = spec.state_schema(i)
    stored = decode(blob, schema)
    rows = stored.num_rows
    implied = {
        SUB: lambda: pa.array(np.full(rows, sub, dtype=np.int32), schema.field(SUB).type),
        N: lambda: pa.array(np.ones(rows, dtype=np.int64)),
        KEY: lambda: stored.column(PK),
    }
    if spec.inputs[i].pk_column:
        implied[spec.inputs[i].pk_column] = lambda: stored.column(PK)
    columns = [stored.column(f.name) if f.name in stored.column_names else implied[f.name]() for f in schema]
    return pa.table(columns, schema=schema)


def split_by(table: pa.Table, values: np.ndarray) -> dict[int, pa.Table]:
    """The rows of `table` for each distinct value of `values` (one int per row), in one sort."""
    order = np.argsort(values, kind="stable")
    ordered, keys = table.take(pa.array(order)), values[order]
    starts = np.flatnonzero(np.append(True, keys[1:] != keys[:-1])) if len(keys) else np.zeros(0, np.int64)
    ends = np.append(starts[1:], len(keys))
    return {int(keys[a]): ordered.slice(a, b - a) for a, b in zip(starts.tolist(), ends.tolist())}


def by_sub_bucket(tables: list[pa.Table], subs: list[int]) -> dict[int, list[pa.Table]]:
    """Each of `subs` with its rows of every table (empty tables for a sub-bucket left without rows)."""
    parts: dict[int, list[pa.Table]] = {s: [] for s in subs}
    for table in tables:
        groups = split_by(table, table.column(SUB).to_numpy(zero_copy_only=False).astype(np.int64))
        empty = table.slice(0, 0)
        for s in subs:
            parts[s].append(groups.get(s, empty))
    return parts


@dataclass
class Step:
    state: list[pa.Table]  # each input's rows after the batch
    output: pa.Table  # the weighted change of the result
    wake_at: int | None = None  # temporal join: the event time (us) at which waiting rows can be joined


def step(spec: StageSpec, old: list[pa.Table], batch: pa.Table) -> Step:
    """Apply one batch of one bucket: the new state and the weighted change of the join (pure; no Spark here)."""
    if spec.rank is not None and spec.rank.window_end is not None:
        # a window Top-N over a window aggregation: a window's rows arrive together, in the micro-batch whose
        # watermark closed it, so they are ranked at once and nothing is kept (Spark refuses an event-time
        # operator after an aggregation; over the window's own rows engine/stage_operators.py runs the timed one)
        from shell.engine.event_time_steps import step_window_rank

        return step_window_rank(spec, old, batch, np.iinfo(np.int64).max)
    sources = batch.column(SRC).to_numpy(zero_copy_only=False)
    touched = pc.unique(batch.column(KEY))
    new, was, now = [], [], []  # each input's rows after the batch; of those, the touched keys' before and after
    untouched = []  # each input's rows of the keys the batch does not touch
    for i, source in enumerate(spec.inputs):
        rows = batch.filter(pa.array(sources == i))
        schema = spec.state_schema(i)
        # A batch's row replaces or cancels rows of its own key only: an upsert input is keyed by columns of its
        # primary key (the planner refuses any other key), and a multiset row is told apart by its key too. So the
        # batch is applied to the touched keys' rows alone, and the state is the untouched rows plus those.
        touches = pc.is_in(old[i].column(KEY), value_set=touched, skip_nulls=False)
        was.append(old[i].filter(touches))
        untouched.append(old[i].filter(pc.invert(touches)))
        if rows.num_rows == 0:
            now.append(was[i])
            new.append(old[i])
            continue
        if source.kind == UPSERT:
            now.append(_apply_upserts(was[i], rows, schema))
        else:
            now.append(_apply_weighted(was[i], rows, schema, [KEY, *source.columns]))
        new.append(pa.concat_tables([untouched[i], now[i]]))
    if spec.aggregate is not None:
        return Step(new, _difference(spec, _aggregate(spec, was[0]), _aggregate(spec, now[0])))
    before, after = _join(spec, was), _join(spec, now)
    if spec.rank is not None:
        before, (after, ranked) = _top(spec.rank, before, was[0])[0], _top(spec.rank, after, now[0])
        if spec.inputs[0].kind == APPEND:  # rows only arrive, so a row ranked out of a key never ranks in again
            new[0] = pa.concat_tables([untouched[0], now[0].take(pa.array(np.unique(ranked)))])
    return Step(new, _difference(spec, before, after))


def _top(rank: Rank, joined: tuple, table: pa.Table) -> tuple[tuple, np.ndarray]:
    """The first `limit` rows of each key in the rank's order, each numbered (a row counted n times is n rows), and
    the positions in `table` of the rows among them. `table` holds the rows `joined` was made of, in order."""
    counts, columns = joined
    keys = table.column(KEY).to_pandas()
    frame = columns.select([c for c, _, _ in rank.order]).to_pandas()
    frame["__k"] = keys.fillna("\0null").to_numpy()
    frame["__i"] = np.arange(len(frame))
    for name, descending, nulls_first in reversed(rank.order):  # stable sorts, last key first
        frame = frame.sort_values(name, ascending=not descending, na_position="first" if nulls_first else "last",
                                  kind="stable")
    frame = frame.sort_values("__k", kind="stable")
    index = np.repeat(frame["__i"].to_numpy(), counts[frame["__i"].to_numpy()])
    key_of = frame["__k"].to_numpy().repeat(counts[frame["__i"].to_numpy()])
    number = pd.Series(key_of).groupby(key_of, sort=False).cumcount().to_numpy() + 1
    keep = number <= rank.limit
    index, number = index[keep], number[keep]
    ranked = columns.take(pa.array(index)).append_column(pa.field(ROWNUM, pa.int64()), pa.array(number, pa.int64()))
    return (np.ones(len(index), dtype=np.int64), ranked), index


def _aggregate(spec: StageSpec, table: pa.Table) -> tuple:
    """Each group's aggregates over its rows (a row counted n times weighs n), as (1 per group, columns)."""
    agg = spec.aggregate
    schema = spec.output_schema()
    if table.num_rows == 0:
        return np.zeros(0, np.int64), pa.schema(list(schema)[:-1]).empty_table()
    arguments = sorted({f[2] for f in agg.functions if f[2] is not None})
    frame = table.select([*dict.fromkeys([*agg.group, *arguments])]).to_pandas()
    counts = table.column(N).to_numpy()
    keys = table.column(KEY).to_pandas().fillna("\0null").to_numpy()
    groups = pd.Series(counts).groupby(keys, sort=False)
    out = pd.DataFrame({c: frame[c].groupby(keys, sort=False).first() for c in agg.group}) if agg.group else \
        pd.DataFrame(index=groups.sum().index)
    for (name, function, argument, distinct), kind in zip(agg.functions, agg.types):
        if argument is None:
            out[name] = groups.sum()
            continue
        values = frame[argument]
        present = pd.Series(np.where(values.notna(), counts, 0)).groupby(keys, sort=False).sum()
        if function == "count":
            out[name] = values.groupby(keys, sort=False).nunique() if distinct else present
        elif function in ("min", "max"):
            out[name] = getattr(values.groupby(keys, sort=False), function)()
        else:
            if distinct:  # each value once per group, however many rows (or copies of a row) have it
                once = pd.DataFrame({"k": keys, "v": values.to_numpy()})[values.notna().to_numpy()].drop_duplicates()
                total = once["v"].groupby(once["k"], sort=False).sum(min_count=1)
                present = once["v"].groupby(once["k"], sort=False).count().reindex(present.index, fill_value=0)
            else:
                total = (values * counts).groupby(keys, sort=False).sum(min_count=1)
            mean = total.astype("float64") / present.where(present > 0)
            if function == "avg" and pa.types.is_integer(kind):  # Flink: the sum divided as integers, truncated
                mean = np.trunc(mean).astype("Int64")
            out[name] = total if function == "sum" else mean
    out = out.reset_index(drop=True)
    result = pa.Table.from_pandas(out, schema=pa.schema(list(schema)[:-1]), preserve_index=False)
    return np.ones(len(out), dtype=np.int64), result


def _apply_upserts(old: pa.Table, rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """The latest change per primary key replaces (or, a tombstone, removes) that key's row."""
    pk = _key_codes([rows.column(PK)])[0]
    order = np.lexsort((rows.column(POS).to_numpy(), pk))
    ordered = pk[order]
    last = np.append(ordered[1:] != ordered[:-1], True)
    latest = rows.take(pa.array(order[last]))
    kept = old.filter(pc.invert(pc.is_in(old.column(PK), value_set=latest.column(PK))))
    alive = latest.filter(pc.greater(latest.column(W), 0))
    ones = pa.array(np.ones(alive.num_rows, dtype=np.int64))
    fresh = pa.table({f.name: (ones if f.name == N else alive.column(f.name)) for f in schema}, schema=schema)
    return pa.concat_tables([kept, fresh])


def _apply_weighted(old: pa.Table, rows: pa.Table, schema: pa.Schema, identity: list[str]) -> pa.Table:
    """A multiset of rows: counts per distinct row (equal in the `identity` columns), rows whose count drops to
    zero (or below) go."""
    counts = pa.array(rows.column(W).to_numpy(zero_copy_only=False).astype(np.int64))
    arriving = pa.table({f.name: (counts if f.name == N else rows.column(f.name)) for f in schema}, schema=schema)
    both = pa.concat_tables([old, arriving])
    unique, first, inverse = np.unique(_row_codes(both, identity), return_index=True, return_inverse=True)
    totals = np.rint(np.bincount(inverse, weights=both.column(N).to_numpy())).astype(np.int64)
    keep = totals > 0
    merged = both.take(pa.array(first[keep]))
    return merged.set_column(merged.schema.get_field_index(N), N, pa.array(totals[keep]))


def _key_codes(columns: list[pa.ChunkedArray]) -> list[np.ndarray]:
    """The keys of each column as int64 codes that are equal exactly where the keys are (pandas merges integers
    several times faster than strings). A NULL key gets a negative code of its own column: it matches nothing, not
    even another NULL."""
    codes, distinct = _value_codes(pa.chunked_array([c for column in columns for c in column.chunks], columns[0].type))
    ends = np.cumsum([column.length() for column in columns])
    null = distinct - 1  # _value_codes' code for NULL
    return [np.where(part == null, -1 - i, part) for i, part in enumerate(np.split(codes, ends[:-1]))]


def _row_codes(table: pa.Table, columns: list[str]) -> np.ndarray:
    """One int64 per row of `table`, equal exactly where the rows are equal in `columns` (NULL equals NULL here)."""
    codes = np.zeros(table.num_rows, np.int64)
    for name in columns:
        values, distinct = _value_codes(table.column(name))
        codes = pd.factorize(codes * distinct + values)[0].astype(np.int64)  # back to 0..n-1: never overflows
    return codes


def _value_codes(column: pa.ChunkedArray) -> tuple[np.ndarray, int]:
    """Codes of a column's values in 0..m-1 (NULL has one of its own) and m."""
    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    try:
        encoded = pc.dictionary_encode(array)
    except pa.ArrowNotImplementedError:  # ROW, ARRAY and MAP values: compared by their text, NULL by its own
        codes, uniques = pd.factorize(array.to_pandas().astype(str), use_na_sentinel=False)
        return codes.astype(np.int64), len(uniques)
    nulls = len(encoded.dictionary)
    return pc.fill_null(encoded.indices.cast(pa.int64()), nulls).to_numpy(), nulls + 1


def _join(spec: StageSpec, tables: list[pa.Table]) -> tuple[np.ndarray, pa.Table]:
    """The join of the inputs (all on the key) as (multiplicity, columns)."""
    if len(spec.inputs) == 1:  # nothing to join: the rows themselves (what the merges below would give, faster)
        table = tables[0]
        return table.column(N).to_numpy().copy(), table.select(list(spec.inputs[0].columns))

    keys = _key_codes([t.column(KEY) for t in tables])
    joined = pd.DataFrame({"k0": keys[0], "r0": np.arange(tables[0].num_rows)})
    for i, source in enumerate(spec.inputs[1:], start=1):
        if source.join in (SEMI, ANTI):  # the rows so far whose key has (or has not) a row of this input
            matched = joined[f"k{source.joins_with}"].isin(keys[i]).to_numpy()
            joined = joined[matched if source.join == SEMI else ~matched]
            continue
        right = pd.DataFrame({f"k{i}": keys[i], f"r{i}": np.arange(tables[i].num_rows)})
        how = {"inner": "inner", "left": "left", "right": "right", "full": "outer"}[source.join]
        joined = joined.merge(right, left_on=f"k{source.joins_with}", right_on=f"k{i}", how=how, sort=False)
    counts = np.ones(len(joined), dtype=np.int64)
    columns: dict[str, pa.Array] = {}
    for i, source in enumerate(spec.inputs):
        if source.join in (SEMI, ANTI):
            continue
        positions = joined[f"r{i}"].to_numpy(dtype="float64", na_value=np.nan)
        present = ~np.isnan(positions)
        index = np.where(present, positions, 0).astype(np.int64)
        table = tables[i]
        if table.num_rows:
            counts *= np.where(present, table.column(N).to_numpy()[index], 1)
        take = pa.array(index, mask=~present)
        for name in source.columns:
            columns[name] = table.column(name).take(take) if table.num_rows else pa.nulls(len(joined), table.schema.field(name).type)
    schema = pa.schema([spec.schema.field(c) for c in spec.output_columns])
    return counts, pa.table(columns, schema=schema)


def _difference(spec: StageSpec, before: tuple, after: tuple) -> pa.Table:
    """Rows of `after` with weight +n and rows of `before` with -n; equal rows cancel."""
    weights = np.concatenate([-before[0], after[0]])
    schema = spec.output_schema()
    if len(weights) == 0:
        return schema.empty_table()
    rows = pa.concat_tables([before[1], after[1]])
    unique, first, inverse = np.unique(_row_codes(rows, rows.column_names), return_index=True, return_inverse=True)
    totals = np.rint(np.bincount(inverse, weights=weights)).astype(np.int64)
    changed = totals != 0
    rows = rows.take(pa.array(first[changed]))
    return rows.append_column(pa.field(W, pa.int64()), pa.array(totals[changed]))


# ---- window Top-N ------------------------------------------------------------------------------------------
