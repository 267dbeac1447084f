"""`kafka` and `upsert-kafka` tables (Redpanda speaks the same protocol) on Spark's own Kafka source and sink.

Flink's option names are mapped onto Spark's Kafka options here: `properties.*` become `kafka.*`,
`scan.startup.mode` becomes `startingOffsets`, `scan.bounded.mode` makes the table bounded. Keys, values,
formats and upsert semantics are shared with Pulsar in `topic.py`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors import kafka_transactional, topic
from shell.connectors.base import APPEND, UPSERT, Connector, ConnectorContext, OptionSpec, SourceFrame
from shell.connectors.reachability import require_reachable
from shell.connectors.topic import Metadata
from shell.errors import OptionError, UnsupportedFeatureError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

METADATA = {
    "topic": Metadata("topic", "STRING"),
    "partition": Metadata("partition", "INT"),
    "offset": Metadata("offset", "BIGINT"),
    "timestamp": Metadata("timestamp", "TIMESTAMP_LTZ(3)"),
    "timestamp-type": Metadata(
        "CASE timestampType WHEN 0 THEN 'CreateTime' WHEN 1 THEN 'LogAppendTime' ELSE 'NoTimestampType' END",
        "STRING",
    ),
    "headers": Metadata("map_from_entries(coalesce(headers, array()))", "MAP<STRING, BYTES>", writable=True),
}

EARLIEST = -2  # Spark's offset JSON for a partition's first offset
BUFFER_FLUSH = "accepted for Flink compatibility; no effect (each micro-batch is written at once)"
STARTUP_MODES = ("earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets")


class KafkaConnector(Connector):
    """A Kafka (or Redpanda) topic: every message is an inserted row, its key and value decoded with the formats."""

    name = "kafka"
    changelog_mode = APPEND
    has_formats = True
    writes_in_one_pass = True
    options = (
        OptionSpec("topic", description="topic name, or several separated by ';'"),
        OptionSpec("topic-pattern", description="regular expression of topic names to read"),
        OptionSpec("properties.bootstrap.servers", required=True, description="e.g. 'localhost:9092'"),
        OptionSpec("properties.isolation.level", "enum", allowed=kafka_transactional.ISOLATION_LEVELS,
                   description="reading: read_committed reads only what Kafka transactions committed (what an "
                   "exactly-once sink made visible), read_uncommitted (Kafka's default) everything"),
        OptionSpec("properties.*", description="any Kafka client property"),
        OptionSpec("scan.startup.mode", "enum", default="earliest-offset", allowed=STARTUP_MODES,
                   description="where reading starts: the first record, the next one, scan.startup.timestamp-millis "
                   "or scan.startup.specific-offsets (group-offsets is refused: a job keeps its offsets in its "
                   "checkpoint)"),
        OptionSpec("scan.startup.timestamp-millis", "int",
                   description="with scan.startup.mode 'timestamp': the first record at or after this time (epoch ms)"),
        OptionSpec("scan.startup.specific-offsets",
                   description="with scan.startup.mode 'specific-offsets' (one topic): "
                   "'partition:0,offset:42;partition:1,offset:7'"),
        OptionSpec("scan.bounded.mode", "enum", allowed=("unbounded", "latest-offset"),
                   description="latest-offset: read up to the offsets at the query's start, then end (bounded)"),
        OptionSpec("scan.topic-partition-discovery.interval", "duration",
                   description="accepted for Flink compatibility; no effect (Spark finds new partitions itself)"),
        OptionSpec("source.max-messages-per-trigger", "int", description="most messages per micro-batch (as for Pulsar)"),
        OptionSpec("sink.delivery-guarantee", "enum", default="at-least-once", allowed=("none", "at-least-once", "exactly-once"),
                   description="at-least-once: a micro-batch replayed after a crash may be written twice; exactly-once: "
                   "each micro-batch in Kafka transactions, made visible once (needs sink.transactional-id-prefix; "
                   "read with 'properties.isolation.level' = 'read_committed'); none is at-least-once"),
        OptionSpec("sink.transactional-id-prefix",
                   description="with exactly-once: the Kafka transactional ids are <prefix>-<partition>; "
                   "one prefix per sink, unique on the cluster"),
        OptionSpec("sink.partitioner", "enum", default="default", allowed=("default", "round-robin"),
                   description="accepted for Flink compatibility; no effect (the producer partitions by key)"),
        OptionSpec("sink.parallelism", "int", description="accepted for Flink compatibility; no effect"),
        *topic.FORMAT_OPTIONS,
    )  # fmt: skip

    # -- validation ------------------------------------------------------------------------------------------

    def check(self, table: TableDef) -> None:
        has_topic, has_pattern = "topic" in table.options, "topic-pattern" in table.options
        if has_topic == has_pattern:
            raise OptionError(f"table '{table.name}' needs exactly one of 'topic' and 'topic-pattern'")
        mode = self.option(table, "scan.startup.mode")
        if mode == "group-offsets":
            raise UnsupportedFeatureError(
                "scan.startup.mode 'group-offsets' is not supported: a job keeps its offsets in its checkpoint",
                hint="use 'earliest-offset', 'latest-offset', 'timestamp' or 'specific-offsets'",
            )
        if mode == "timestamp" and "scan.startup.timestamp-millis" not in table.options:
            raise OptionError("scan.startup.mode 'timestamp' needs 'scan.startup.timestamp-millis'")
        if mode == "specific-offsets":
            specific_offsets(table)
        limit = table.options.get("source.max-messages-per-trigger")
        if limit is not None and not (limit.strip().isdigit() and int(limit) > 0):
            raise OptionError(f"'source.max-messages-per-trigger' must be a positive number of messages, not '{limit}'")
        kafka_transactional.check(table)
        for column in table.metadata_columns():
            if column.metadata_name == "timestamp" and not column.virtual:
                raise UnsupportedFeatureError(
                    f"column '{column.name}': Spark's Kafka sink cannot set a record's timestamp",
                    hint="declare it METADATA VIRTUAL (read-only)",
                )
        topic.layout(table, self.changelog_mode, METADATA)

    def is_bounded(self, table: TableDef) -> bool:
        return table.options.get("scan.bounded.mode") == "latest-offset"

    # -- reading ---------------------------------------------------------------------------------------------

    def client_options(self, table: TableDef) -> dict[str, str]:
        """Spark's `kafka.*` options from the table's `properties.*`."""
        return {f"kafka.{k[len('properties.'):]}": v for k, v in table.options.items() if k.startswith("properties.")}

    def require_broker(self, table: TableDef) -> None:
        servers = table.options["properties.bootstrap.servers"]
        require_reachable("kafka", "properties.bootstrap.servers", servers, 9092)

    def source(self, ctx: ConnectorContext, table: TableDef) -> SourceFrame:
        self.require_broker(table)
        options = self.client_options(table)
        options["includeHeaders"] = "true"
        options["failOnDataLoss"] = "false"
        if "topic" in table.options:
            options["subscribe"] = ",".join(t.strip() for t in table.options["topic"].split(";") if t.strip())
        else:
            options["subscribePattern"] = table.options["topic-pattern"]
        options.update(self.starting_offsets(table))  # bounded: the engine reads with the available-now trigger
        if "source.max-messages-per-trigger" in table.options:  # many micro-batches, each with at most this many
            options["maxOffsetsPerTrigger"] = table.options["source.max-messages-per-trigger"].strip()
        raw = ctx.spark.readStream.format("kafka").options(**options).load()
        return SourceFrame(self._decoded(raw, table), self.is_bounded(table))

    def _decoded(self, raw: "DataFrame", table: TableDef) -> "DataFrame":
        layout = topic.layout(table, self.changelog_mode, METADATA)
        position = "concat(topic, ':', partition, ':', offset)"
        return topic.decode(raw, table, layout, METADATA, position, order="offset")

    def range_topics(self, table: TableDef) -> frozenset[str] | None:
        if "topic" not in table.options:  # a pattern's topics are not known in advance
            return None
        return frozenset(t.strip() for t in table.options["topic"].split(";") if t.strip())

    def offset_topics(self, offset: str) -> frozenset[str]:
        parsed = json.loads(offset)  # {"topic": {"partition": offset}}; other sources' offsets look otherwise
        if not isinstance(parsed, dict):
            return frozenset()
        return frozenset(t for t, parts in parsed.items() if isinstance(parts, dict))

    def read_range(self, ctx: ConnectorContext, table: TableDef, start: str, end: str) -> "DataFrame":
        """A batch read of exactly the partitions in `end`; a partition new since `start` from its beginning."""
        starts, ends = json.loads(start), json.loads(end)
        begin = {t: {p: starts.get(t, {}).get(p, EARLIEST) for p in parts} for t, parts in ends.items()}
        options = self.client_options(table)
        options.update(
            includeHeaders="true", failOnDataLoss="false", startingOffsets=json.dumps(begin), endingOffsets=end,
            assign=json.dumps({t: sorted(int(p) for p in parts) for t, parts in ends.items()}),
        )  # fmt: skip
        return self._decoded(ctx.spark.read.format("kafka").options(**options).load(), table)

    def starting_offsets(self, table: TableDef) -> dict[str, str]:
        mode = self.option(table, "scan.startup.mode")
        if mode == "latest-offset":
            return {"startingOffsets": "latest"}
        if mode == "timestamp":
            return {"startingTimestamp": table.options["scan.startup.timestamp-millis"]}
        if mode == "specific-offsets":
            return {"startingOffsets": json.dumps(specific_offsets(table))}
        return {"startingOffsets": "earliest"}

    # -- writing ---------------------------------------------------------------------------------------------

    def records(self, table: TableDef, rows: "DataFrame") -> "DataFrame":
        """The rows as Kafka records (key, value, headers): a micro-batch's, or a stream's in real-time mode."""
        encoded = topic.encode(rows, table, topic.layout(table, self.changelog_mode, METADATA))
        columns = [f"`{topic.KEY_BYTES}` AS key", f"`{topic.VALUE_BYTES}` AS value"]
        headers = next((c for c in table.persisted_columns() if not c.is_physical and c.metadata_name == "headers"), None)
        if headers is not None:
            columns.append(f"transform(map_entries(`{headers.name}`), e -> named_struct('key', e.key, 'value', e.value)) AS headers")
        return encoded.selectExpr(*columns)

    def write_batch(self, ctx: ConnectorContext, table: TableDef, batch: "DataFrame", batch_id: int) -> None:
        if "topic" not in table.options or ";" in table.options["topic"]:
            raise OptionError(f"table '{table.name}' can only be written with a single 'topic'")
        self.require_broker(table)
        records = self.records(table, batch)
        if kafka_transactional.is_exactly_once(table):
            keyed = bool(topic.layout(table, self.changelog_mode, METADATA).key_fields)
            kafka_transactional.write(ctx.spark, table, records, self.client_options(table), batch_id, keyed=keyed)
            return
        (
            records
            .write.format("kafka")
            .options(**self.client_options(table))
            .option("topic", table.options["topic"])
            .save()
        )


class UpsertKafkaConnector(KafkaConnector):
    """Each message is the new version of its key's row; a NULL value deletes it. Always read from the start."""

    name = "upsert-kafka"
    changelog_mode = UPSERT
    options = tuple(
        s for s in KafkaConnector.options
        if not s.key.startswith(("scan.startup", "key.fields", "sink.partitioner"))
    ) + (
        OptionSpec("sink.buffer-flush.max-rows", "int", description=BUFFER_FLUSH),
        OptionSpec("sink.buffer-flush.interval", "duration", description=BUFFER_FLUSH),
    )  # fmt: skip

    def starting_offsets(self, table: TableDef) -> dict[str, str]:
        return {"startingOffsets": "earliest"}


def specific_offsets(table: TableDef) -> dict[str, dict[str, int]]:
    """Flink's 'partition:0,offset:42;partition:1,offset:7' as Spark's {"topic": {"0": 42, "1": 7}}."""
    text = table.options.get("scan.startup.specific-offsets", "")
    name = table.options.get("topic", "")
    if not name or ";" in name:
        raise OptionError("'specific-offsets' needs a single 'topic'")
    offsets: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        fields = dict(item.split(":", 1) for item in part.split(",") if ":" in item)
        try:
            offsets[str(int(fields["partition"]))] = int(fields["offset"])
        except (KeyError, ValueError):
            raise OptionError(
                f"bad 'scan.startup.specific-offsets' entry '{part}'", hint="write 'partition:0,offset:42;partition:1,offset:7'"
            ) from None
    if not offsets:
        raise OptionError("'scan.startup.specific-offsets' is empty", hint="write 'partition:0,offset:42'")
    return {name: offsets}
