"""Exactly-once writes into Kafka: `'sink.delivery-guarantee' = 'exactly-once'` on `kafka` and `upsert-kafka`.

Spark's Kafka sink sends with a plain producer, so a micro-batch Spark replays after a crash is sent twice. This
module hands the batch instead to the transactional writer of jvm/kafkatx (a Spark data source written in Java,
built by `make setup` and put on `spark.jars`, so it runs on every executor): each task writes its partition of the
batch in one Kafka transaction, with `transactional.id` = `<prefix>-<partition>`, and records the batch id in the
same transaction as an offset of the consumer group named after that id; a task that finds its batch recorded
(the batch ran before the crash) writes nothing. That needs a batch run again to put the same rows in the same
partition, which the partitions a query reads in do not promise (Spark's Kafka source may list a topic's partitions
in another order after a restart): so the batch is first spread over a fixed number of partitions by a hash of each
row's key (of its value when the table has no key). The rows go from Spark's rows to the Kafka producer inside the JVM:
no Python per row. How it works and what it costs: docs/reliability.md, "Exactly once into Kafka".
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.errors import ExecutionError, OptionError, UnsupportedFeatureError
from shell.paths import jvm_bundle_jars

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

WRITER = "dev.streamshell.kafka.TransactionalKafkaSink"
BUNDLE = "kafkatx"
EXACTLY_ONCE = "exactly-once"
PREFIX_OPTION = "sink.transactional-id-prefix"
QUERY_ID_PROPERTY = "sql.streaming.queryId"  # set by Spark on the thread that runs a streaming micro-batch
ISOLATION_LEVELS = ("read_committed", "read_uncommitted")
# set by the writer itself: a user's value would break the fencing or the batch record
RESERVED_PROPERTIES = ("properties.transactional.id", "properties.enable.idempotence", "properties.acks")


def check(table: TableDef) -> None:
    """CREATE-time checks of the delivery options."""
    if table.options.get("sink.delivery-guarantee") != EXACTLY_ONCE:
        return
    prefix = table.options.get(PREFIX_OPTION, "")
    if not prefix.strip():
        raise OptionError(
            f"'sink.delivery-guarantee' = 'exactly-once' needs '{PREFIX_OPTION}'",
            hint=f"add '{PREFIX_OPTION}' = '<a name no other sink uses>': the Kafka transactional ids are "
            "<prefix>-<partition>",
        )
    if prefix != prefix.strip() or any(c.isspace() for c in prefix):
        raise OptionError(f"'{PREFIX_OPTION}' must not contain spaces, got '{prefix}'")
    for key in RESERVED_PROPERTIES:
        if key in table.options:
            raise OptionError(
                f"'{key}' cannot be set with 'sink.delivery-guarantee' = 'exactly-once': the sink sets it",
                hint=f"remove '{key}'; the transactional ids come from '{PREFIX_OPTION}'",
            )


def is_exactly_once(table: TableDef) -> bool:
    return table.options.get("sink.delivery-guarantee") == EXACTLY_ONCE


def require_writer() -> list[str]:
    """The writer's jar, or a one-line error that says how to build it."""
    jars = jvm_bundle_jars(BUNDLE)
    if not jars:
        raise UnsupportedFeatureError(
            "'sink.delivery-guarantee' = 'exactly-once' needs the transactional Kafka writer, which is not built",
            hint="run `scripts/jvm-deps kafkatx` (make setup does; it needs a JDK's javac and Maven), then start the "
            "job again; or use 'at-least-once'",
        )
    return jars


def write(spark: "SparkSession", table: TableDef, frame: "DataFrame", client_options: dict[str, str],
          batch_id: int, keyed: bool) -> None:
    """Write `frame` (binary key and value, optional headers) in Kafka transactions, once per batch of the query.

    `keyed`: the table's messages have keys (key fields, or an upsert table's primary key). Then the rows are spread
    by key alone, so the changes of one key stay in one task, in their order, as in Kafka's partition of that key;
    else by value."""
    require_writer()
    query_id = spark.sparkContext.getLocalProperty(QUERY_ID_PROPERTY) or ""  # empty: INSERT ... VALUES, no replay
    # the batch's own session: a streaming query's is restored from its checkpoint, so a resumed job spreads its
    # rows the same way whatever the session that resumes it is set to
    partitions = int(frame.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    writer = (
        frame.repartition(partitions, "key" if keyed else "value")
        .write.format(WRITER)
        .mode("append")
        .options(**client_options)
        .option("topic", table.options["topic"].strip())
        .option("transactional-id-prefix", table.options[PREFIX_OPTION])
        .option("query-id", query_id)
        .option("batch-id", str(batch_id))
    )
    try:
        writer.save()
    except Exception as exc:  # noqa: BLE001 - py4j's error: its Java cause, in one line, is the job's failure
        cause = java_cause(str(exc))
        if cause is None:
            raise
        raise ExecutionError(f"table '{table.name}': exactly-once write of batch {batch_id} failed: {cause}") from None


_CAUSED_BY = re.compile(r"^\s*Caused by: (?:[\w$]+\.)*([\w$]+(?:Exception|Error)): ?(.*)$", re.M)


def java_cause(text: str) -> str | None:
    """The innermost `Caused by:` of a JVM stack trace as `Class: message`, or None."""
    causes = _CAUSED_BY.findall(text)
    if not causes:
        return None
    name, message = causes[-1]
    return f"{name}: {message.strip()}" if message.strip() else name
