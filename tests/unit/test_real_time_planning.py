"""Which queries real-time mode (`'execution.latency' = 'low'`) takes, and the reason it gives for the others,
before anything starts; the master of a real-time job's own Spark; Spark's own refusal said as ours."""

from __future__ import annotations

import os

import pytest

from shell.catalog.store import Catalog
from shell.engine import real_time
from shell.engine.spark_errors import from_spark
from shell.errors import UnsupportedFeatureError
from shell.planner.planner import plan_query
from shell.sql.parse import parse_query
from tests.sessions import catalog_after

pytestmark = pytest.mark.unit

KAFKA = "'connector' = 'kafka', 'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json'"
DDL = f"""
CREATE TABLE src (id BIGINT, name STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ({KAFKA}, 'topic' = 'in');
CREATE TABLE other (id BIGINT, name STRING) WITH ({KAFKA}, 'topic' = 'other');
CREATE TABLE bounded (id BIGINT) WITH ({KAFKA}, 'topic' = 'b', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE capped (id BIGINT) WITH ({KAFKA}, 'topic' = 'c', 'source.max-messages-per-trigger' = '10');
CREATE TABLE keyed (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'k', 'properties.bootstrap.servers' = '127.0.0.1:9',
        'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen');
CREATE TABLE out_topic (id BIGINT, name STRING) WITH ({KAFKA}, 'topic' = 'out');
CREATE TABLE out_two (id BIGINT, name STRING) WITH ({KAFKA}, 'topic' = 'a;b');
CREATE TABLE out_files (id BIGINT, name STRING) WITH ('connector' = 'filesystem', 'path' = '/tmp/o', 'format' = 'json');
CREATE VIEW evens AS SELECT id, name FROM src WHERE id % 2 = 0;
CREATE TABLE out_once (id BIGINT, name STRING) WITH ({KAFKA}, 'topic' = 'o',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'p');
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Catalog:
    return catalog_after(DDL, tmp_path_factory.mktemp("home"))


def refusal(catalog: Catalog, sql: str, target: str | None = None) -> str | None:
    table = catalog.table(target) if target else None
    return real_time.refusal(plan_query(parse_query(sql), catalog), table)


@pytest.mark.parametrize("sql", [
    "SELECT id, UPPER(name) AS name FROM src WHERE id % 2 = 1",
    "SELECT * FROM src",
    "SELECT id, CAST(ts AS STRING) AS t FROM src WHERE name LIKE 'a%'",
    "SELECT id, name FROM src UNION ALL SELECT id, name FROM other",
    "SELECT * FROM evens",
    "WITH odd AS (SELECT * FROM src WHERE id % 2 = 1) SELECT id FROM odd",
    "SELECT * FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))",
])  # fmt: skip
def test_a_query_over_kafka_tables_that_keeps_no_state_passes_the_plan_check(catalog, sql):
    assert refusal(catalog, sql) is None
    assert refusal(catalog, sql, "out_topic") is None  # what Spark's plan holds is checked once built (tests/e2e)


@pytest.mark.parametrize(("sql", "reason"), [
    ("SELECT name, COUNT(*) FROM src GROUP BY name", "it keeps state (an aggregation, a join, Top-N, OVER"),
    ("SELECT id FROM src ORDER BY ts LIMIT 3", "it keeps state (an aggregation, a join, Top-N, OVER"),
    ("SELECT id, COUNT(*) OVER (PARTITION BY id ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM src",
     "it keeps state (an aggregation, a join, Top-N, OVER"),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) AS rn FROM src) WHERE rn = 1",
     "it keeps state (a deduplication"),
    ("SELECT id FROM bounded", "the query reads to an end ('scan.bounded.mode')"),
    ("SELECT id FROM capped", "table 'capped' sets 'source.max-messages-per-trigger'"),
    ("SELECT id FROM keyed", "table 'keyed' uses connector 'upsert-kafka'; real-time mode reads Kafka topics"),
    ("SELECT id FROM gen", "table 'gen' uses connector 'datagen'; real-time mode reads Kafka topics"),
    ("SELECT id FROM src UNION ALL SELECT id FROM gen", "table 'gen' uses connector 'datagen'"),
])  # fmt: skip
def test_every_other_query_is_refused_with_its_own_reason(catalog, sql, reason):
    said = refusal(catalog, sql)
    assert said is not None and said.startswith(reason), said


@pytest.mark.parametrize(("target", "reason"), [
    ("out_files", "table 'out_files' uses connector 'filesystem'; real-time mode writes Kafka topics"),
    ("out_two", "a single 'topic'"),
    ("out_once", "writes exactly once, in a transaction per micro-batch"),
])  # fmt: skip
def test_a_sink_it_cannot_write_is_refused(catalog, target, reason):
    said = refusal(catalog, "SELECT id, name FROM src", target)
    assert said is not None and reason in said, said


def test_the_refusal_names_the_setting_and_the_way_back(catalog):
    with pytest.raises(UnsupportedFeatureError) as raised:
        real_time.refuse(real_time.refusal(plan_query(parse_query("SELECT COUNT(*) FROM src"), catalog)))
    assert "real-time mode ('execution.latency' = 'low')" in str(raised.value)
    assert raised.value.hint == "SET 'execution.latency' = 'normal' runs it in micro-batches"


@pytest.mark.parametrize(("master", "settings", "expected"), [
    ("local[*]", {"execution.latency": "low"}, f"local[{max(real_time.LOCAL_THREADS, os.cpu_count())}]"),
    ("local[2]", {"execution.latency": "low"}, f"local[{real_time.LOCAL_THREADS}]"),
    ("local", {"execution.latency": "low"}, f"local[{real_time.LOCAL_THREADS}]"),
    ("local[4,3]", {"execution.latency": "low"}, f"local[{real_time.LOCAL_THREADS},3]"),
    ("local[32]", {"execution.latency": "low"}, "local[32]"),
    ("local-cluster[2,1,1024]", {"execution.latency": "low"}, "local-cluster[2,1,1024]"),
    ("local[*]", {}, "local[*]"),
    ("local[*]", {"execution.latency": "normal"}, "local[*]"),
    ("spark://host:7077", {"execution.latency": "low"}, "spark://host:7077"),
])  # fmt: skip
def test_a_real_time_jobs_local_spark_gets_a_thread_per_partition_it_may_read(master, settings, expected):
    assert real_time.local_master(master, settings) == expected


def test_a_batch_is_never_shorter_than_sparks_minimum():
    assert real_time.batch_duration_ms(0) == 5_000
    assert real_time.batch_duration_ms(60_000) == 60_000


@pytest.mark.parametrize("wrapped", ["{}", "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: {}"])
def test_sparks_own_refusal_is_said_as_ours_without_its_advice_to_turn_the_check_off(wrapped):
    spark_said = ("[STREAMING_REAL_TIME_MODE.OPERATOR_OR_SINK_NOT_IN_ALLOWLIST] Streaming real-time mode has the "
                  "following limitation: The operator(s): ArrowEvalPythonExec is not in the operator allowlist for "
                  "Real-Time Mode. To bypass this check, set spark.sql.streaming.realTimeMode.allowlistCheck to "
                  "false. By changing this, you agree to run the query at your own risk. SQLSTATE: 0A000")  # fmt: skip
    error = from_spark(Exception(wrapped.format(spark_said)))
    assert isinstance(error, UnsupportedFeatureError)
    assert str(error) == ("real-time mode ('execution.latency' = 'low') cannot run this query: The operator(s): "
                          "ArrowEvalPythonExec is not in the operator allowlist for Real-Time Mode.")
    assert error.hint == "SET 'execution.latency' = 'normal' runs it in micro-batches"
