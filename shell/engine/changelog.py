"""The changelog path in Spark: inputs made into weighted rows, the keyed stage, the rest of the query, and the
weighted rows turned into Flink's changes (+I, -U, +U, -D) for renderers and sinks.

Why it exists: the planner (planner/changelog.py) says what to compute; this module builds it out of Spark
operators. Every input becomes rows with a weight `__w` in Spark SQL (an append row +1; a changelog's -U/-D
-1; an upsert tombstone -1). When the plan needs the keyed stage, the inputs are unioned, given their key,
primary key, sub-bucket and order, and grouped by key bucket into one stateful Python operator
(engine/keyed_stage.py, engine/stage_operators.py). The rest of the query is Spark SQL over the weighted rows, so a GROUP BY is Spark's own
streaming aggregation in update mode. Per micro-batch, `changes()` turns the weighted rows into changes, in Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import reduce
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.changes import RowKind
from shell.connectors.base import ConnectorContext, SourceFrame
from shell.connectors.topic import ORDER
from shell.engine import keyed_stage as ks
from shell.engine.sources import open_table
from shell.engine.state_layout import DEFAULT_BUCKETS, DEFAULT_SUB_BUCKETS
from shell.errors import ExecutionError
from shell.formats.base import OP_COLUMN
from shell.planner.model import (
    APPEND, COUNT, GROUP_KEY, HAVING, RETRACT, UPSERT_INPUT, WEIGHT, ChangelogPlan, StageInput,
)
from shell.planner.stages import Aggregation, KeyedJoin, Over, Rank, Temporal, UnionAll, WeightedRows

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

CONTROL_COLUMNS = (WEIGHT, COUNT, HAVING)


@dataclass(frozen=True)
class StageRuntime:
    """How a query's keyed stages run. `layout`: the Python stage's (key buckets, sub-buckets); `copies_scope`, when
    set, names the job's local copies of its sub-buckets (engine/stage_cache.py); `jvm`: a keyed join (an upsert
    table's current rows too) runs on the JVM (jvm/stages, `jvm_keyed_rows`)."""

    layout: tuple[int, int] = (DEFAULT_BUCKETS, DEFAULT_SUB_BUCKETS)
    copies_scope: str | None = None
    jvm: bool = False
    net: tuple[str, ...] = ()  # stage columns of an upsert sink's key: the JVM keyed join nets its changes by them
    state_ttl_ms: int = 0  # `table.exec.state.ttl`: the JVM keyed join's rows expire when not written for this long


def build(
    session: "SparkSession", ctx: ConnectorContext, plan: ChangelogPlan, runtime: StageRuntime
) -> tuple["DataFrame", list[tuple[TableDef, SourceFrame]], bool]:
    """The plan's result as a streaming DataFrame of weighted rows (RETRACT) or updated groups (UPSERTS), the
    opened tables (for their bad records), and whether the stage netted its changes by `runtime.net` (one per value
    of those columns and batch: the row now, +1, else the row gone, -1)."""
    from pyspark.sql import functions as F

    opened: list[tuple[TableDef, SourceFrame]] = []
    frames = []
    for n, source in enumerate(plan.inputs):
        if source.plan is not None:  # a stage of its own, chained into this one in the same Spark query
            scope = f"{runtime.copies_scope}/{n}" if runtime.copies_scope is not None else None
            frame, inner, _ = build(session, ctx, source.plan, replace(runtime, copies_scope=scope, net=()))
            opened += inner
        elif source.derived is not None:
            frame = derived_frame(session, ctx, source, opened)
        else:
            table = open_table(ctx, source.table, watermark=plan.stage.waits_for_event_time)
            opened.append((source.table, table))
            frame = table.frame
        if isinstance(plan.stage, Temporal) and n == 1 and OP_COLUMN in frame.columns:
            frame = frame.where(F.col(OP_COLUMN) != RowKind.UPDATE_BEFORE)  # versions: an update's after-image starts the next one
        grouping = isinstance(plan.stage, (Rank, Aggregation, Over))  # a NULL key is a group like any other
        frames.append(weighted_input(frame, source, n, plan.keyed, grouping))
    stage = STAGE_BUILDERS[type(plan.stage)](frames, plan, runtime)
    stage.createOrReplaceTempView(plan.stage_view)
    try:
        frame = session.sql(plan.sql)
        frame.schema  # noqa: B018 - analyze now, while the view exists
        return frame, opened, bool(runtime.net) and _on_jvm(frames, plan, runtime)
    finally:
        session.catalog.dropTempView(plan.stage_view)


def derived_frame(
    session: "SparkSession", ctx: ConnectorContext, source: StageInput, opened: list[tuple[TableDef, SourceFrame]]
) -> "DataFrame":
    """A FROM subquery over append-only tables (filters, projections, UNION ALL), run by Spark as written."""
    sql, tables = source.derived
    for table, view in tables:
        table_frame = open_table(ctx, table)
        opened.append((table, table_frame))
        table_frame.frame.createOrReplaceTempView(view)
    try:
        frame = session.sql(sql)
        frame.schema  # noqa: B018 - analyze now, while the views exist
        return frame
    finally:
        for _, view in tables:
            session.catalog.dropTempView(view)


def weighted_input(frame: "DataFrame", source: StageInput, index: int, keyed: bool, grouping: bool = False) -> "DataFrame":
    """The input's rows with the columns the query reads, under their stage names, and their weight. With
    `grouping` (a Top-N or an aggregate in the stage), the key is a group, where NULL is a value like any other."""
    from pyspark.sql import functions as F

    payload = [F.col(f"`{c}`").alias(source.stage_column(c)) for c in source.columns]
    if source.plan is not None:
        weight = F.col(WEIGHT)  # the weighted rows of the stage below
    elif source.kind == APPEND:
        weight = F.lit(1)
    else:
        weight = F.when(F.col(OP_COLUMN).isin(RowKind.UPDATE_BEFORE, RowKind.DELETE), F.lit(-1)).otherwise(F.lit(1))
    if source.filter is not None and source.kind == UPSERT_INPUT:
        # a key's new row that fails the filter takes the key out of the filtered table: a delete, not nothing
        weight = F.when(F.coalesce(F.expr(source.filter), F.lit(False)), weight).otherwise(F.lit(-1))
    elif source.filter is not None:
        frame = frame.where(F.expr(source.filter))
    columns = [*payload, weight.cast("int").alias(ks.W)]
    if keyed:
        columns += [
            F.lit(index).alias(ks.SRC),
            key_expression(source.key, nulls_match=grouping).alias(ks.KEY),
            (key_expression(source.table.primary_key) if source.kind == UPSERT_INPUT else F.lit(None).cast("string"))
            .alias(ks.PK),
            (F.col(ORDER) if ORDER in frame.columns else F.lit(0)).cast("long").alias(ks.POS),
        ]
    return frame.select(*columns)


def key_expression(columns: list[str], nulls_match: bool = False) -> "Column":
    """A key as one STRING, NULL when any part is NULL (a NULL never equals anything, so it joins nothing). With
    `nulls_match` (a group's key), a part that is NULL is one more value: only a one-column key can be NULL."""
    from pyspark.sql import functions as F

    if not columns:
        return F.lit("")
    parts = [F.col(f"`{c}`") for c in columns]
    text = parts[0].cast("string") if len(parts) == 1 else F.to_json(F.array(*(p.cast("string") for p in parts)))
    if nulls_match or len(parts) == 1:
        return text
    any_null = reduce(lambda a, b: a | b, (p.isNull() for p in parts))
    return F.when(any_null, F.lit(None).cast("string")).otherwise(text)


def _weighted_rows(frames: list["DataFrame"], plan: ChangelogPlan, runtime: StageRuntime):
    return frames[0]


def _union_all(frames: list["DataFrame"], plan: ChangelogPlan, runtime: StageRuntime):
    return reduce(lambda a, b: a.unionByName(b), frames)


def _stage_input(frames: list["DataFrame"]) -> "DataFrame":
    """A keyed stage's inputs as one stream of rows: each row has its own input's payload, NULL in the others'."""
    return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)


def _stage_rows(frames: list["DataFrame"], plan: ChangelogPlan, layout: tuple[int, int]):  # noqa: ANN202
    """The keyed stage's input: the union of the inputs with their key's bucket and sub-bucket, as (rows, their
    Arrow schema, Spark's fields by name, the payload columns). A temporal join keeps a bucket's rows together
    (one sub-bucket): its timeout needs them all."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema

    buckets, subs = layout
    union = _stage_input(frames)
    payload = [source.stage_column(c) for source in plan.inputs for c in source.columns]
    subs = 1 if isinstance(plan.stage, Temporal) else subs
    sub = F.pmod(F.xxhash64(F.lit("sub"), F.col(ks.KEY)), F.lit(subs)).cast("int")
    union = union.select(*(F.col(f"`{c}`") for c in payload), ks.W, ks.SRC, ks.KEY, sub.alias(ks.SUB), ks.PK, ks.POS)
    schema = _naive_timestamps(to_arrow_schema(union.schema, timezone="UTC"))
    fields = {f.name: f for f in union.schema.fields}
    union = union.withColumn("__bucket", F.pmod(F.xxhash64(F.col(ks.KEY)), F.lit(buckets)).cast("int"))
    return union, schema, fields, payload


def stage_spec(plan: ChangelogPlan, schema, fields: dict) -> ks.StageSpec:  # noqa: ANN001 - a pyarrow schema
    """What the keyed stage's Python operator needs, pickled to its workers."""
    stage = plan.stage
    return ks.StageSpec(
        inputs=tuple(
            ks.InputSpec(source.kind, tuple(source.stage_column(c) for c in source.columns), source.join,
                         source.joins_with,
                         key_is_pk=source.kind == UPSERT_INPUT and _same_columns(source.key, source.table.primary_key),
                         pk_column=primary_key_column(source, fields))
            for source in plan.inputs
        ),
        schema=schema,
        rank=stage if isinstance(stage, Rank) else None,
        aggregate=aggregate_spec(stage, fields) if isinstance(stage, Aggregation) else None,
        temporal=stage if isinstance(stage, Temporal) else None,
    )  # fmt: skip


def _output_schema(plan: ChangelogPlan, fields: dict, payload: list[str]):  # noqa: ANN202 - a StructType
    """The keyed stage's rows: each group's aggregates, or the payload (numbered for a Top-N), and their weight."""
    from pyspark.sql.types import LongType, StructField, StructType

    stage = plan.stage
    if isinstance(stage, Aggregation):
        results = [StructField(name, result_type(f, a, fields), True) for name, f, a, _ in stage.functions]
        columns = [StructField(c, fields[c].dataType, True) for c in stage.group] + results
    else:
        numbered = [StructField(ks.ROWNUM, LongType())] if isinstance(stage, Rank) else []
        columns = [StructField(c, fields[c].dataType, True) for c in payload] + numbered
    return StructType(columns + [StructField(ks.W, LongType())])


def _keyed_rows(frames: list["DataFrame"], plan: ChangelogPlan, runtime: StageRuntime):
    """A keyed join, aggregation or Top-N: one stateful Python operator over key buckets, each keeping its rows in
    sub-buckets (engine/stage_operators.py); a window Top-N over a window's own rows waits for event time. A keyed
    join (an upsert table's current rows too) runs on the JVM when the runtime says so (`jvm_keyed_rows`)."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    from shell.engine import stage_operators

    if _on_jvm(frames, plan, runtime):
        return jvm_keyed_rows(frames, plan, runtime.net, runtime.state_ttl_ms)
    if runtime.state_ttl_ms > 0:
        why = ("an input counts rows with a MAP column" if runtime.jvm and _counts_maps(frames, plan)
               else "the job's keyed stage runs in Python ('table.exec.changelog.jvm-stages', or the state it "
                    "first built)")
        raise ExecutionError(f"state TTL is carried out by the keyed join on the JVM, and here {why}",
                             hint="RESET 'table.exec.state.ttl' to run it without one, or SET "
                                  "'table.exec.changelog.jvm-stages' = 'true' for a new job")
    union, schema, fields, payload = _stage_rows(frames, plan, runtime.layout)
    spec, output = stage_spec(plan, schema, fields), _output_schema(plan, fields, payload)
    if isinstance(plan.stage, Rank) and plan.stage.window_end and plan.stage.drop_late:
        return union.groupBy("__bucket").applyInPandasWithState(
            stage_operators.window_rank_operator(spec), output, stage_operators.state_value_type(spec), "append",
            GroupStateTimeout.EventTimeTimeout,
        )
    packed = union.mapInArrow(stage_operators.pack_by_bucket(spec, "__bucket"), stage_operators.PACKED_SCHEMA)
    return packed.groupBy(stage_operators.BUCKET_COLUMN).transformWithStateInPandas(
        stage_operators.SubBucketStage(spec, runtime.copies_scope), output, "Append", "None"
    )


def _on_jvm(frames: list["DataFrame"], plan: ChangelogPlan, runtime: StageRuntime) -> bool:
    """Whether the plan's stage runs on the JVM (`jvm_keyed_rows`)."""
    return runtime.jvm and type(plan.stage) is KeyedJoin and not _counts_maps(frames, plan)


def _counts_maps(frames: list["DataFrame"], plan: ChangelogPlan) -> bool:
    """Whether an input whose rows the stage counts (not an upsert input's, kept by primary key) has a MAP column:
    the JVM's stage tells rows apart by their bytes in Spark's format, where two equal maps may differ (the order
    of their entries), so the Python stage, which compares values, runs those."""
    return any(source.kind != UPSERT_INPUT and any(_has_map(frame.schema[source.stage_column(c)].dataType)
                                                   for c in source.columns)
               for source, frame in zip(plan.inputs, frames))


def jvm_keyed_rows(frames: list["DataFrame"], plan: ChangelogPlan, net: tuple[str, ...] = (),
                   state_ttl_ms: int = 0) -> "DataFrame":
    """A keyed join (an upsert table's current rows too) as jvm/stages' `KeyedJoinStage`, a `transformWithState`
    operator: per key each input's rows in Spark's state store, out the weighted change of their join (the rows the
    Python stage of `_keyed_rows` gives), or with `net` (stage columns) that change netted per their values. With
    `state_ttl_ms`, a row not written for that long expires (Spark's state TTL, in processing time)."""
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    union = _stage_input(frames)
    columns = [[source.stage_column(c) for c in source.columns] for source in plan.inputs]
    frame = union.select(*(f"`{c}`" for each in columns for c in each), ks.W, ks.SRC, ks.KEY, ks.PK, ks.POS)
    spark = frame.sparkSession
    jvm = spark._jvm
    stages, streaming = jvm.dev.streamshell.stages, jvm.org.apache.spark.sql.streaming
    schemas = [StructType([frame.schema[c] for c in each]).json() for each in columns]
    joins = [source.join for source in plan.inputs]
    schema = stages.KeyedJoinStage.outputSchema(joins, schemas, ks.W)
    names = list(schema.fieldNames())
    ttl = [int(state_ttl_ms)] * len(plan.inputs)
    processor = stages.KeyedJoinStage(frame.schema.json(), [str(s.kind) for s in plan.inputs], joins,
                                      [s.joins_with for s in plan.inputs], schemas, [ks.W, ks.SRC, ks.PK, ks.POS],
                                      [names.index(c) for c in net], ttl)
    encoders = jvm.org.apache.spark.sql.Encoders
    grouped = frame._jdf.groupByKey(stages.KeyColumn(frame.columns.index(ks.KEY)), encoders.STRING())
    output = encoders.row(schema)
    rows = grouped.transformWithState(processor, stages.KeyedJoinStage.timeMode(ttl),
                                      streaming.OutputMode.Append(), output)
    return DataFrame(rows.toDF(), spark)


def _temporal_join(frames: list["DataFrame"], plan: ChangelogPlan, runtime: StageRuntime):
    """The event-time temporal join: rows wait per key bucket until the watermark passes them."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    from shell.engine import stage_operators

    union, schema, fields, payload = _stage_rows(frames, plan, runtime.layout)
    spec, output = stage_spec(plan, schema, fields), _output_schema(plan, fields, payload)
    return union.groupBy("__bucket").applyInPandasWithState(
        stage_operators.temporal_operator(spec), output, stage_operators.state_value_type(spec), "append",
        GroupStateTimeout.EventTimeTimeout,
    )


def _over_stage(frames: list["DataFrame"], plan: ChangelogPlan, runtime: StageRuntime):
    """The OVER aggregation's stage: rows wait per key bucket until the watermark passes them (event-time timeout)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.streaming.state import GroupStateTimeout
    from pyspark.sql.types import LongType, StructField, StructType

    from shell.engine import over_stage, stage_operators

    union, schema, fields, payload = _stage_rows(frames, plan, runtime.layout)
    over = plan.stage
    results = [StructField(name, result_type(f, a, fields), True) for name, f, a in over.functions]
    kinds = _naive_timestamps(to_arrow_schema(StructType(results), timezone="UTC")).types
    spec = over_stage.OverSpec(schema, tuple(payload), over.time, over.rows, over.preceding,
                               tuple(tuple(f) for f in over.functions), tuple(kinds))
    columns = [StructField(c, fields[c].dataType, True) for c in payload] + results
    output = StructType(columns + [StructField(ks.W, LongType())])
    return union.groupBy("__bucket").applyInPandasWithState(
        stage_operators.over_operator(spec), output, stage_operators.OVER_STATE_TYPE, "append",
        GroupStateTimeout.EventTimeTimeout,
    )


# the builder of each kind of stage (planner/stages.py): (weighted input frames, plan, runtime) -> rows
STAGE_BUILDERS = {
    WeightedRows: _weighted_rows,
    UnionAll: _union_all,
    KeyedJoin: _keyed_rows,
    Aggregation: _keyed_rows,
    Rank: _keyed_rows,
    Temporal: _temporal_join,
    Over: _over_stage,
}


def primary_key_column(source: StageInput, fields: dict) -> str:
    """The stage column of an upsert input's primary key when that is one STRING column the query reads: its values
    are the input's `__pk` (`key_expression` casts to STRING, so other types could differ), stored once."""
    from pyspark.sql.types import StringType

    key = source.table.primary_key
    if source.kind != UPSERT_INPUT or len(key) != 1 or key[0] not in source.columns:
        return ""
    column = source.stage_column(key[0])
    return column if isinstance(fields[column].dataType, StringType) else ""


def _same_columns(a, b) -> bool:  # noqa: ANN001 - sequences of column names
    return [c.lower() for c in a] == [c.lower() for c in b]


def result_type(function: str, argument: str | None, fields: dict):  # noqa: ANN201 - a Spark DataType
    """The Spark type of an aggregate computed in the stage."""
    from pyspark.sql.types import ByteType, DecimalType, DoubleType, FractionalType, IntegerType, LongType, ShortType

    if function == "count":
        return LongType()
    source = fields[argument].dataType
    if function in ("min", "max"):
        return source
    if function == "avg":  # Flink's AVG of integers keeps their type (an integer division of the sum)
        return source if isinstance(source, (ByteType, ShortType, IntegerType, LongType)) else DoubleType()
    if isinstance(source, DecimalType):
        return DecimalType(38, source.scale)
    return DoubleType() if isinstance(source, FractionalType) else LongType()


def aggregate_spec(aggregation: Aggregation, fields: dict) -> ks.AggregateSpec:
    """The stage's aggregation with the Arrow type of each result (from Spark's fields of the stage's rows)."""
    from pyspark.sql.pandas.types import to_arrow_type

    functions = aggregation.functions
    types = tuple(to_arrow_type(result_type(f, a, fields), timezone="UTC") for _, f, a, _ in functions)
    return ks.AggregateSpec(tuple(aggregation.group), tuple(tuple(f) for f in functions), types)


def _naive_timestamps(schema):  # noqa: ANN001, ANN202 - pyarrow schemas
    """Spark hands pandas timestamps without a zone; the stage keeps them that way."""
    import pyarrow as pa

    fields = []
    for f in schema:
        if pa.types.is_timestamp(f.type) and f.type.tz is not None:
            f = f.with_type(pa.timestamp(f.type.unit))
        fields.append(f)
    return pa.schema(fields)


# ---- micro-batches to changes ----------------------------------------------------------------------------------


def output_columns(frame: "DataFrame") -> list[str]:
    return [c for c in frame.columns if c not in CONTROL_COLUMNS and not c.startswith(GROUP_KEY)]


def changes(batch: "DataFrame", plan: ChangelogPlan, hidden_key: bool = False) -> "DataFrame":
    """One micro-batch of the result as rows with `__op`: retractions first (-D), then additions (+I); for an
    upsert result each touched group's row as +U, or -D when it is gone. With `hidden_key`, an upsert result's
    hidden GROUP BY columns (`plan.hidden_key`) follow the output columns."""
    from pyspark.sql import functions as F

    kept = plan.hidden_key if hidden_key else []  # only an upsert result has any
    shown = output_columns(batch)
    columns = [F.col(f"`{c}`") for c in [*shown, *kept]]
    if plan.output == RETRACT:
        if not plan.keyed:
            batch = netted(batch, shown)
        weight = F.col(WEIGHT)
        op = F.when(weight > 0, F.lit(RowKind.INSERT)).otherwise(F.lit(RowKind.DELETE))
        copies = F.explode(F.array_repeat(F.lit(0), F.abs(weight).cast("int")))
        return batch.select(*columns, op.alias(OP_COLUMN), copies.alias("__copy")).drop("__copy")
    exists = (F.col(COUNT) > 0) & F.coalesce(F.col(HAVING), F.lit(False))
    return batch.select(*columns, F.when(exists, F.lit(RowKind.UPDATE_AFTER)).otherwise(F.lit(RowKind.DELETE)).alias(OP_COLUMN))


def netted(batch: "DataFrame", columns: list[str]) -> "DataFrame":
    """A batch of weighted rows with equal rows summed and those summing to zero gone.

    Why: without the keyed stage, a debezium row and its update's before-image can arrive in one micro-batch, and
    retractions are shown first: `-D` of a row not shown yet, then its `+I`, which leaves it in every materialized
    view. Netted, a retraction in a batch only ever takes back a row of an earlier batch. (The keyed stage nets its
    own output per key.) MAP values cannot be grouped by, so they are grouped by their JSON text."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in batch.schema.fields}
    maps = [c for c in columns if _has_map(types[c])]
    keys = [F.to_json(F.col(f"`{c}`")).alias(f"__json_{n}") if c in maps else F.col(f"`{c}`")
            for n, c in enumerate(columns)]
    values = [F.first(F.col(f"`{c}`")).alias(c) for c in maps]
    summed = batch.groupBy(*keys).agg(*values, F.sum(WEIGHT).alias(WEIGHT)).where(F.col(WEIGHT) != 0)
    return summed.select(*(F.col(f"`{c}`") for c in columns), WEIGHT)


def _has_map(data_type) -> bool:  # noqa: ANN001 - a Spark DataType
    """Whether a type is a MAP or holds one."""
    from pyspark.sql.types import MapType

    return isinstance(data_type, MapType) or any(_has_map(c) for c in _children(data_type))


def _children(data_type) -> list:  # noqa: ANN001 - a Spark DataType
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, StructType):
        return [f.dataType for f in data_type.fields]
    if isinstance(data_type, ArrayType):
        return [data_type.elementType]
    if isinstance(data_type, MapType):
        return [data_type.keyType, data_type.valueType]
    return []


def latest_per_key(changed: "DataFrame", key: list[str]) -> "DataFrame":
    """For an upsert sink: one change per sink key and batch, the new row if there is one, else its deletion."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not key:
        return changed
    order = F.when(F.col(OP_COLUMN) == RowKind.DELETE, F.lit(1)).otherwise(F.lit(0))
    window = Window.partitionBy(*(F.col(f"`{k}`") for k in key)).orderBy(order)
    ranked = changed.withColumn("__rank", F.row_number().over(window))
    kept = ranked.where(F.col("__rank") == 1).drop("__rank")
    return kept.withColumn(OP_COLUMN, F.when(F.col(OP_COLUMN) == RowKind.DELETE, F.lit(RowKind.DELETE)).otherwise(F.lit(RowKind.UPDATE_AFTER)))
