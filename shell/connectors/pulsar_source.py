"""The Spark data source `streamshell-pulsar`: Pulsar topics as streaming tables, through pulsar-client.

Why it exists: Spark has no Pulsar connector we can ship, so Pulsar tables are read (and, via `pulsar_sink`,
written) by a Python data source. Register it with `register(spark)` (or `spark.dataSource.register(
PulsarDataSource)` plus an active session on the calling thread, see `register`), then

    spark.readStream.format("streamshell-pulsar").option("service-url", ...).option("admin-url", ...)
        .option("topic", "persistent://public/default/t").option("scan.startup.mode", "earliest").load()

Rows have a fixed schema (`SCHEMA`); formats are decoded later by the SQL layer with Spark expressions. `key` is
the message's partition key as UTF-8 bytes (NULL when it has none), `topic` the topic as configured (for a
partitioned topic, its base name) and `partition` the partition number (-1 for a non-partitioned topic, as in
Pulsar's message ids), `messageId` the bytes of `MessageId.serialize()`, `eventTime` NULL when unset. pulsar-client
exposes no sequence id; `sequenceId` is parsed from the message's text form (NULL if that ever fails).

- Every partition of every topic (`t-partition-N`, or a non-partitioned topic) is one Spark input partition.
- An offset is {partition topic: position}, a position being the base64 `MessageId` of the last message read,
  or `earliest` (see pulsar_common). `latest` start-up is resolved to real ids when the query starts.
- `latestOffset` asks the admin REST API for each partition's last message id (one HTTP call each, concurrently;
  measured at 10-20 ms against 130-180 ms for opening a Reader at the latest message). Under `ReadMaxRows`
  (`source.max-messages-per-trigger`, also used by Trigger.AvailableNow) it caps each batch by entry arithmetic
  over the ledger list (`internalStats`), turning the message budget into an entry budget with a messages-per-entry
  ratio (the broker's counters since the topic was loaded, else the size of the latest entry's batch): exact for
  unbatched producers, approximate for batching ones, and a batch never ends inside an entry.
- `read` opens a Reader after the start position and stops at the end position (inclusive), building Arrow
  record batches from lists of messages. The offset range alone decides what is read, so a batch replayed after
  a restart reads the same messages. `commit` does nothing: a Reader has no subscription to acknowledge.
- Tombstones: a message whose payload is empty, sent with a null value (`send(None)`, what `pulsar_sink` sends
  for a NULL value) or as zero bytes (`send(b"")`), is read with `value` NULL. Pulsar compaction treats both as
  deletes; the upsert layer treats a NULL value as a delete.
"""

from __future__ import annotations

import functools
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from shell.connectors.pulsar_common import (
    EARLIEST,
    SHORT_NAME,
    PulsarAdmin,
    PulsarConfig,
    Position,
    advance,
    count_entries,
    create_client,
    decode_position,
    encode_position,
    is_after,
    ledger_entries,
    parse_options,
    partition_names,
    pattern_namespace,
    split_partition,
)

if TYPE_CHECKING:
    import pyarrow as pa

SCHEMA = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("messageId", BinaryType()),
        StructField("sequenceId", LongType()),
        StructField("publishTime", TimestampType()),
        StructField("eventTime", TimestampType()),
        StructField("properties", MapType(StringType(), StringType())),
        StructField("producerName", StringType()),
        StructField("ordinal", LongType()),
    ]
)

RECEIVER_QUEUE_SIZE = 5000  # messages buffered by a Reader; 1000 (the default) reads ~15% slower
CHUNK_ROWS = 10_000  # rows per Arrow record batch handed to Spark
READ_TIMEOUT_MS = 2000  # then ask the broker whether anything is left before waiting again
MAX_IDLE_WAITS = 5
DISCOVERY_INTERVAL_S = 30.0  # how often topics and partitions are listed again (Flink's default is 30 s too)
IDLE_POLL_INTERVAL_S = 0.1  # after finding nothing new, wait this long before asking the broker again
ADMIN_THREADS = 8
# The C++ client's text form of a message is the only place pulsar-client 3.13 shows the sequence id.
SEQUENCE_ID = re.compile(r", seq=(-?\d+), publish_time=")  # starts with a literal: a fast scan

T = TypeVar("T")
R = TypeVar("R")


class PulsarDataSource(DataSource):
    """`streamshell-pulsar`: read Pulsar topics as a stream, write DataFrames (streaming or batch) to a topic."""

    def __init__(self, options):
        super().__init__(options)
        self.config = parse_options(options)  # a bad option fails at load() / start(), with a one-line message

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    def schema(self) -> StructType:
        return SCHEMA

    def streamReader(self, schema: StructType) -> "PulsarStreamReader":
        return PulsarStreamReader(self.config)

    def reader(self, schema: StructType) -> "PulsarRangeReader":
        """A batch read of one offset range: options `startingOffsets` and `endingOffsets` (offsets as the stream
        reader writes them), what a stateful job reads again for a micro-batch's bad records."""
        ends = json.loads(self.options.get("endingOffsets") or "{}")
        return PulsarRangeReader(self.config, json.loads(self.options.get("startingOffsets") or "{}"), ends)

    def writer(self, schema: StructType, overwrite: bool):
        from shell.connectors.pulsar_sink import PulsarBatchWriter

        return PulsarBatchWriter(self.config, schema, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool):
        from shell.connectors.pulsar_sink import PulsarStreamWriter

        return PulsarStreamWriter(self.config, schema, overwrite)


@dataclass
class PulsarPartition(InputPartition):
    """One Pulsar partition's slice of a micro-batch: messages after `start` up to and including `end`."""

    topic: str  # the partition's own topic name, what a Reader opens
    base_topic: str  # the topic as the user named it (the `topic` column)
    index: int  # the partition number, -1 for a non-partitioned topic
    start: str
    end: str


class PulsarStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans micro-batches on the driver (admin REST calls only) and reads them in Spark's Python workers."""

    def __init__(self, config: PulsarConfig):
        config.require_admin()
        self.config = config
        self._admin: PulsarAdmin | None = None
        self._partitions: list[str] = []
        self._discovered_at: float | None = None
        self._target: dict[str, Position | None] | None = None  # set by Trigger.AvailableNow
        self._latest: dict[str, Position | None] = {}
        self._idle_until = 0.0

    def __getstate__(self):  # only the configuration travels to the workers that call read()
        return {"config": self.config}

    def __setstate__(self, state):
        self.__init__(state["config"])

    # ---- planning (driver) ---------------------------------------------------------------------------------

    @property
    def admin(self) -> PulsarAdmin:
        if self._admin is None:
            self._admin = PulsarAdmin(self.config)
        return self._admin

    def initialOffset(self) -> dict:
        partitions = self._known_partitions(force=True)
        if self.config.startup_mode == EARLIEST:
            return {p: EARLIEST for p in partitions}
        latest = self._latest_positions(partitions)
        return {p: encode_position(latest[p], split_partition(p)[1]) for p in partitions}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.config.max_messages)

    def prepareForTriggerAvailableNow(self) -> None:
        partitions = self._known_partitions(force=True)
        self._target = self._latest_positions(partitions)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        if self._target is not None:
            latest = self._target
        elif time.monotonic() < self._idle_until:
            return start
        else:
            latest = self._latest_positions(self._known_partitions())
        self._latest = latest
        starts = {p: decode_position(start.get(p, EARLIEST)) for p in latest}
        pending = [p for p in latest if is_after(latest[p], starts[p])]
        if not pending:
            self._idle_until = time.monotonic() + IDLE_POLL_INTERVAL_S
            return start
        if isinstance(limit, ReadMaxRows):
            ends = self._capped_ends(pending, starts, latest, limit.max_rows)
        else:
            ends = {p: latest[p] for p in pending}
        offset = dict(start)
        offset.update({p: encode_position(pos, split_partition(p)[1]) for p, pos in ends.items()})
        return dict(sorted(offset.items()))

    def reportLatestOffset(self) -> dict | None:
        if not self._latest:
            return None
        return {p: encode_position(pos, split_partition(p)[1]) for p, pos in sorted(self._latest.items())}

    def partitions(self, start: dict, end: dict) -> list[PulsarPartition]:
        return range_partitions(start, end)

    def commit(self, end: dict) -> None:
        """Nothing to do: Readers have no subscription, and the offsets live in Spark's checkpoint."""

    def stop(self) -> None:
        self._admin = None

    def _known_partitions(self, force: bool = False) -> list[str]:
        """Every partition topic to read; listed again at most every DISCOVERY_INTERVAL_S seconds."""
        now = time.monotonic()
        stale = self._discovered_at is None or now - self._discovered_at >= DISCOVERY_INTERVAL_S
        if (force or stale) and self._target is None:
            self._partitions = self._discover()
            self._discovered_at = now
        return self._partitions

    def _discover(self) -> list[str]:
        if self.config.topic_pattern:
            namespace, regex = pattern_namespace(self.config.topic_pattern)
            topics = [t for t in self.admin.namespace_topics(namespace) if regex.fullmatch(t)]
        else:
            topics = list(self.config.topics)
        counts = _parallel(self.admin.partition_count, topics)
        return sorted(name for topic, count in zip(topics, counts) for name in partition_names(topic, count))

    def _latest_positions(self, partitions: list[str]) -> dict[str, Position | None]:
        return dict(zip(partitions, _parallel(self.admin.latest_position, partitions)))

    def _capped_ends(
        self, pending: list[str], starts: dict, latest: dict, budget: int
    ) -> dict[str, Position | None]:
        """End positions holding about `budget` messages in all, shared in proportion to each backlog.

        Counting is in entries (the ledger list tells how many lie between two positions); the broker's
        messages-per-entry ratio converts messages to entries. Each partition with data advances by at least one
        entry, so every batch makes progress.
        """

        def backlog(topic: str) -> tuple[list[tuple[int, int]], int, float]:
            stats = self.admin.internal_stats(topic) or {}
            ledgers = ledger_entries(stats)
            ratio = self.admin.messages_per_entry(topic, stats, latest[topic])
            return ledgers, count_entries(ledgers, starts[topic], latest[topic]), ratio

        info = dict(zip(pending, _parallel(backlog, pending)))
        estimate = {t: entries * ratio for t, (_, entries, ratio) in info.items()}
        total = sum(estimate.values())
        if total <= budget:
            return {t: latest[t] for t in pending}
        ends = {}
        for topic, (ledgers, entries, ratio) in info.items():
            allowed = max(1, int(budget * estimate[topic] / total / ratio))
            capped = advance(ledgers, starts[topic], latest[topic], allowed) if allowed < entries else None
            ends[topic] = capped or latest[topic]
        return ends

    # ---- reading (Spark's Python workers) ------------------------------------------------------------------

    def read(self, partition: PulsarPartition) -> Iterator["pa.RecordBatch"]:
        return read_partition(self.config, partition)


class PulsarRangeReader(DataSourceReader):
    """Reads the messages between two offsets, one Spark partition per Pulsar partition, as the stream does."""

    def __init__(self, config: PulsarConfig, start: dict, end: dict):
        self.config, self.start, self.end = config, start, end

    def partitions(self) -> list[PulsarPartition]:
        return range_partitions(self.start, self.end)

    def read(self, partition: PulsarPartition) -> Iterator["pa.RecordBatch"]:
        return read_partition(self.config, partition)


def range_partitions(start: dict, end: dict) -> list[PulsarPartition]:
    """The Pulsar partitions that moved from offset `start` to offset `end`, each with its two positions."""
    slices = []
    for topic, end_value in end.items():
        start_value = start.get(topic, EARLIEST)
        if start_value != end_value:
            base, index = split_partition(topic)
            slices.append(PulsarPartition(topic, base, index, start_value, end_value))
    return slices


def register(spark) -> None:
    """Register the data source with `spark`, and make `spark` the JVM's active session on this thread.

    Spark finds Python data sources for writes (`df.write`/`writeStream` ... `.format(SHORT_NAME)`) through the
    calling thread's active session; a session built on another thread (SparkRuntime starts it in the background)
    leaves it unset there, and the lookup fails with DATA_SOURCE_NOT_FOUND. PySpark's createDataFrame sets it too.
    """
    spark.dataSource.register(PulsarDataSource)
    spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)


def _parallel(fn: Callable[[T], R], items: list[T]) -> list[R]:
    """fn over items, concurrently when there are several: each call is one admin HTTP round trip."""
    if len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(ADMIN_THREADS, len(items))) as pool:
        return list(pool.map(fn, items))


def read_partition(config: PulsarConfig, part: PulsarPartition) -> Iterator["pa.RecordBatch"]:
    """The messages of `part` (after start, up to and including end) as Arrow record batches."""
    import pulsar

    end = decode_position(part.end)
    if end is None:
        return
    start = decode_position(part.start)
    client = create_client(config)
    try:
        start_id = pulsar.MessageId.earliest if start is None else start.start_id(part.index)
        reader = client.create_reader(part.topic, start_id, receiver_queue_size=RECEIVER_QUEUE_SIZE)
        try:
            for messages, ids in read_until(raw_reader(reader), end):
                yield to_record_batch(messages, ids, part.base_topic, part.index)
        finally:
            reader.close()
    finally:
        client.close()


def raw_reader(reader):
    """The C extension's reader behind pulsar.Reader: its read_next skips a Python wrapper per message."""
    raw = getattr(reader, "_reader", None)
    if raw is None:
        raise RuntimeError("this pulsar-client version is not supported (pulsar.Reader has no _reader)")
    return raw


def read_until(reader, end: Position) -> Iterator[tuple[list, list]]:
    """Chunks of (messages, ids) of CHUNK_ROWS, read up to and including `end`."""
    messages, ids = [], []
    for message, mid in messages_through(reader, end):
        messages.append(message)
        ids.append(mid)
        if len(messages) >= CHUNK_ROWS:
            yield messages, ids
            messages, ids = [], []
    if messages:
        yield messages, ids


def messages_through(reader, end: Position) -> Iterator[tuple[Any, Any]]:
    """(message, id) pairs up to and including `end`; never waits long past the end of the topic.

    Messages before the end entry pass one C++ id comparison each. Within the end entry: with a known batch index,
    stop at it; with -1 (the whole entry), stop at the next entry or when the broker has nothing more. When a wait
    times out, the broker is asked whether anything is left; after MAX_IDLE_WAITS waits, or if nothing is, the
    rest of the range cannot be read (deleted by retention, or entries a reader never sees, such as markers), and
    reading stops there: the next batch starts after `end` all the same.
    """
    import pulsar

    read_next, available = reader.read_next, reader.has_message_available
    end_id = end.message_id()
    in_end_entry, idle_waits = False, 0
    while not in_end_entry or available():
        try:
            message = read_next(READ_TIMEOUT_MS)
        except pulsar.Timeout:
            idle_waits += 1
            if idle_waits < MAX_IDLE_WAITS and available():
                continue
            return
        idle_waits = 0
        mid = message.message_id()
        if mid < end_id:
            yield message, mid
            continue
        emit, stop = at_end(mid, end)
        if emit:
            yield message, mid
        if stop:
            return
        in_end_entry = True


def at_end(mid, end: Position) -> tuple[bool, bool]:
    """(emit, stop) for a message whose id is not below the end id."""
    if (mid.ledger_id(), mid.entry_id()) != end.entry_key():
        return False, True  # past the end entry
    batch = mid.batch_index()
    if end.batch >= 0:
        return batch <= end.batch, True
    return True, batch < 0  # the whole entry: a batched one may hold more messages


@functools.lru_cache(maxsize=1)
def arrow_schema() -> "pa.Schema":
    """SCHEMA in Arrow, exactly as Spark checks it (timestamps in microseconds, UTC)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(SCHEMA, timezone="UTC")


def to_record_batch(messages: list, ids: list, topic: str, index: int) -> "pa.RecordBatch":
    """One Arrow record batch from a list of messages: each field is fetched with one C-level map per column."""
    import pyarrow as pa
    import _pulsar

    schema = arrow_schema()
    cls = type(messages[0])
    n = len(messages)
    columns = {
        "key": _empty_to_null(pa.array(list(map(cls.partition_key, messages)), pa.string())).cast(pa.binary()),
        "value": _empty_to_null(pa.array(list(map(cls.data, messages)), pa.binary())),
        "topic": pa.array([topic] * n, pa.string()),
        "partition": pa.array([index] * n, pa.int32()),
        "messageId": pa.array(list(map(_pulsar.MessageId.serialize, ids)), pa.binary()),
        "sequenceId": pa.array(sequence_ids(messages), pa.int64()),
        "publishTime": _millis_to_timestamp(list(map(cls.publish_timestamp, messages)), zero_is_null=False),
        "eventTime": _millis_to_timestamp(list(map(cls.event_timestamp, messages)), zero_is_null=True),
        "properties": pa.array(list(map(cls.properties, messages)), schema.field("properties").type),
        "producerName": pa.array(list(map(cls.producer_name, messages)), pa.string()),
        "ordinal": ordinals(ids),
    }
    return pa.RecordBatch.from_arrays([columns[name] for name in schema.names], schema=schema)


def ordinals(ids: list) -> "pa.Array":
    """A LONG per message that grows with its position in the partition: ledger (31 bits), entry (20 bits), batch
    index (12 bits). Upsert tables order a key's changes by it. It assumes fewer than 2^20 entries per ledger
    (Pulsar rolls ledgers over at 50,000 by default) and fewer than 4,095 messages per batch (1,000 by default)."""
    import numpy as np
    import pyarrow as pa
    import _pulsar

    ledger = np.fromiter(map(_pulsar.MessageId.ledger_id, ids), np.int64, len(ids))
    entry = np.fromiter(map(_pulsar.MessageId.entry_id, ids), np.int64, len(ids))
    batch = np.fromiter(map(_pulsar.MessageId.batch_index, ids), np.int64, len(ids))
    return pa.array((ledger << 32) | (entry << 12) | (batch + 1))


def sequence_ids(messages: list) -> list[int | None]:
    """Producer sequence ids, parsed from the messages' text form in one regex pass (None if it fails)."""
    found = SEQUENCE_ID.findall("\n".join(map(str, messages)))
    if len(found) == len(messages):
        return list(map(int, found))
    matches = (SEQUENCE_ID.search(str(m)) for m in messages)  # a property value looked like the pattern
    return [int(m.group(1)) if m else None for m in matches]


def _empty_to_null(array: "pa.Array") -> "pa.Array":
    import pyarrow as pa
    import pyarrow.compute as pc

    empty = pc.equal(pc.binary_length(array), 0)
    if not pc.any(empty).as_py():  # the usual case: no copy
        return array
    return pc.if_else(empty, pa.scalar(None, array.type), array)


def _millis_to_timestamp(millis: list[int], zero_is_null: bool) -> "pa.Array":
    import pyarrow as pa
    import pyarrow.compute as pc

    ms = pa.array(millis, pa.int64())
    ts = pc.multiply(ms, 1000).cast(pa.timestamp("us", tz="UTC"))
    if zero_is_null:
        ts = pc.if_else(pc.equal(ms, 0), pa.scalar(None, ts.type), ts)
    return ts
