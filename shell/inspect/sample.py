"""Reading raw messages of one topic, without a table: a few from the start, or the new ones as they come.

Why it exists: PRINT and DESCRIBE TOPIC look at bytes before any format is declared, so they cannot go through a
table. They use what the product already ships: Spark's Kafka source (in batch mode for a bounded read from the
earliest offsets, as a stream for new messages) and, for Pulsar, pulsar-client Readers, one per partition.
Every message becomes a `Record`: key and value bytes plus where it was (Kafka partition, offset and timestamp;
Pulsar message id, publish time and properties). `Record.row()` is what PRINT shows: key and value as text when
they are UTF-8 text, else as bytes (shown as x'hex').
"""

from __future__ import annotations

import datetime as dt
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shell.catalog.model import TableDef
from shell.connectors.kafka import KafkaConnector
from shell.connectors.pulsar_common import (
    PulsarAdmin,
    PulsarAdminError,
    PulsarOptionError,
    create_client,
    normalize_topic,
    parse_options,
    partition_names,
)
from shell.connectors.reachability import require_reachable
from shell.engine.progress_reports import LAST_REPORTS
from shell.errors import ExecutionError, OptionError
from shell.inspect.infer import utf8
from shell.results import INSERT, Change, ChangeStream, Progress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

KAFKA_COLUMNS = (
    ["partition", "offset", "timestamp", "key", "value"],
    ["int", "bigint", "timestamp", "string", "string"],
)
PULSAR_COLUMNS = (
    ["message_id", "publish_time", "properties", "key", "value"],
    ["string", "timestamp", "map<string,string>", "string", "string"],
)
MAX_ROWS_PER_BATCH = 1000  # a stream from the earliest offset shows a long topic in steps, not in one collect
PULSAR_WAIT_MS = 100  # how long one read waits for a new message before the next partition (and Ctrl-C) is checked
PULSAR_SAMPLE_WAIT_MS = 5000  # a bounded read: how long to wait for a message the broker says is there


@dataclass(frozen=True)
class Connection:
    """Where a topic is: 'kafka' or 'pulsar', the topic as written, and the options that reach the broker.

    `options` are as the user wrote them (copied into a proposed DDL); `resolved` has ${env:NAME} replaced.
    """

    connector: str
    topic: str
    options: dict[str, str]
    resolved: dict[str, str]


@dataclass(frozen=True)
class Record:
    """One raw message and where it was; `position` holds the connector's columns before key and value."""

    key: bytes | None
    value: bytes | None
    position: tuple = field(default=())

    def row(self) -> tuple:
        return (*self.position, shown(self.key), shown(self.value))


def shown(data: bytes | None) -> str | bytes | None:
    """Text when the bytes are UTF-8 text, else the bytes themselves (the printers show them as x'hex')."""
    if data is None:
        return None
    text = utf8(data)
    return text if text is not None else bytes(data)


def utc(millis: int | None) -> dt.datetime | None:
    """Epoch milliseconds as a naive UTC datetime, as the shell shows timestamps (its session time zone is UTC)."""
    if millis is None or millis <= 0:
        return None
    return dt.datetime.fromtimestamp(millis / 1000, tz=dt.timezone.utc).replace(tzinfo=None)


def columns_for(connection: Connection) -> tuple[list[str], list[str]]:
    return KAFKA_COLUMNS if connection.connector == "kafka" else PULSAR_COLUMNS


# ---- Kafka: Spark's Kafka source -------------------------------------------------------------------------------


def _kafka_options(connection: Connection) -> dict[str, str]:
    servers = connection.resolved["properties.bootstrap.servers"]
    require_reachable("kafka", "properties.bootstrap.servers", servers, 9092)
    options = KafkaConnector().client_options(TableDef(connection.topic, options=connection.resolved))
    return {**options, "subscribe": connection.topic, "failOnDataLoss": "false"}


def _kafka_columns(frame: "DataFrame") -> "DataFrame":
    return frame.selectExpr("partition", "offset", "unix_millis(timestamp) AS millis", "key", "value")


def _kafka_record(row: Any) -> Record:
    return Record(
        bytes(row["key"]) if row["key"] is not None else None,
        bytes(row["value"]) if row["value"] is not None else None,
        (row["partition"], row["offset"], utc(row["millis"])),
    )


def _kafka_error(exc: BaseException, connection: Connection) -> ExecutionError:
    from shell.engine.spark_errors import from_spark

    if "UnknownTopicOrPartition" in str(exc):
        return ExecutionError(
            f"kafka: topic '{connection.topic}' does not exist",
            hint="check the name (topic names are case-sensitive) and 'properties.bootstrap.servers'",
        )
    error = from_spark(exc)
    return error if isinstance(error, ExecutionError) else ExecutionError(error.message, hint=error.hint)


def read_kafka(spark: "SparkSession", connection: Connection, count: int) -> list[Record]:
    """Up to `count` messages from the earliest offsets (a batch read that ends at the latest ones)."""
    options = _kafka_options(connection)
    try:
        frame = spark.read.format("kafka").options(**options).option("startingOffsets", "earliest")
        frame = frame.option("endingOffsets", "latest").load()
        rows = _kafka_columns(frame).limit(count).collect()
    except Exception as exc:  # noqa: BLE001 - Spark's errors become ours
        raise _kafka_error(exc, connection) from None
    records = [_kafka_record(row) for row in rows]
    return sorted(records, key=lambda r: (r.position[0], r.position[1]))


def stream_kafka(
    spark: "SparkSession",
    connection: Connection,
    work_dir: Path,
    from_beginning: bool,
    limit: int | None,
    trigger_ms: int,
) -> ChangeStream:
    """A ChangeStream of the topic's messages (from the earliest offsets, or only new ones), ending after `limit`."""
    options = _kafka_options(connection)
    options["startingOffsets"] = "earliest" if from_beginning else "latest"
    options["maxOffsetsPerTrigger"] = str(min(limit or MAX_ROWS_PER_BATCH, MAX_ROWS_PER_BATCH))
    columns, types = KAFKA_COLUMNS
    stream = ChangeStream(list(columns), list(types), bounded=limit is not None)
    enough = threading.Event()
    shown_count = [0]

    def on_batch(batch: "DataFrame", _batch_id: int) -> None:
        if stream.cancelled or enough.is_set():
            return
        records = sorted(
            (_kafka_record(row) for row in batch.collect()),
            key=lambda r: (r.position[2] or dt.datetime.min, r.position[0], r.position[1]),
        )
        if limit is not None:
            records = records[: limit - shown_count[0]]
        if records:
            stream.publish([Change(INSERT, r.row()) for r in records])
            shown_count[0] += len(records)
        if limit is not None and shown_count[0] >= limit:
            enough.set()

    try:
        frame = _kafka_columns(spark.readStream.format("kafka").options(**options).load())
        query = (
            frame.writeStream.foreachBatch(on_batch)
            .trigger(processingTime=f"{trigger_ms} milliseconds")
            .option("checkpointLocation", str(work_dir / "checkpoint"))
            .start()
        )
    except Exception as exc:  # noqa: BLE001
        shutil.rmtree(work_dir, ignore_errors=True)
        raise _kafka_error(exc, connection) from None

    def cancel() -> None:
        query.stop()
        shutil.rmtree(work_dir, ignore_errors=True)

    stream.cancel_callback = cancel
    stream.progress_callback = lambda: Progress.from_spark(LAST_REPORTS.latest(query))
    threading.Thread(
        target=_watch_query, args=(query, stream, enough, connection, work_dir), name="print-watch", daemon=True
    ).start()
    return stream


def _watch_query(
    query: Any, stream: ChangeStream, enough: threading.Event, connection: Connection, work_dir: Path
) -> None:
    """Stop the query once the limit is shown; finish the stream when it ends (failed, cancelled or done)."""
    error = None
    while not enough.is_set():
        try:
            if query.awaitTermination(0.5):
                break
        except Exception as exc:  # noqa: BLE001 - handed to the consumer as our error
            if not stream.cancelled:
                error = _kafka_error(exc, connection)
            break
    if enough.is_set():
        try:
            query.stop()
        except Exception:  # noqa: BLE001 - it is ending anyway
            pass
        shutil.rmtree(work_dir, ignore_errors=True)
    stream.finish(error)


# ---- Pulsar: pulsar-client Readers -----------------------------------------------------------------------------


@dataclass
class PulsarReaders:
    """One Reader per partition (or one for a non-partitioned topic) on one client; close() closes them all."""

    client: Any
    readers: list[tuple[int, Any]]  # (partition index, -1 when not partitioned; reader)

    def close(self) -> None:
        for _, reader in self.readers:
            try:
                reader.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        self.client.close()


def open_pulsar(connection: Connection, from_beginning: bool) -> PulsarReaders:
    """Readers at the earliest message, or after the latest one; fails clearly when the topic does not exist."""
    import pulsar

    options = {**connection.resolved, "topic": connection.topic}
    try:
        config = parse_options(options)
        topic = normalize_topic(connection.topic)
    except PulsarOptionError as exc:
        raise OptionError(str(exc)) from None
    require_reachable("pulsar", "service-url", config.service_url, 6650)
    try:
        admin = PulsarAdmin(config)
        count = admin.partition_count(topic)
        if count == 0 and admin.internal_stats(topic) is None:
            raise ExecutionError(
                f"pulsar: topic '{connection.topic}' does not exist",
                hint="check the name (topic names are case-sensitive; a bare name means persistent://public/default/)",
            )
    except (PulsarAdminError, PulsarOptionError) as exc:
        raise ExecutionError(f"pulsar: {exc}", hint="check 'admin-url'") from None
    start = pulsar.MessageId.earliest if from_beginning else pulsar.MessageId.latest
    client = create_client(config)
    readers = PulsarReaders(client, [])
    try:
        for index, name in enumerate(partition_names(topic, count)):
            readers.readers.append((index if count > 0 else -1, client.create_reader(name, start)))
    except Exception as exc:  # noqa: BLE001 - the client's errors (timeouts, authorization) as ours
        readers.close()
        raise ExecutionError(f"pulsar: cannot read topic '{connection.topic}': {exc}") from None
    return readers


def _pulsar_record(message: Any, partition: int) -> Record:
    mid = message.message_id()
    text = f"{mid.ledger_id()}:{mid.entry_id()}:{partition}"
    if mid.batch_index() >= 0:
        text += f":{mid.batch_index()}"
    key = message.partition_key()
    value = message.data()
    return Record(
        key.encode("utf-8") if key else None,
        value if value else None,  # an empty payload is a tombstone, as the Pulsar tables read it
        (text, utc(message.publish_timestamp()), dict(message.properties()) or None),
    )


def read_pulsar(connection: Connection, count: int) -> list[Record]:
    """Up to `count` messages from the earliest ones, taken in turn from each partition."""
    import pulsar

    readers = open_pulsar(connection, from_beginning=True)
    records: list[Record] = []
    try:
        active = list(readers.readers)
        while active and len(records) < count:
            for item in list(active):
                partition, reader = item
                try:
                    if not reader.has_message_available():
                        active.remove(item)
                        continue
                    message = reader.read_next(PULSAR_SAMPLE_WAIT_MS)
                except pulsar.Timeout:
                    active.remove(item)
                    continue
                records.append(_pulsar_record(message, partition))
                if len(records) >= count:
                    break
    except pulsar.PulsarException as exc:
        raise ExecutionError(f"pulsar: reading topic '{connection.topic}' failed: {exc}") from None
    finally:
        readers.close()
    return sorted(records, key=lambda r: r.position[1] or dt.datetime.min)  # partitions were read in turn


def stream_pulsar(connection: Connection, from_beginning: bool, limit: int | None) -> ChangeStream:
    """A ChangeStream of the topic's messages, read on a thread of ours until `limit` or cancel."""
    readers = open_pulsar(connection, from_beginning)
    columns, types = PULSAR_COLUMNS
    stream = ChangeStream(list(columns), list(types), bounded=limit is not None)
    threading.Thread(target=_pump, args=(readers, stream, limit, connection), name="print-pulsar", daemon=True).start()
    return stream


def _pump(readers: PulsarReaders, stream: ChangeStream, limit: int | None, connection: Connection) -> None:
    import pulsar

    error = None
    seen = 0
    try:
        while not stream.cancelled and (limit is None or seen < limit):
            for partition, reader in readers.readers:
                batch = _drain(reader, partition, MAX_ROWS_PER_BATCH if limit is None else limit - seen)
                if batch and not stream.cancelled:
                    stream.publish([Change(INSERT, r.row()) for r in batch])
                    seen += len(batch)
                if stream.cancelled or (limit is not None and seen >= limit):
                    break
    except pulsar.PulsarException as exc:
        error = ExecutionError(f"pulsar: reading topic '{connection.topic}' failed: {exc}")
    except Exception as exc:  # noqa: BLE001 - the consumer must hear of it, not a dead thread
        error = ExecutionError(f"pulsar: reading topic '{connection.topic}' failed: {exc!r}")
    finally:
        readers.close()
        stream.finish(None if stream.cancelled else error)


def _drain(reader: Any, partition: int, most: int, wait_ms: int = PULSAR_WAIT_MS) -> list[Record]:
    """The messages one reader has now (at most `most`), waiting up to `wait_ms` for the first."""
    import pulsar

    records: list[Record] = []
    while len(records) < most:
        try:
            message = reader.read_next(wait_ms if not records else 10)
        except pulsar.Timeout:
            break
        records.append(_pulsar_record(message, partition))
    return records

