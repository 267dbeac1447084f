"""Each key's first row in event time, as an append-only view: the engine's side of planner/first_rows.py.

Why it exists: a keep-first deduplication on a time attribute (Flink's insert-only `ROW_NUMBER() .. ORDER BY
rowtime ASC = 1`) has no Spark operator of its own. jvm/stages' `FirstRowByTime`, a `transformWithState` operator
in event time, keeps each key's waiting row and whether its row has left, in Spark's state store; its output's time
column carries the watermark on, so a window aggregation or a join after it runs as over any append-only table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.engine.changelog import key_expression
from shell.engine.state_layout import jvm_stages_loaded
from shell.errors import UnsupportedFeatureError
from shell.planner.first_rows import FirstRows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

KEY = "__first_key"


def first_rows_view(session: "SparkSession", first: FirstRows) -> "DataFrame":
    """The first row of each key of `first.rows_sql` by `first.time`, as a streaming DataFrame (its views exist)."""
    from pyspark.sql import DataFrame

    jvm = session._jvm
    stages = jvm.dev.streamshell.stages
    if not jvm_stages_loaded(session, "FirstRowByTime"):
        raise UnsupportedFeatureError(
            "a deduplication on a time attribute needs jvm/stages, which this Spark does not have",
            hint="run make setup (it builds jvm/stages with the JDK's javac), then start the shell again")
    rows = session.sql(first.rows_sql)
    keyed = rows.withColumn(KEY, key_expression(list(first.key), nulls_match=True))
    processor = stages.FirstRowByTime(keyed.schema.json(), first.time)
    encoders = jvm.org.apache.spark.sql.Encoders
    grouped = keyed._jdf.groupByKey(stages.KeyColumn(keyed.columns.index(KEY)), encoders.STRING())
    output = grouped.transformWithState(processor, first.time, jvm.org.apache.spark.sql.streaming.OutputMode.Append(),
                                        encoders.row(keyed._jdf.schema()))
    return DataFrame(output.toDF(), session).drop(KEY)
