"""The writing half of `streamshell-pulsar`: a DataFrame's rows become messages of one Pulsar topic.

Why it exists: INSERT INTO a Pulsar table, streaming (`writeStream`) or batch (`write`, e.g. INSERT ... VALUES),
ends here. Each Spark task creates its own client and producer (batching on, blocking when the queue is full),
sends its rows asynchronously, flushes, and reports how many messages it sent; the driver has nothing to commit.

Columns: `value` BINARY or STRING (required; NULL sends a null-value message, the tombstone that the reader reads
back as a NULL value), `key` BINARY (UTF-8) or STRING (the partition key: on a partitioned topic the client hashes
it to a partition, so one key stays in one partition and in order), `properties` MAP<STRING,STRING>, `eventTime`
TIMESTAMP (the event time, in milliseconds). Other columns are ignored, so that a DataFrame read from Pulsar can be
written back as it is.

Delivery is at least once: a task that fails after some sends is retried and sends them again.

Send errors are reported through callbacks, and a Python callback per message halves the send rate (measured
66-71k against 123-129k messages/s in one process), so only every CALLBACK_EVERY-th message, the last one and
every large one carry a callback. That still catches every failure the client produces: a send timeout or a
closed producer fails all pending messages (a run far longer than CALLBACK_EVERY, or one including the last
message), and large messages (the only ones the client rejects alone, as too big) always carry one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import BinaryType, MapType, StringType, StructType, TimestampNTZType, TimestampType

from shell.connectors.pulsar_common import PulsarConfig, PulsarOptionError, create_client

if TYPE_CHECKING:
    import pyarrow as pa

CALLBACK_EVERY = 64
LARGE_MESSAGE_BYTES = 64 * 1024
MAX_PENDING_MESSAGES = 10_000
BATCHING_MAX_PUBLISH_DELAY_MS = 10

ALLOWED_TYPES = {
    "value": (BinaryType, StringType),
    "key": (BinaryType, StringType),
    "properties": (MapType,),
    "eventTime": (TimestampType, TimestampNTZType),
}


@dataclass
class PulsarCommitMessage(WriterCommitMessage):
    """What one task sent."""

    messages: int


def check_schema(schema: StructType) -> None:
    """Reject a DataFrame that the sink cannot write, with a one-line reason."""
    fields = {f.name: f.dataType for f in schema.fields}
    if "value" not in fields:
        raise PulsarOptionError("writing to Pulsar needs a 'value' column (BINARY or STRING)")
    for name, types in ALLOWED_TYPES.items():
        if name in fields and not isinstance(fields[name], types):
            allowed = " or ".join(t.typeName().upper() for t in types)
            actual = fields[name].simpleString().upper()
            raise PulsarOptionError(f"column '{name}' must be {allowed} to be written to Pulsar, not {actual}")
    if "properties" in fields:
        props = fields["properties"]
        if not (isinstance(props.keyType, StringType) and isinstance(props.valueType, StringType)):
            raise PulsarOptionError("column 'properties' must be MAP<STRING, STRING> to be written to Pulsar")


class _Writes:
    """The shared part of the batch and streaming writers."""

    def __init__(self, config: PulsarConfig, schema: StructType, overwrite: bool):
        if overwrite:
            raise PulsarOptionError("a Pulsar topic can only be appended to, not overwritten")
        self.topic = config.single_topic()
        check_schema(schema)
        self.config = config

    def write(self, iterator: Iterator["pa.RecordBatch"]) -> PulsarCommitMessage:
        return PulsarCommitMessage(send_batches(self.config, self.topic, iterator))


class PulsarBatchWriter(_Writes, DataSourceArrowWriter):
    """`df.write.format("streamshell-pulsar")`: nothing to commit or abort (messages are sent when written)."""


class PulsarStreamWriter(_Writes, DataSourceStreamArrowWriter):
    """`df.writeStream.format("streamshell-pulsar")`: each micro-batch's tasks send; commit has nothing to do."""

    def commit(self, messages, batchId: int) -> None:
        """Nothing to do: the tasks have flushed their messages before returning."""

    def abort(self, messages, batchId: int) -> None:
        """Nothing can be taken back: sent messages stay (at-least-once delivery)."""


class SendErrors:
    """The send callback: keeps the first failure (called from the client's I/O thread)."""

    def __init__(self):
        import _pulsar

        self.ok = _pulsar.Result.Ok
        self.first: str | None = None
        self._lock = threading.Lock()

    def __call__(self, result, message_id) -> None:
        if result != self.ok:
            with self._lock:
                self.first = self.first or str(result)


def send_batches(config: PulsarConfig, topic: str, batches: Iterator["pa.RecordBatch"]) -> int:
    """Send every row of `batches` to `topic`; return how many were sent (all acknowledged) or raise."""
    client = create_client(config)
    try:
        producer = client.create_producer(
            topic,
            batching_enabled=True,
            block_if_queue_full=True,
            max_pending_messages=MAX_PENDING_MESSAGES,
            batching_max_publish_delay_ms=BATCHING_MAX_PUBLISH_DELAY_MS,
        )
        errors = SendErrors()
        sent = 0
        try:
            for batch in batches:
                sent += send_batch(producer, batch, errors)
            producer.flush()
        finally:
            producer.close()
        if errors.first:
            raise RuntimeError(f"sending to Pulsar topic {topic} failed: {errors.first}")
        return sent
    finally:
        client.close()


def send_batch(producer, batch: "pa.RecordBatch", errors: SendErrors) -> int:
    """Send one record batch's rows in order; columns are converted to Python lists in bulk first."""
    n = batch.num_rows
    if n == 0:
        return 0
    values = _value_column(batch)
    columns = zip(
        values.to_pylist(),  # None stays None: a null-value message
        _keys(batch, n),
        _properties(batch, n),
        _event_millis(batch, n),
        _callbacks(values, errors),
    )
    send = producer.send_async
    for value, key, prop, millis, callback in columns:
        send(value, callback, properties=prop, partition_key=key, event_timestamp=millis)
    return n


def _is_text(array: "pa.Array") -> bool:
    import pyarrow as pa

    return pa.types.is_string(array.type) or pa.types.is_large_string(array.type)


def _value_column(batch: "pa.RecordBatch") -> "pa.Array":
    import pyarrow as pa

    column = batch.column("value")
    return column.cast(pa.binary()) if _is_text(column) else column


def _keys(batch: "pa.RecordBatch", n: int) -> list:
    import pyarrow as pa

    if "key" not in batch.schema.names:
        return [None] * n
    column = batch.column("key")
    if not _is_text(column):
        try:
            column = column.cast(pa.string())  # Pulsar keys are strings
        except pa.ArrowInvalid:
            raise ValueError("a Pulsar message key must be UTF-8 text; column 'key' holds other bytes") from None
    return column.to_pylist()


def _properties(batch: "pa.RecordBatch", n: int) -> list:
    if "properties" not in batch.schema.names:
        return [None] * n
    rows = batch.column("properties").to_pylist()
    return [None if p is None else {k: v for k, v in p if v is not None} for p in rows]


def _event_millis(batch: "pa.RecordBatch", n: int) -> list:
    """Milliseconds since the epoch; None for NULL (and for times not after 1970, which Pulsar cannot carry)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if "eventTime" not in batch.schema.names:
        return [None] * n
    millis = pc.divide(batch.column("eventTime").cast(pa.int64()), 1000)
    return pc.if_else(pc.greater(millis, 0), millis, pa.scalar(None, pa.int64())).to_pylist()


def _callbacks(values: "pa.Array", errors: SendErrors) -> list:
    """The callback for each row: on every CALLBACK_EVERY-th, the last and every large one; None elsewhere."""
    import pyarrow.compute as pc

    n = len(values)
    callbacks: list = [None] * n
    callbacks[::CALLBACK_EVERY] = [errors] * len(range(0, n, CALLBACK_EVERY))
    callbacks[-1] = errors
    large = pc.greater_equal(pc.fill_null(pc.binary_length(values), 0), LARGE_MESSAGE_BYTES)
    for i in pc.indices_nonzero(large).to_pylist():
        callbacks[i] = errors
    return callbacks
