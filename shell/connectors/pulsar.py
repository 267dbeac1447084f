"""`pulsar` and `upsert-pulsar` tables, on our Spark data source over the official Pulsar client.

The data source (`pulsar_source.py`, `pulsar_sink.py`) moves raw messages; this module gives them Flink's table
options and metadata names (both spellings, `eventTime` and `event_time`), and shares keys, values, formats and
upsert semantics with Kafka through `topic.py`. A message with a NULL value is a tombstone.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors import topic
from shell.connectors.base import APPEND, UPSERT, Connector, ConnectorContext, OptionSpec, SourceFrame
from shell.connectors.pulsar_common import SHORT_NAME, normalize_topic, split_partition
from shell.connectors.reachability import require_reachable
from shell.connectors.topic import Metadata
from shell.errors import OptionError, UnsupportedFeatureError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_METADATA = {
    ("eventTime", "event_time"): Metadata("eventTime", "TIMESTAMP_LTZ(3)", writable=True),
    ("publishTime", "publish_time"): Metadata("publishTime", "TIMESTAMP_LTZ(3)"),
    ("properties",): Metadata("properties", "MAP<STRING, STRING>", writable=True),
    ("topic",): Metadata("topic", "STRING"),
    ("messageId", "message_id"): Metadata("messageId", "BYTES"),
    ("sequenceId", "sequence_id"): Metadata("sequenceId", "BIGINT"),
    ("key",): Metadata(f"CAST({topic.RAW_KEY} AS STRING)", "STRING"),  # the key column itself is decoded
    ("producerName", "producer_name"): Metadata("producerName", "STRING"),
}
METADATA = {name: meta for names, meta in _METADATA.items() for name in names}
WRITABLE_COLUMNS = {"eventTime": "eventTime", "properties": "properties"}  # data source column by metadata key

# Table options passed to the data source under the same name.
SOURCE_OPTIONS = ("service-url", "admin-url", "topic-pattern", "scan.startup.mode", "source.max-messages-per-trigger",
                  "auth-plugin", "auth-params", "authentication.token", "tls-trust-certs-file-path",
                  "tls-allow-insecure-connection")  # fmt: skip


# How a Pulsar client authenticates and trusts the broker: tables and the Pulsar catalog take the same options.
CLIENT_OPTIONS = (
    OptionSpec("auth-plugin", description="authentication plugin class name"),
    OptionSpec("auth-params", secret=True, description="authentication parameters"),
    OptionSpec("authentication.token", secret=True, description="a JWT token"),
    OptionSpec("tls-trust-certs-file-path", description="CA certificates that verify the broker (pulsar+ssl://, https://)"),
    OptionSpec("tls-allow-insecure-connection", "bool", default="false",
               description="accept a broker certificate that cannot be verified"),
)  # fmt: skip


class PulsarConnector(Connector):
    """A Pulsar topic: every message is an inserted row, its key and value decoded with the formats."""

    name = "pulsar"
    changelog_mode = APPEND
    has_formats = True
    writes_in_one_pass = True
    options = (
        OptionSpec("service-url", required=True, description="e.g. 'pulsar://localhost:6650'"),
        OptionSpec("admin-url", description="e.g. 'http://localhost:8080' (needed to read)"),
        OptionSpec("topic", description="topic name, or several separated by ';'"),
        OptionSpec("topic-pattern", description="regular expression of topic names to read"),
        OptionSpec("scan.startup.mode", "enum", default="earliest", allowed=("earliest", "latest"),
                   description="where reading starts: the first message, or the next one"),
        OptionSpec("source.max-messages-per-trigger", "int", description="most messages per micro-batch"),
        *CLIENT_OPTIONS,
        OptionSpec("properties.*", description="accepted for Flink compatibility"),
        OptionSpec("sink.delivery-guarantee", "enum", default="at-least-once",
                   allowed=("none", "at-least-once", "exactly-once"),
                   description="messages are sent at least once (none is the same); exactly-once is refused: the "
                   "Pulsar Python client has no transactions"),
        *topic.FORMAT_OPTIONS,
    )  # fmt: skip

    def check(self, table: TableDef) -> None:
        if ("topic" in table.options) == ("topic-pattern" in table.options):
            raise OptionError(f"table '{table.name}' needs exactly one of 'topic' and 'topic-pattern'")
        if table.options.get("sink.delivery-guarantee") == "exactly-once":
            raise UnsupportedFeatureError(
                f"'sink.delivery-guarantee' = 'exactly-once' is not supported on {self.name} tables: the Pulsar "
                "Python client the sink sends with (pulsar-client) has no transactions",
                hint="use 'at-least-once' with consumers that drop repeats, an upsert-pulsar table (a batch written "
                "again writes the same values for the same keys), or a kafka table with 'exactly-once'",
            )
        topic.layout(table, self.changelog_mode, METADATA)

    def require_broker(self, table: TableDef) -> None:
        require_reachable("pulsar", "service-url", table.options["service-url"], 6650)

    def source_options(self, table: TableDef) -> dict[str, str]:
        options = {k: v for k, v in table.options.items() if k in SOURCE_OPTIONS}
        options["scan.startup.mode"] = self.option(table, "scan.startup.mode")
        if "topic" in table.options:
            options["topic"] = ",".join(t.strip() for t in table.options["topic"].split(";") if t.strip())
        return options

    def source(self, ctx: ConnectorContext, table: TableDef) -> SourceFrame:
        if "admin-url" not in table.options:
            raise OptionError(f"reading table '{table.name}' needs 'admin-url'", hint="e.g. 'http://localhost:8080'")
        self.require_broker(table)
        from shell.connectors.pulsar_source import register  # imports pyspark: only when Spark runs

        register(ctx.spark)
        raw = ctx.spark.readStream.format(SHORT_NAME).options(**self.source_options(table)).load()
        return SourceFrame(self._decoded(raw, table), bounded=False)

    def _decoded(self, raw: "DataFrame", table: TableDef) -> "DataFrame":
        layout = topic.layout(table, self.changelog_mode, METADATA)
        position = "concat(topic, ':', base64(messageId))"
        return topic.decode(raw, table, layout, METADATA, position, order="ordinal")

    def range_topics(self, table: TableDef) -> frozenset[str] | None:
        if "topic" not in table.options:  # a pattern's topics are not known in advance
            return None
        return frozenset(normalize_topic(t.strip()) for t in table.options["topic"].split(";") if t.strip())

    def offset_topics(self, offset: str) -> frozenset[str]:
        parsed = json.loads(offset)  # {"partition topic": position}; another source's offsets are no dict
        return frozenset(split_partition(p)[0] for p in parsed) if isinstance(parsed, dict) else frozenset()

    def read_range(self, ctx: ConnectorContext, table: TableDef, start: str, end: str) -> "DataFrame":
        from shell.connectors.pulsar_source import register  # imports pyspark: only when Spark runs

        register(ctx.spark)
        reader = ctx.spark.read.format(SHORT_NAME).options(**self.source_options(table))
        raw = reader.option("startingOffsets", start).option("endingOffsets", end).load()
        return self._decoded(raw, table)

    def write_batch(self, ctx: ConnectorContext, table: TableDef, batch: "DataFrame", batch_id: int) -> None:
        if "topic" not in table.options or ";" in table.options["topic"]:
            raise OptionError(f"table '{table.name}' can only be written with a single 'topic'")
        self.require_broker(table)
        from shell.connectors.pulsar_source import register  # imports pyspark: only when Spark runs

        register(ctx.spark)
        layout = topic.layout(table, self.changelog_mode, METADATA)
        encoded = topic.encode(batch, table, layout)
        columns = [f"`{topic.KEY_BYTES}` AS key", f"`{topic.VALUE_BYTES}` AS value"]
        for column in table.persisted_columns():
            if not column.is_physical:
                target = WRITABLE_COLUMNS.get(METADATA[column.metadata_name].expression)
                if target is None:
                    raise OptionError(
                        f"column '{column.name}': Pulsar metadata '{column.metadata_name}' cannot be written",
                        hint="declare it METADATA VIRTUAL (read-only)",
                    )
                columns.append(f"`{column.name}` AS `{target}`")
        writer = encoded.selectExpr(*columns).write.format(SHORT_NAME).mode("append")
        writer.options(**self.source_options(table)).save()


class UpsertPulsarConnector(PulsarConnector):
    """Each message is the new version of its key's row; a NULL value deletes it. Always read from the start."""

    name = "upsert-pulsar"
    changelog_mode = UPSERT
    options = tuple(s for s in PulsarConnector.options if s.key not in ("scan.startup.mode", "key.fields"))

    def source_options(self, table: TableDef) -> dict[str, str]:
        return {**super().source_options(table), "scan.startup.mode": "earliest"}
