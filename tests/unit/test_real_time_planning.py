"""Which queries real-time mode (`'execution.latency' = 'low'`) takes, and the reason it gives for the others,
before anything starts; the master of a real-time job's own Spark; Spark's own refusal said as ours."""

from __future__ import annotations

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
])  # fmt: skip
def test_a_query_that_filters_and_projects_one_kafka_table_is_taken(catalog, sql):
    assert refusal(catalog, sql) is None
    assert refusal(catalog, sql, "out_topic") is None


@pytest.mark.parametrize(("sql", "reason"), [
    ("SELECT name, COUNT(*) FROM src GROUP BY name", "filters and projects"),
    ("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
     "GROUP BY window_start, window_end", "filters and projects"),
    ("SELECT s.id FROM src s JOIN other o ON s.id = o.id", "filters and projects"),
    ("SELECT id FROM src UNION ALL SELECT id FROM other", "more than one table"),
    ("SELECT DISTINCT name FROM src", "filters and projects"),
    ("SELECT id FROM bounded", "reads to an end"),
    ("SELECT id FROM capped", "'source.max-messages-per-trigger'"),
    ("SELECT id FROM keyed", "filters and projects"),
    ("SELECT id FROM gen", "uses connector 'datagen'; real-time mode reads Kafka topics"),
])  # fmt: skip
def test_every_other_query_is_refused_with_its_reason(catalog, sql, reason):
    said = refusal(catalog, sql)
    assert said is not None and reason in said, said


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
        real_time.refuse(plan_query(parse_query("SELECT COUNT(*) FROM src"), catalog))
    assert "real-time mode ('execution.latency' = 'low')" in str(raised.value)
    assert raised.value.hint == "SET 'execution.latency' = 'normal' runs it in micro-batches"


@pytest.mark.parametrize(("master", "settings", "expected"), [
    ("local[*]", {"execution.latency": "low"}, f"local[{max(real_time.LOCAL_THREADS, __import__('os').cpu_count())}]"),
    ("local[2]", {"execution.latency": "low"}, f"local[{max(real_time.LOCAL_THREADS, __import__('os').cpu_count())}]"),
    ("local[32]", {"execution.latency": "low"}, "local[32]"),
    ("local[*]", {}, "local[*]"),
    ("local[*]", {"execution.latency": "normal"}, "local[*]"),
    ("spark://host:7077", {"execution.latency": "low"}, "spark://host:7077"),
])  # fmt: skip
def test_a_real_time_jobs_local_spark_gets_a_thread_per_partition_it_may_read(master, settings, expected):
    assert real_time.local_master(master, settings) == expected


def test_a_batch_is_never_shorter_than_sparks_minimum():
    assert real_time.batch_duration_ms(0) == 5_000
    assert real_time.batch_duration_ms(60_000) == 60_000


def test_sparks_own_refusal_is_said_as_ours_without_its_advice_to_turn_the_check_off():
    spark_said = ("[STREAMING_REAL_TIME_MODE.OPERATOR_OR_SINK_NOT_IN_ALLOWLIST] Streaming real-time mode has the "
                  "following limitation: The operator(s): ArrowEvalPythonExec is not in the operator allowlist for "
                  "Real-Time Mode. To bypass this check, set spark.sql.streaming.realTimeMode.allowlistCheck to "
                  "false. By changing this, you agree to run the query at your own risk. SQLSTATE: 0A000")  # fmt: skip
    error = from_spark(Exception(spark_said))
    assert isinstance(error, UnsupportedFeatureError)
    assert str(error) == ("real-time mode ('execution.latency' = 'low') cannot run this query: The operator(s): "
                          "ArrowEvalPythonExec is not in the operator allowlist for Real-Time Mode.")
    assert error.hint == "SET 'execution.latency' = 'normal' runs it in micro-batches"
