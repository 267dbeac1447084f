"""Translation to Spark SQL: every mapped function, type and window form gives the expected text."""

from __future__ import annotations

import pytest

from shell.catalog.model import Watermark
from shell.errors import UnsupportedFeatureError
from shell.sql import parse_script
from shell.sql.translate import (
    WindowTvf,
    expression_to_spark,
    find_window_tvfs,
    flink_type_to_spark,
    to_spark_sql,
    watermark_delay,
)

pytestmark = pytest.mark.unit


def spark(sql: str) -> str:
    [statement] = parse_script(sql)
    return to_spark_sql(statement.query)


def select_list(expression: str) -> str:
    """Spark text of one Flink select item."""
    out = spark(f"SELECT {expression} FROM t")
    assert out.startswith("SELECT ") and out.endswith(" FROM `t`"), out
    return out[len("SELECT ") : -len(" FROM `t`")]


FUNCTIONS = [
    ("TO_TIMESTAMP(s)", "TO_TIMESTAMP(`s`)"),
    ("TO_TIMESTAMP(s, 'yyyy-MM-dd')", "TO_TIMESTAMP(`s`, 'yyyy-MM-dd')"),
    ("DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm')", "DATE_FORMAT(`ts`, 'yyyy-MM-dd HH:mm')"),
    ("CHAR_LENGTH(s)", "CHAR_LENGTH(`s`)"),
    ("CHARACTER_LENGTH(s)", "CHAR_LENGTH(`s`)"),
    ("SUBSTRING(s FROM 2)", "SUBSTRING(`s`, 2)"),
    ("SUBSTRING(s FROM 2 FOR 3)", "SUBSTRING(`s`, 2, 3)"),
    ("JSON_VALUE(j, '$.a')", "GET_JSON_OBJECT(`j`, '$.a')"),
    ("JSON_VALUE(j, '$.a' RETURNING INT)", "CAST(GET_JSON_OBJECT(`j`, '$.a') AS INT)"),
    ("JSON_VALUE(j, '$.a' RETURNING INT DEFAULT 0 ON EMPTY)", "CAST(COALESCE(GET_JSON_OBJECT(`j`, '$.a'), 0) AS INT)"),
    ("LOCALTIMESTAMP", "LOCALTIMESTAMP()"),
    ("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP()"),
    ("CURRENT_WATERMARK(ts)", "CAST(NULL AS TIMESTAMP)"),
    ("PROCTIME()", "CURRENT_TIMESTAMP()"),
    ("NOW()", "CURRENT_TIMESTAMP()"),
    ("TIMESTAMPADD(HOUR, 2, ts)", "TIMESTAMPADD(HOUR, 2, `ts`)"),
    ("TIMESTAMPDIFF(DAY, a, b)", "TIMESTAMPDIFF(DAY, `a`, `b`)"),
    ("IF(a > 1, 'x', 'y')", "IF(`a` > 1, 'x', 'y')"),
    ("IFNULL(a, 0)", "IFNULL(`a`, 0)"),
    ("COALESCE(a, 0)", "COALESCE(`a`, 0)"),
    ("REGEXP_EXTRACT(s, 'a(b)', 1)", "IF(RLIKE(`s`, 'a(b)'), REGEXP_EXTRACT(`s`, 'a(b)', 1), NULL)"),
    ("REGEXP_EXTRACT(s, 'ab')", "IF(RLIKE(`s`, 'ab'), REGEXP_EXTRACT(`s`, 'ab', 0), NULL)"),
    ("GREATEST(a, 1)", "IF((`a`) IS NULL OR (1) IS NULL, NULL, GREATEST(`a`, 1))"),
    ("TRUNCATE(x, 1)", "IF((`x`) >= 0, FLOOR((`x`) * POWER(10, 1)), CEIL((`x`) * POWER(10, 1))) / POWER(10, 1)"),
    ("SPLIT_INDEX(s, ',', 1)", "TRY_ELEMENT_AT(SPLIT(`s`, ','), (1) + 1)"),
    ("SPLIT_INDEX(s, '|', 0)", "TRY_ELEMENT_AT(SPLIT(`s`, '\\\\|'), (0) + 1)"),
    ("CONCAT_WS('-', a, b)", "CONCAT_WS('-', `a`, `b`)"),
    ("UNIX_TIMESTAMP()", "UNIX_TIMESTAMP()"),
    ("UNIX_TIMESTAMP(s, 'yyyy')", "UNIX_TIMESTAMP(`s`, 'yyyy')"),
    ("FROM_UNIXTIME(n)", "FROM_UNIXTIME(`n`)"),
    ("TO_DATE(s)", "TO_DATE(`s`)"),
    ("CAST(a AS STRING)", "CAST(`a` AS STRING)"),
    ("CAST(NULL AS TIMESTAMP(3))", "CAST(NULL AS TIMESTAMP)"),  # of text: test_text_casts.py
    ("CAST(NULL AS TIMESTAMP_LTZ(3))", "CAST(NULL AS TIMESTAMP)"),  # of text: test_text_casts.py
    ("CAST(NULL AS DECIMAL(10, 2))", "CAST(NULL AS DECIMAL(10, 2))"),  # of text: test_text_casts.py
    ("CAST(a AS BYTES)", "CAST(`a` AS BINARY)"),
    ("CAST(a AS MAP<STRING, INT>)", "CAST(`a` AS MAP<STRING, INT>)"),
    ("CAST(a AS ROW<x INT, y STRING>)", "CAST(`a` AS STRUCT<`x`: INT, `y`: STRING>)"),
    ("CAST(a AS ARRAY<TIMESTAMP(3)>)", "CAST(`a` AS ARRAY<TIMESTAMP>)"),
    ("FLOOR(ts TO HOUR)", "DATE_TRUNC('HOUR', `ts`)"),
    ("CEIL(ts TO DAY)", "IF(DATE_TRUNC('DAY', `ts`) = `ts`, `ts`, DATE_TRUNC('DAY', `ts`) + INTERVAL '1' DAY)"),
    ("LISTAGG(name)", "ARRAY_JOIN(COLLECT_LIST(`name`), ',')"),
    ("LISTAGG(name, ';')", "ARRAY_JOIN(COLLECT_LIST(`name`), ';')"),
    ("CARDINALITY(arr)", "SIZE(`arr`)"),
    ("SHA256(s)", "SHA2(`s`, 256)"),
    ("TO_TIMESTAMP_LTZ(n, 3)", "TIMESTAMP_MILLIS(`n`)"),
    ("TO_TIMESTAMP_LTZ(n, 0)", "TIMESTAMP_SECONDS(`n`)"),
    ("STR_TO_MAP(s)", "STR_TO_MAP(`s`, ',', '=')"),
    ("LOG(x)", "LN(`x`)"),
    ("MAP['a', 1]", "MAP('a', 1)"),
    ("SPLIT_INDEX(PROCTIME(), ',', 0)", "TRY_ELEMENT_AT(SPLIT(CURRENT_TIMESTAMP(), ','), (0) + 1)"),
    ("INTERVAL '5' MINUTES", "INTERVAL '5' MINUTES"),
    ("MY_UDF(a)", "MY_UDF(`a`)"),
]


@pytest.mark.parametrize("flink, expected", FUNCTIONS, ids=[f for f, _ in FUNCTIONS])
def test_functions(flink, expected):
    assert select_list(flink) == expected


WINDOWS = [
    (
        "SELECT window_start, window_end, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
        "SELECT `window`.`start` AS `window_start`, `window`.`end` AS `window_end`, COUNT(*) AS `c` FROM `bids` GROUP BY WINDOW(`ts`, '10 minutes')",
    ),
    (
        "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' HOUR, INTERVAL '15' MINUTE)) GROUP BY window_start, window_end",
        "SELECT `window`.`start` AS `window_start`, COUNT(*) FROM `bids` GROUP BY WINDOW(`ts`, '1 hours', '1 hours', '15 minutes')",
    ),
    (
        "SELECT window_start, window_end, window_time, SUM(price) FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
        "SELECT `window`.`start` AS `window_start`, `window`.`end` AS `window_end`, WINDOW_TIME(`window`) AS `window_time`, SUM(`price`) FROM `bids` GROUP BY WINDOW(`ts`, '10 minutes', '5 minutes')",
    ),
    (
        "SELECT item, window_start, SUM(price) FROM TABLE(SESSION(TABLE bids PARTITION BY item, DESCRIPTOR(ts), INTERVAL '5' MINUTES)) GROUP BY item, window_start, window_end HAVING SUM(price) > 1 ORDER BY window_start",
        "SELECT `item`, `session_window`.`start` AS `window_start`, SUM(`price`) FROM `bids` GROUP BY `item`, SESSION_WINDOW(`ts`, '5 minutes') HAVING SUM(`price`) > 1 ORDER BY `session_window`.`start`",
    ),
    (
        "SELECT w.window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) AS w GROUP BY window_start, window_end",
        "SELECT `window`.`start` AS `window_start`, COUNT(*) FROM `bids` AS `w` GROUP BY WINDOW(`ts`, '1 minutes')",
    ),
    (
        "SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' MINUTES))",
        "SELECT * FROM (SELECT *, `window`.`start` AS `window_start`, `window`.`end` AS `window_end`, WINDOW_TIME(`window`) AS `window_time` FROM (SELECT *, WINDOW(`ts`, '10 minutes') AS `window` FROM `bids`))",
    ),
    (
        "SELECT * FROM TABLE(HOP(DATA => TABLE bids, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '1' MINUTE, SIZE => INTERVAL '2' MINUTE)) AS h",
        "SELECT * FROM (SELECT *, `window`.`start` AS `window_start`, `window`.`end` AS `window_end`, WINDOW_TIME(`window`) AS `window_time` FROM (SELECT *, WINDOW(`ts`, '2 minutes', '1 minutes') AS `window` FROM `bids`)) AS `h`",
    ),
    (
        "SELECT user, TUMBLE_START(ts, INTERVAL '1' DAY) AS wStart, SUM(amount) FROM Orders GROUP BY TUMBLE(ts, INTERVAL '1' DAY), user",
        "SELECT `user`, `window`.`start` AS `wStart`, SUM(`amount`) FROM `Orders` GROUP BY WINDOW(`ts`, '1 days'), `user`",
    ),
    (
        "SELECT HOP_END(ts, INTERVAL '1' HOUR, INTERVAL '1' DAY) AS e, HOP_ROWTIME(ts, INTERVAL '1' HOUR, INTERVAL '1' DAY) AS r FROM Orders GROUP BY HOP(ts, INTERVAL '1' HOUR, INTERVAL '1' DAY)",
        "SELECT `window`.`end` AS `e`, WINDOW_TIME(`window`) AS `r` FROM `Orders` GROUP BY WINDOW(`ts`, '1 days', '1 hours')",
    ),
    (
        "SELECT SESSION_START(ts, INTERVAL '30' MINUTE), COUNT(*) FROM clicks GROUP BY SESSION(ts, INTERVAL '30' MINUTE), user_id",
        "SELECT `session_window`.`start`, COUNT(*) FROM `clicks` GROUP BY SESSION_WINDOW(`ts`, '30 minutes'), `user_id`",
    ),
]


@pytest.mark.parametrize("flink, expected", WINDOWS)
def test_windows(flink, expected):
    assert spark(flink) == expected


def test_find_window_tvfs():
    [s] = parse_script(
        "SELECT * FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES)) AS c"
    )
    [tvf] = find_window_tvfs(s.query)
    assert tvf == WindowTvf("CUMULATE", "Bid", "bidtime", size="10 minutes", step="2 minutes", alias="c")
    [s] = parse_script(
        "SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY (item, shop), DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))"
    )
    [tvf] = find_window_tvfs(s.query)
    assert tvf == WindowTvf("SESSION", "Bid", "bidtime", gap="5 minutes", partition_by=["item", "shop"])


def test_cumulate_groups_by_the_whole_window_and_the_step_number():
    sql = spark(
        "SELECT window_start, window_end, SUM(price) FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), "
        "INTERVAL '2' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end"
    )
    step = "TIMESTAMPADD(MICROSECOND, `__cumulate_step` * 120000000, `window`.`start`)"
    assert sql == (
        f"SELECT `window`.`start` AS `window_start`, {step} AS `window_end`, SUM(`price`) FROM "
        "(SELECT *, EXPLODE(SEQUENCE(CAST(FLOOR(TIMESTAMPDIFF(MICROSECOND, `window`.`start`, `bidtime`) / 120000000) AS INT) + 1, 5)) "
        "AS `__cumulate_step` FROM (SELECT *, WINDOW(`bidtime`, '10 minutes') AS `window` FROM `Bid`)) "
        "GROUP BY `window`, `__cumulate_step`"
    )


def test_cumulate_without_grouping_adds_the_window_columns():
    sql = spark("SELECT * FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '1' HOUR, INTERVAL '1' DAY)) AS c")
    assert "`window`.`start` AS `window_start`" in sql and "- 1, `window`.`start`) AS `window_time`" in sql
    assert sql.endswith("AS `c`") and "SEQUENCE(" in sql and ", 24))" in sql


@pytest.mark.parametrize(
    "sql, feature",
    [
        (
            "SELECT window_start, COUNT(*) FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '3' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
            "not a multiple of its step",
        ),
        ("SELECT * FROM TABLE(SESSION(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))", "SESSION windows without GROUP BY"),
        ("SELECT * FROM TABLE(my_tvf(1))", "table function my_tvf"),
    ],
)
def test_untranslatable_windows_are_named(sql, feature):
    with pytest.raises(UnsupportedFeatureError) as info:
        spark(sql)
    assert feature in info.value.message


def test_temporal_join_becomes_a_plain_join_and_identifiers_are_backquoted():
    out = spark("SELECT o.accountId, r.rate FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.proc_time AS r ON o.cur = r.cur")
    assert out == "SELECT `o`.`accountId`, `r`.`rate` FROM `orders` AS `o` JOIN `rates` AS `r` ON `o`.`cur` = `r`.`cur`"


def test_scenario_query():
    out = spark("SELECT accountId, COUNT(1) AS userCount FROM users GROUP BY accountId")
    assert out == "SELECT `accountId`, COUNT(1) AS `userCount` FROM `users` GROUP BY `accountId`"


def test_translation_does_not_change_the_parsed_tree():
    [s] = parse_script("SELECT PROCTIME() FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))")
    before = s.query.copy()
    to_spark_sql(s.query)
    assert s.query == before


TYPES = [
    ("STRING", "STRING"),
    ("VARCHAR(10)", "STRING"),
    ("CHAR(2)", "STRING"),
    ("BOOLEAN", "BOOLEAN"),
    ("TINYINT", "TINYINT"),
    ("SMALLINT", "SMALLINT"),
    ("INT", "INT"),
    ("INTEGER", "INT"),
    ("BIGINT", "BIGINT"),
    ("FLOAT", "FLOAT"),
    ("DOUBLE", "DOUBLE"),
    ("DECIMAL(10, 2)", "DECIMAL(10, 2)"),
    ("DECIMAL", "DECIMAL(10, 0)"),
    ("DATE", "DATE"),
    ("TIMESTAMP(3)", "TIMESTAMP"),
    ("TIMESTAMP", "TIMESTAMP"),
    ("TIMESTAMP_LTZ(3)", "TIMESTAMP"),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP"),
    ("BYTES", "BINARY"),
    ("VARBINARY(4)", "BINARY"),
    ("BINARY(4)", "BINARY"),
    ("ARRAY<STRING>", "ARRAY<STRING>"),
    ("MAP<STRING, STRING>", "MAP<STRING, STRING>"),
    ("MAP<STRING, ARRAY<INT>>", "MAP<STRING, ARRAY<INT>>"),
    ("ROW<a INT, b STRING>", "STRUCT<a: INT, b: STRING>"),
    ("ROW(a INT, `b c` TIMESTAMP(3))", "STRUCT<a: INT, `b c`: TIMESTAMP>"),
    ("ROW<a ROW<b MAP<STRING, BYTES>>>", "STRUCT<a: STRUCT<b: MAP<STRING, BINARY>>>"),
]


@pytest.mark.parametrize("flink, expected", TYPES)
def test_flink_type_to_spark(flink, expected):
    assert flink_type_to_spark(flink) == expected


def test_expressions_and_watermarks():
    assert expression_to_spark("PROCTIME()") == "CURRENT_TIMESTAMP()"
    assert expression_to_spark("TO_TIMESTAMP(FROM_UNIXTIME(ts_sec))") == "TO_TIMESTAMP(FROM_UNIXTIME(`ts_sec`))"
    assert watermark_delay(Watermark("ts", "ts - INTERVAL '5' SECOND")) == "5 seconds"
    assert watermark_delay(Watermark("ts", "`ts` - INTERVAL '1' MINUTE")) == "1 minutes"
    assert watermark_delay(Watermark("ts", "ts")) == "0 seconds"
    assert watermark_delay(Watermark("ts", "other - INTERVAL '5' SECOND")) is None


def test_avg_of_integers_keeps_their_type_as_in_flink():
    types = {"t": {"qty": "INT", "big": "BIGINT", "price": "DOUBLE"}}
    out = to_spark_sql(parse_script("SELECT AVG(qty), AVG(big), AVG(price), AVG(DISTINCT qty) FROM t")[0].query, types)
    assert "CAST(AVG(`qty`) AS INT)" in out and "CAST(AVG(`big`) AS BIGINT)" in out
    assert "AVG(`price`)" in out and "CAST(AVG(`price`)" not in out


def test_sum_and_avg_distinct_add_up_the_set_of_values_in_the_type_sum_gives():
    types = {"t": {"qty": "INT", "price": "DECIMAL(8, 2)", "w": "DOUBLE"}}
    out = to_spark_sql(parse_script(
        "SELECT SUM(DISTINCT qty), AVG(DISTINCT qty), SUM(DISTINCT price), AVG(DISTINCT w), "
        "SUM(DISTINCT CAST(v AS BIGINT)) FROM t")[0].query, types)  # fmt: skip
    assert "DISTINCT" not in out.upper(), out  # Spark's streaming aggregation refuses distinct aggregates
    assert out.count("COLLECT_SET(`qty`)") >= 2 and "COLLECT_SET(`price`)" in out and "COLLECT_SET(`w`)" in out
    assert "CAST(NULL AS BIGINT)" in out and "CAST(NULL AS DECIMAL(18, 2))" in out and "CAST(NULL AS DOUBLE)" in out
    assert "AS INT)" in out  # AVG(DISTINCT qty) of INT stays INT, as in Flink


@pytest.mark.parametrize("query, hint", [
    ("SELECT SUM(DISTINCT x) FROM (SELECT a + b AS x FROM t)", "CAST(x AS BIGINT)"),
    ("SELECT AVG(DISTINCT UPPER(s)) FROM t", "CAST(x AS BIGINT)"),
])  # fmt: skip
def test_sum_distinct_of_a_value_of_unknown_type_is_refused_with_what_to_do(query, hint):
    with pytest.raises(UnsupportedFeatureError) as caught:
        to_spark_sql(parse_script(query)[0].query, {"t": {"a": "INT", "b": "INT", "s": "STRING"}})
    assert "DISTINCT" in str(caught.value) and hint in (caught.value.hint or "")


def test_initcap_starts_a_word_after_any_character_but_an_ascii_letter_or_digit():
    out = select_list("INITCAP(name)")
    assert "TRANSFORM(SPLIT(`name`, '')" in out and "[A-Za-z0-9]" in out and "INITCAP" not in out.upper().split("AS")[0]
