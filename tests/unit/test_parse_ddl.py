"""DDL from Flink's documented syntax: parses, round-trips, and becomes the right TableDef."""

from __future__ import annotations

import pytest

from shell.catalog.model import Column, ColumnKind, TableDef, ViewDef, Watermark
from shell.errors import SqlSyntaxError, UnsupportedFeatureError
from shell.sql import parse_script
from shell.sql import statements as st
from shell.sql.ddl import create_table_sql, create_view_sql
from tests.unit.roundtrip import assert_roundtrip

pytestmark = pytest.mark.unit


KAFKA = "'connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'json'"
UPSERT_KAFKA = (
    "'connector' = 'upsert-kafka', 'topic' = 'pv', 'properties.bootstrap.servers' = 'localhost:9092', "
    "'key.format' = 'json', 'value.format' = 'json'"
)
PULSAR = "'connector' = 'pulsar', 'topics' = 'persistent://public/default/t', 'service-url' = 'pulsar://localhost:6650', 'format' = 'json'"
UPSERT_PULSAR = (
    "'connector' = 'upsert-pulsar', 'topic' = 'persistent://public/default/users', 'key.format' = 'raw', "
    "'value.format' = 'json', 'service-url' = 'pulsar://localhost:6650', 'admin-url' = 'http://localhost:8080'"
)
FILESYSTEM = "'connector' = 'filesystem', 'path' = 'file:///tmp/out', 'format' = 'csv'"
DATAGEN = "'connector' = 'datagen', 'rows-per-second' = '10', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100'"

DDL = [
    # kafka
    f"CREATE TABLE orders (order_id BIGINT, price DECIMAL(32, 2), buyer ROW<first_name STRING, last_name STRING>, order_time TIMESTAMP(3), WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND) WITH ({KAFKA})",
    f"CREATE TABLE KafkaTable (`user_id` BIGINT, `item_id` BIGINT, `behavior` STRING, `ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH ({KAFKA})",
    f"CREATE TABLE KafkaTable (`event_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', `partition` BIGINT METADATA VIRTUAL, `offset` BIGINT METADATA VIRTUAL, `user_id` BIGINT, `item_id` BIGINT, `behavior` STRING) WITH ({KAFKA})",
    f"CREATE TABLE KafkaTable (`event_time` TIMESTAMP_LTZ(3) METADATA FROM 'value.source.timestamp' VIRTUAL, `origin_table` STRING METADATA FROM 'value.source.table' VIRTUAL, `user_id` BIGINT) WITH ({KAFKA})",
    f"CREATE TABLE KafkaTable (`ts` TIMESTAMP(3) METADATA FROM 'timestamp', `user_id` BIGINT, `behavior` STRING, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ({KAFKA})",
    f"CREATE TABLE user_behavior (user_id BIGINT, item_id BIGINT, category_id BIGINT, behavior STRING, ts TIMESTAMP(3), proctime AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ({KAFKA})",
    f"CREATE TABLE headers_t (`headers` MAP<STRING, BYTES> METADATA, `leader-epoch` INT METADATA VIRTUAL, v STRING) WITH ({KAFKA})",
    f"CREATE TABLE t1 (id INT NOT NULL, name STRING COMMENT 'the name', PRIMARY KEY (id) NOT ENFORCED) COMMENT 'people' WITH ({UPSERT_KAFKA})",
    f"CREATE TABLE pageviews_per_region (user_region STRING, pv BIGINT, uv BIGINT, PRIMARY KEY (user_region) NOT ENFORCED) WITH ({UPSERT_KAFKA})",
    f"CREATE TABLE pageviews (user_id BIGINT, page_id BIGINT, viewtime TIMESTAMP, user_region STRING, WATERMARK FOR viewtime AS viewtime - INTERVAL '2' SECOND) WITH ({KAFKA})",
    f"CREATE TABLE IF NOT EXISTS t2 (a INT) WITH ({KAFKA})",
    f"CREATE TEMPORARY TABLE t3 (a INT, b AS a * 2) WITH ({KAFKA})",
    f"CREATE TEMPORARY TABLE IF NOT EXISTS cat1.db1.t4 (a INT) WITH ({KAFKA})",
    f"CREATE TABLE t5 (a INT, CONSTRAINT pk_a PRIMARY KEY (a) NOT ENFORCED) WITH ({UPSERT_KAFKA})",
    f"CREATE TABLE t6 (a INT PRIMARY KEY NOT ENFORCED, b STRING) WITH ({UPSERT_KAFKA})",
    f"CREATE TABLE t7 (a INT, b STRING, c DOUBLE, PRIMARY KEY (a, b) NOT ENFORCED) WITH ({UPSERT_KAFKA})",
    f"CREATE TABLE t8 (rowtime AS TO_TIMESTAMP(FROM_UNIXTIME(ts_sec)), ts_sec BIGINT, WATERMARK FOR rowtime AS rowtime) WITH ({KAFKA})",
    f"CREATE TABLE t9 (ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND) WITH ({KAFKA})",
    f"CREATE TABLE t10 (log_ts STRING, ts AS TO_TIMESTAMP(log_ts, 'yyyy-MM-dd HH:mm:ss'), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE) WITH ({KAFKA})",
    f"CREATE TABLE t11 (payload STRING, amount AS CAST(JSON_VALUE(payload, '$.amount') AS DECIMAL(10, 2))) WITH ({KAFKA})",
    f"CREATE TABLE t12 (a ARRAY<STRING>, m MAP<STRING, INT>, r ROW<x INT, y ROW<z STRING>>, n MAP<STRING, ARRAY<BIGINT>>) WITH ({KAFKA})",
    f"CREATE TABLE t13 (a TINYINT, b SMALLINT, c INT, d BIGINT, e FLOAT, f DOUBLE, g BOOLEAN, h DATE, i TIME, j TIMESTAMP(6), k DECIMAL, l CHAR(3), m VARCHAR(20), n BINARY(4), o VARBINARY(8), p BYTES) WITH ({KAFKA})",
    f"CREATE TABLE t14 (a INTEGER, b DEC(5, 1), c NUMERIC(4, 2), d DOUBLE PRECISION, e TIMESTAMP(3) WITHOUT TIME ZONE, f TIMESTAMP(3) WITH LOCAL TIME ZONE) WITH ({KAFKA})",
    f"CREATE TABLE t15 (r ROW(a INT, b STRING)) WITH ({KAFKA})",
    f"CREATE TABLE t16 (`timestamp` TIMESTAMP(3), `value` STRING, `key` STRING, `user` STRING) WITH ({KAFKA})",
    f"CREATE TABLE t17 (accountId STRING, fullName STRING, CamelCase INT) WITH ({KAFKA})",
    f"CREATE TABLE `my-table` (`my col` INT, `weird``name` STRING) WITH ({KAFKA})",
    # upsert-pulsar / pulsar
    f"CREATE TABLE users (uid STRING, accountId STRING, id INT, fullName STRING, op STRING, eventTime TIMESTAMP(3) METADATA, properties MAP<STRING, STRING> METADATA, topic STRING METADATA VIRTUAL, sequenceId BIGINT METADATA VIRTUAL, PRIMARY KEY (uid) NOT ENFORCED) WITH ({UPSERT_PULSAR})",
    f"CREATE TABLE pulsar_src (id BIGINT, msg STRING, publish_time TIMESTAMP_LTZ(3) METADATA FROM 'publish_time' VIRTUAL, WATERMARK FOR publish_time AS publish_time - INTERVAL '1' SECOND) WITH ({PULSAR})",
    f"CREATE TABLE pulsar_sink (id BIGINT, cnt BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ({UPSERT_PULSAR})",
    f"CREATE TABLE pulsar_key (`key` BYTES METADATA FROM 'key' VIRTUAL, `value` STRING) WITH ({PULSAR})",
    # filesystem
    f"CREATE TABLE fs_table (user_id STRING, order_amount DOUBLE, dt STRING, `hour` STRING) PARTITIONED BY (dt, `hour`) WITH ({FILESYSTEM})",
    f"CREATE TABLE fs_src (line STRING, `file.path` STRING NOT NULL METADATA, `file.size` BIGINT METADATA VIRTUAL) WITH ({FILESYSTEM})",
    "CREATE TABLE fs_json (a INT, b STRING) WITH ('connector' = 'filesystem', 'path' = '/data/in', 'format' = 'json', 'source.monitor-interval' = '10s')",
    # datagen
    f"CREATE TABLE Orders (order_number BIGINT, price DECIMAL(32, 2), buyer ROW<first_name STRING, last_name STRING>, order_time TIMESTAMP(3)) WITH ('connector' = 'datagen')",
    f"CREATE TABLE gen (id INT, name STRING, ts AS LOCALTIMESTAMP, WATERMARK FOR ts AS ts) WITH ({DATAGEN})",
    "CREATE TABLE datagen_len (f_sequence INT, f_random INT, f_random_str STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '5', 'fields.f_sequence.kind' = 'sequence', 'fields.f_sequence.start' = '1', 'fields.f_sequence.end' = '1000', 'fields.f_random.min' = '1', 'fields.f_random.max' = '1000', 'fields.f_random_str.length' = '10')",
    "CREATE TABLE bh (a INT) WITH ('connector' = 'blackhole')",
    "CREATE TABLE pr (a INT, b STRING) WITH ('connector' = 'print', 'print-identifier' = 'p')",
    # LIKE
    f"CREATE TABLE derived (WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('scan.startup.mode' = 'earliest-offset') LIKE base",
    f"CREATE TABLE derived2 (extra STRING) WITH ('topic' = 'x') LIKE base (EXCLUDING ALL, INCLUDING OPTIONS, OVERWRITING WATERMARKS)",
    "CREATE TABLE derived3 LIKE base (INCLUDING ALL)",
    "CREATE TEMPORARY TABLE derived4 WITH ('connector' = 'print') LIKE base (EXCLUDING OPTIONS)",
    # empty and commented
    "CREATE TABLE nothing_yet (a INT) WITH ()",
    f"CREATE TABLE comments (a INT COMMENT 'x', b AS a + 1 COMMENT 'computed', c INT METADATA COMMENT 'meta') COMMENT 'tbl' WITH ({KAFKA})",
    # views
    "CREATE VIEW v1 AS SELECT a, b FROM t WHERE a > 1",
    "CREATE TEMPORARY VIEW IF NOT EXISTS v2 (x, y) AS SELECT a, COUNT(*) FROM t GROUP BY a",
    "CREATE VIEW v3 COMMENT 'latest' AS SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts DESC) AS rn FROM t) WHERE rn = 1",
    "CREATE VIEW v4 AS WITH x AS (SELECT * FROM t) SELECT * FROM x UNION ALL SELECT * FROM y",
    "CREATE VIEW v5 AS VALUES (1, 'a'), (2, 'b')",
    # functions
    "CREATE FUNCTION parse_ua AS 'udfs.parse_user_agent' LANGUAGE PYTHON",
    "CREATE TEMPORARY FUNCTION IF NOT EXISTS f2 AS 'com.example.F'",
    "CREATE TEMPORARY SYSTEM FUNCTION f3 AS 'com.example.F' LANGUAGE JAVA",
    "CREATE FUNCTION db.f4 AS 'my_module.fn' LANGUAGE PYTHON",
    # drop / alter
    "DROP TABLE t",
    "DROP TABLE IF EXISTS cat.db.t",
    "DROP TEMPORARY TABLE t",
    "DROP VIEW v",
    "DROP TEMPORARY VIEW IF EXISTS v",
    "DROP FUNCTION f",
    "DROP TEMPORARY FUNCTION IF EXISTS f",
    "ALTER TABLE t SET ('scan.startup.mode' = 'latest-offset')",
    "ALTER TABLE IF EXISTS t SET ('a' = 'b', 'c' = 'd')",
]


def ddl(prefix: str) -> str:
    """The first DDL case starting with `prefix`."""
    return next(s for s in DDL if s.startswith(prefix))


@pytest.mark.parametrize("sql", DDL)
def test_ddl_round_trips(sql):
    assert_roundtrip(sql)


@pytest.mark.parametrize("sql", [s for s in DDL if s.startswith(("CREATE TABLE", "CREATE TEMPORARY TABLE"))])
def test_table_def_round_trips_through_create_table_sql(sql):
    [statement] = parse_script(sql)
    assert isinstance(statement, st.CreateTable)
    printed = create_table_sql(statement.table)
    [again] = parse_script(printed)
    assert again.table == statement.table, printed
    assert again.table.to_dict() == statement.table.from_dict(statement.table.to_dict()).to_dict()


def test_table_def_of_the_scenario_users_table():
    [statement] = parse_script(ddl("CREATE TABLE users"))
    table = statement.table
    assert table.name == "users"
    assert table.connector == "upsert-pulsar"
    assert table.primary_key == ["uid"]
    assert [c.name for c in table.physical_columns()] == ["uid", "accountId", "id", "fullName", "op"]
    assert table.column("ACCOUNTID").name == "accountId"
    assert table.column("eventTime") == Column("eventTime", "TIMESTAMP(3)", ColumnKind.METADATA)
    assert table.column("properties").data_type == "MAP<STRING, STRING>"
    topic = table.column("topic")
    assert topic.kind is ColumnKind.METADATA and topic.virtual and topic.metadata_name == "topic"
    assert [c.name for c in table.persisted_columns()] == ["uid", "accountId", "id", "fullName", "op", "eventTime", "properties"]


def test_table_def_details():
    [s] = parse_script(ddl("CREATE TABLE user_behavior"))
    assert s.table.watermark == Watermark("ts", "ts - INTERVAL '5' SECOND")
    proctime = s.table.column("proctime")
    assert proctime.kind is ColumnKind.COMPUTED and proctime.expression == "PROCTIME()" and proctime.data_type is None
    [s] = parse_script(ddl("CREATE TABLE KafkaTable (`event_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', `partition`"))
    assert s.table.column("event_time").metadata_key == "timestamp"
    assert s.table.column("offset").virtual
    [s] = parse_script(ddl("CREATE TABLE t1 "))
    assert s.table.column("id").nullable is False
    assert s.table.column("name").comment == "the name"
    assert s.table.comment == "people"
    [s] = parse_script(ddl("CREATE TABLE t6 "))
    assert s.table.primary_key == ["a"]
    [s] = parse_script(ddl("CREATE TABLE fs_table"))
    assert s.table.partitioned_by == ["dt", "hour"]
    [s] = parse_script(ddl("CREATE TABLE derived2"))
    assert s.table.like.source == "base"
    assert s.table.like.options == ["EXCLUDING ALL", "INCLUDING OPTIONS", "OVERWRITING WATERMARKS"]


def test_types_are_normalized():
    [s] = parse_script(ddl("CREATE TABLE t14"))
    types = {c.name: c.data_type for c in s.table.columns}
    assert types == {
        "a": "INT", "b": "DECIMAL(5, 1)", "c": "DECIMAL(4, 2)", "d": "DOUBLE",
        "e": "TIMESTAMP(3)", "f": "TIMESTAMP_LTZ(3)",
    }
    [s] = parse_script(ddl("CREATE TABLE t15"))
    assert s.table.column("r").data_type == "ROW<a INT, b STRING>"


def test_statement_flags():
    [s] = parse_script(ddl("CREATE TEMPORARY TABLE IF NOT EXISTS cat1"))
    assert s.temporary and s.if_not_exists and s.table.name == "cat1.db1.t4"
    [s] = parse_script("CREATE TEMPORARY VIEW IF NOT EXISTS v2 (x, y) AS SELECT a, COUNT(*) FROM t GROUP BY a")
    assert isinstance(s, st.CreateView) and s.temporary and s.if_not_exists and s.columns == ["x", "y"]
    assert s.query_sql.startswith("SELECT")
    [s] = parse_script("CREATE FUNCTION parse_ua AS 'udfs.parse_user_agent' LANGUAGE PYTHON")
    assert s == st.CreateFunction("parse_ua", "udfs.parse_user_agent", "PYTHON")
    [s] = parse_script("DROP TEMPORARY VIEW IF EXISTS v")
    assert s == st.DropTable("v", if_exists=True, is_view=True, temporary=True)
    [s] = parse_script("DROP FUNCTION f")
    assert s == st.DropFunction("f")
    [s] = parse_script("ALTER TABLE IF EXISTS t SET ('a' = 'b', 'c' = 'd')")
    assert s == st.AlterTableSet("t", {"a": "b", "c": "d"}, if_exists=True)


def test_create_table_sql_is_multiline_and_redacts():
    table = TableDef(
        "t",
        [Column("a", "INT", nullable=False), Column("b", None, ColumnKind.COMPUTED, expression="a + 1")],
        {"connector": "kafka", "properties.sasl.jaas.config": "secret!"},
        primary_key=["a"],
    )
    text = create_table_sql(table, redact=lambda k, v: "******" if "sasl" in k else v)
    assert text.splitlines()[0] == "CREATE TABLE t ("
    assert "  a INT NOT NULL," in text
    assert "'properties.sasl.jaas.config' = '******'" in text and "secret!" not in text
    assert "PRIMARY KEY (a) NOT ENFORCED" in text


def test_create_view_sql():
    text = create_view_sql(ViewDef("v", "SELECT\n  a\nFROM t", ["x"], "c"))
    assert text == "CREATE VIEW v (x) COMMENT 'c' AS\nSELECT\n  a\nFROM t"
    [s] = parse_script(text)
    assert isinstance(s, st.CreateView) and s.columns == ["x"]


@pytest.mark.parametrize(
    "sql, message",
    [
        ("CREATE TABLE t (a INT, PRIMARY KEY (a))", "PRIMARY KEY must be declared NOT ENFORCED"),
        ("CREATE TABLE t (a STRNG)", "expected a data type"),
        ("CREATE TABLE t (a INT,)", "expected a column name"),
        ("CREATE TABLE t (a INT) WITH (connector = 'kafka')", "expected a quoted option key"),
        ("CREATE TABLE t (a INT) WITH ('connector' 'kafka')", "expected '=' after the option key"),
        ("CREATE TABLE t (a INT) WITH ('connector' = 'kafka',)", "expected a quoted option key"),
        ("CREATE TABLE t (a INT, WATERMARK FOR a)", "expected AS"),
        ("CREATE TABLE t (a INT", "expected ',' or ')'"),
        ("CREATE TABLE (a INT)", "expected a table name"),
        ("CREATE TABEL t (a INT)", "expected TABLE, VIEW, FUNCTION, CATALOG or DATABASE"),
        ("CREATE VIEW v SELECT 1", "expected AS"),
        ("DROP t", "expected TABLE, VIEW, FUNCTION, CATALOG or DATABASE"),
        ("ALTER TABLE t RENAME", "expected a column name"),
        ("ALTER TABLE t FLIP a", "expected SET, RESET, ADD, MODIFY, DROP or RENAME"),
        ("CREATE TABLE t (a INT) WITH ('connector' = 'blackhole') AS SELECT 1 AS a", "takes its columns from the query"),
        ("CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts, WATERMARK FOR ts AS ts)", "only one WATERMARK"),
    ],
)
def test_ddl_errors(sql, message):
    with pytest.raises((SqlSyntaxError, UnsupportedFeatureError)) as info:
        parse_script(sql)
    assert message in info.value.message


@pytest.mark.parametrize(
    "sql, feature",
    [
        ("CREATE OR REPLACE TABLE t AS SELECT 1", "CREATE OR REPLACE TABLE ... AS SELECT"),
        ("CREATE TABLE t (a MULTISET<INT>)", "the MULTISET type"),
        ("CREATE TABLE t (a INT, UNIQUE (a))", "a UNIQUE constraint"),
        ("CREATE TABLE t (a INT, CHECK (a > 0))", "a CHECK constraint"),
        ("CREATE FUNCTION f AS 'x' USING JAR 'a.jar'", "CREATE FUNCTION ... USING JAR"),
        ("ALTER DATABASE d SET ('k' = 'v')", "ALTER DATABASE"),
    ],
)
def test_unsupported_ddl_is_named(sql, feature):
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_script(sql)
    assert info.value.message == f"{feature} is not supported"
