"""Starting a query in Spark's real-time mode: an INSERT's rows written to its Kafka topic as they arrive, a
SELECT's rows taken from the driver as they arrive.

Why it exists apart from engine/query.py: a micro-batch query hands each batch to a Python function
(`foreachBatch`), which real-time mode cannot call (its batches last seconds, the rows must leave at once). The
INSERT writes with Spark's own Kafka sink; the SELECT's rows reach the driver through Spark's memory sink for
long-running batches, which the writer API cannot choose, so jvm/stages RealTimeResults starts the query with it
and hands the shell the rows that arrived since it last looked (why there). Which queries run so is
engine/real_time.py's to say.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.catalog.model import TableDef

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.streaming import StreamingQuery

POLL_S = 0.02  # how often a SELECT takes the rows that arrived at the driver


def start_insert(frame: "DataFrame", sink_table: TableDef, connector, name: str, checkpoint: str,  # noqa: ANN001
                 batch_ms: int) -> "StreamingQuery":  # fmt: skip
    """The INSERT's rows (`frame`, fitted to the target) written to its topic as they arrive."""
    connector.require_broker(sink_table)
    return (
        connector.records(sink_table, frame).writeStream.format("kafka")
        .options(**connector.client_options(sink_table))
        .option("topic", sink_table.options["topic"])
        .outputMode("update")
        .queryName(name)
        .trigger(realTime=f"{batch_ms} milliseconds")
        .option("checkpointLocation", checkpoint)
        .start()
    )


class DriverRows:
    """A SELECT in real-time mode: its query, started into the driver, and `take`."""

    def __init__(self, spark: "SparkSession", frame: "DataFrame", name: str, checkpoint: str, batch_ms: int) -> None:
        from pyspark.sql.streaming import StreamingQuery

        self.spark = spark
        results = spark._jvm.dev.streamshell.realtime.RealTimeResults  # noqa: SLF001
        self._results = results.start(frame._jdf, name, checkpoint, f"{batch_ms} milliseconds")  # noqa: SLF001
        self.query = StreamingQuery(self._results.query())

    def take(self, max_rows: int) -> tuple[list["Row"], int]:
        """The rows that arrived since the last call (at most `max_rows`, as Python rows: a local relation
        collected on the driver, no task) and how many more arrived with them and are not shown."""
        from pyspark.sql import DataFrame

        taken = self._results.take(max_rows)
        if taken is None:
            return [], 0
        return DataFrame(taken, self.spark).collect(), int(self._results.dropped())
