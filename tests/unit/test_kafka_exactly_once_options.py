"""The exactly-once options of `kafka` and `upsert-kafka` tables, and `properties.isolation.level`, checked at
CREATE TABLE time; the transactional writer itself is tested against the broker (tests/e2e/test_kafka_exactly_once.py)."""

import pytest

from shell.catalog.model import Column, TableDef
from shell.connectors import kafka_transactional
from shell.connectors.registry import validate_table
from shell.errors import OptionError, UnsupportedFeatureError

KAFKA = {"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "k:9092", "format": "json"}
UPSERT = {"connector": "upsert-kafka", "topic": "t", "properties.bootstrap.servers": "k:9092",
          "key.format": "json", "value.format": "json"}
EXACTLY_ONCE = {"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "orders-out"}


def table(options: dict[str, str], key: bool = False) -> TableDef:
    return TableDef("t", [Column("id", "BIGINT"), Column("name", "STRING")], options=options,
                    primary_key=["id"] if key else [])


@pytest.mark.parametrize("options, key", [({**KAFKA, **EXACTLY_ONCE}, False), ({**UPSERT, **EXACTLY_ONCE}, True)])
def test_exactly_once_with_a_prefix_is_accepted_on_kafka_and_upsert_kafka(options, key):
    assert validate_table(table(options, key)).name == options["connector"]


@pytest.mark.parametrize(
    "options, message",
    [
        ({**KAFKA, "sink.delivery-guarantee": "exactly-once"},
         "'sink.delivery-guarantee' = 'exactly-once' needs 'sink.transactional-id-prefix'"),
        ({**KAFKA, **EXACTLY_ONCE, "sink.transactional-id-prefix": " "}, "needs 'sink.transactional-id-prefix'"),
        ({**KAFKA, **EXACTLY_ONCE, "sink.transactional-id-prefix": "a b"}, "must not contain spaces, got 'a b'"),
        ({**KAFKA, **EXACTLY_ONCE, "properties.transactional.id": "x"},
         "'properties.transactional.id' cannot be set with 'sink.delivery-guarantee' = 'exactly-once'"),
        ({**KAFKA, **EXACTLY_ONCE, "properties.acks": "1"}, "'properties.acks' cannot be set"),
        ({**KAFKA, "sink.delivery-guarantee": "exactly_once"}, "must be one of 'none', 'at-least-once', 'exactly-once'"),
        ({**KAFKA, "properties.isolation.level": "read_comitted"},
         "must be one of 'read_committed', 'read_uncommitted'"),
    ],
)
def test_bad_exactly_once_options_are_one_line_errors_naming_the_option(options, message):
    with pytest.raises(OptionError) as info:
        validate_table(table(options))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("level", ["read_committed", "read_uncommitted"])
def test_isolation_level_is_accepted_and_reaches_sparks_kafka_source(level):
    options = {**KAFKA, "properties.isolation.level": level}
    connector = validate_table(table(options))
    assert connector.client_options(table(options))["kafka.isolation.level"] == level


def test_without_the_writer_built_exactly_once_says_how_to_build_it(monkeypatch):
    monkeypatch.setattr(kafka_transactional, "jvm_bundle_jars", lambda bundle: [])
    with pytest.raises(UnsupportedFeatureError) as info:
        kafka_transactional.require_writer()
    assert "exactly-once' needs the transactional Kafka writer" in str(info.value)
    assert "scripts/jvm-deps kafkatx" in info.value.hint


@pytest.mark.parametrize("connector, key", [("pulsar", False), ("upsert-pulsar", True)])
def test_exactly_once_on_pulsar_is_refused_with_the_reason_and_what_to_do(connector, key):
    options = {"connector": connector, "topic": "t", "service-url": "pulsar://p:6650",
               "sink.delivery-guarantee": "exactly-once"}
    options.update({"key.format": "json", "value.format": "json"} if key else {"format": "json"})
    with pytest.raises(UnsupportedFeatureError) as info:
        validate_table(table(options, key))
    assert str(info.value) == (f"'sink.delivery-guarantee' = 'exactly-once' is not supported on {connector} tables: "
                               "the Pulsar Python client the sink sends with (pulsar-client) has no transactions")
    assert "at-least-once" in info.value.hint and "kafka table with 'exactly-once'" in info.value.hint


def test_a_failed_write_is_told_by_its_innermost_java_cause():
    trace = """An error occurred while calling o581.save.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2935)
Caused by: org.apache.kafka.common.KafkaException: a send failed
\tat dev.streamshell.kafka.TransactionalWriter.failOnSendError(TransactionalWriter.java:130)
Caused by: java.lang.IllegalStateException: batch 0 run again gives transactional id 'p-1' other rows
\t... 12 more"""
    assert kafka_transactional.java_cause(trace) == (
        "IllegalStateException: batch 0 run again gives transactional id 'p-1' other rows")
    assert kafka_transactional.java_cause("no trace here") is None
