"""Queries, INSERTs and statement sets from Flink's documented syntax, plus the shared scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlglot import exp

from shell.errors import SqlSyntaxError, UnsupportedFeatureError
from shell.sql import parse_script
from shell.sql import statements as st
from tests.unit.roundtrip import assert_roundtrip

pytestmark = pytest.mark.unit


QUERIES = [
    # basics
    "SELECT * FROM orders",
    "SELECT a, b AS c FROM t WHERE a > 10 AND b LIKE 'x%'",
    "SELECT DISTINCT user_id FROM clicks",
    "SELECT a, COUNT(*) AS cnt, SUM(b), MIN(c), MAX(d), AVG(e) FROM t GROUP BY a HAVING COUNT(*) > 1",
    "SELECT COUNT(DISTINCT user_id) FROM t",
    "SELECT a FROM t ORDER BY ts DESC LIMIT 10",
    "SELECT CASE WHEN a > 1 THEN 'big' WHEN a = 1 THEN 'one' ELSE 'small' END FROM t",
    "SELECT a || '-' || b FROM t",
    "SELECT * FROM t WHERE a IN (1, 2, 3) AND b IS NOT NULL AND c BETWEEN 1 AND 5",
    "SELECT * FROM t WHERE a IN (SELECT a FROM s)",
    "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.id = t.id)",
    "SELECT `timestamp`, `value` FROM t",
    "SELECT accountId, fullName FROM users",
    "SELECT u.accountId FROM users AS u",
    "SELECT cat.db.t.a FROM cat.db.t",
    "SELECT -a, +b, a % 2, a / 2, a * 2 FROM t",
    "SELECT 'it''s', 'a;b', '--not a comment' FROM t",
    "SELECT TRUE, FALSE, NULL, 1.5, 1e3 FROM t",
    "SELECT X'00FF', x'0a' AS b, X'', CAST(X'CAFE' AS BYTES) FROM t WHERE data = X'00'",
    "VALUES (1, 'a'), (2, 'b')",
    "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v (id, name)",
    "WITH x AS (SELECT a FROM t), y AS (SELECT a FROM x) SELECT * FROM y",
    "SELECT a FROM t UNION ALL SELECT a FROM s",
    "SELECT a FROM t UNION SELECT a FROM s",
    "(SELECT a FROM t) UNION ALL (SELECT a FROM s)",
    "SELECT a FROM t INTERSECT SELECT a FROM s",
    "SELECT a FROM t EXCEPT SELECT a FROM s",
    # joins
    "SELECT * FROM a JOIN b ON a.id = b.id",
    "SELECT * FROM a INNER JOIN b ON a.id = b.id",
    "SELECT * FROM a LEFT JOIN b ON a.id = b.id",
    "SELECT * FROM a LEFT OUTER JOIN b ON a.id = b.id",
    "SELECT * FROM a RIGHT JOIN b ON a.id = b.id",
    "SELECT * FROM a FULL OUTER JOIN b ON a.id = b.id",
    "SELECT * FROM a CROSS JOIN b",
    "SELECT * FROM a, b WHERE a.id = b.id",
    "SELECT * FROM Orders o, Shipments s WHERE o.id = s.order_id AND o.order_time BETWEEN s.ship_time - INTERVAL '4' HOUR AND s.ship_time",
    "SELECT o.order_id, o.total, c.country FROM Orders AS o JOIN Customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id",
    "SELECT order_id, price, currency, conversion_rate FROM orders LEFT JOIN currency_rates FOR SYSTEM_TIME AS OF orders.order_time ON orders.currency = currency_rates.currency",
    "SELECT * FROM a LEFT JOIN b ON a.id = b.id AND b.x > 1 LEFT JOIN c ON b.id = c.id",
    "SELECT order_id, tag FROM Orders CROSS JOIN UNNEST(tags) AS t (tag)",
    "SELECT a, s FROM t, LATERAL TABLE(split_udtf(a)) AS T(s)",
    "SELECT a, s FROM t LEFT JOIN LATERAL TABLE(split_udtf(a)) AS T(s) ON TRUE",
    # window table functions
    "SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))",
    "SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES))",
    "SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
    "SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES)) GROUP BY window_start, window_end",
    "SELECT window_start, window_end, SUM(price) FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
    "SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES))",
    "SELECT window_start, window_end, SUM(price) FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
    "SELECT window_start, window_end, item, SUM(price) AS total_price FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) GROUP BY item, window_start, window_end",
    "SELECT window_start, window_end, SUM(price) FROM TABLE(SESSION(TABLE Bid PARTITION BY (item, supplier), DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) GROUP BY item, supplier, window_start, window_end",
    "SELECT window_start, window_end, supplier_id, SUM(price) AS price FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), ())",
    "SELECT window_start, window_end, supplier_id, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end, ROLLUP (supplier_id)",
    "SELECT L.num AS L_Num, R.num AS R_Num, COALESCE(L.window_start, R.window_start) AS window_start FROM (SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) AS L FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) AS R ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end",
    "SELECT * FROM (SELECT window_start, window_end, supplier_id, SUM(price) AS price, COUNT(*) AS cnt, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY SUM(price) DESC) AS rownum FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end, supplier_id) WHERE rownum <= 3",
    "SELECT window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) AS w GROUP BY window_start, window_end",
    # legacy group windows
    "SELECT user, TUMBLE_START(ts, INTERVAL '1' DAY) AS wStart, SUM(amount) FROM Orders GROUP BY TUMBLE(ts, INTERVAL '1' DAY), user",
    "SELECT user, HOP_END(ts, INTERVAL '1' HOUR, INTERVAL '1' DAY) AS wEnd, SUM(amount) FROM Orders GROUP BY HOP(ts, INTERVAL '1' HOUR, INTERVAL '1' DAY), user",
    "SELECT user, SESSION_START(ts, INTERVAL '1' DAY) AS sStart, SESSION_ROWTIME(ts, INTERVAL '1' DAY) AS sEnd, SUM(amount) FROM Orders GROUP BY SESSION(ts, INTERVAL '1' DAY), user",
    "SELECT TUMBLE_END(rowtime, INTERVAL '1' MINUTE), COUNT(DISTINCT user_id) FROM t GROUP BY TUMBLE(rowtime, INTERVAL '1' MINUTE)",
    # OVER, Top-N, dedup
    "SELECT order_id, order_time, amount, SUM(amount) OVER (PARTITION BY product ORDER BY order_time RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) AS one_hour_prod_amount_sum FROM Orders",
    "SELECT product, amount, SUM(amount) OVER w AS sum_amount, AVG(amount) OVER w AS avg_amount FROM Orders WINDOW w AS (PARTITION BY product ORDER BY order_time ROWS BETWEEN 5 PRECEDING AND CURRENT ROW)",
    "SELECT a, COUNT(*) OVER (PARTITION BY a ORDER BY proctime ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS row_num FROM ShopSales) WHERE row_num <= 5",
    "SELECT product_id, category, product_name, sales FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS row_num FROM ShopSales) WHERE row_num <= 5",
    "SELECT order_id, user, product, num FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY proctime ASC) AS row_num FROM Orders) WHERE row_num = 1",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts DESC) AS rn FROM t) WHERE rn = 1",
    "SELECT a, RANK() OVER (ORDER BY b), DENSE_RANK() OVER (ORDER BY b), LAG(b, 1) OVER (PARTITION BY a ORDER BY ts) FROM t",
    # functions
    "SELECT TO_TIMESTAMP(s), TO_TIMESTAMP(s, 'yyyy-MM-dd HH:mm:ss') FROM t",
    "SELECT DATE_FORMAT(ts, 'yyyy-MM-dd'), CHAR_LENGTH(s), CHARACTER_LENGTH(s) FROM t",
    "SELECT SUBSTRING(s FROM 2), SUBSTRING(s FROM 2 FOR 3), SUBSTR(s, 2, 3) FROM t",
    "SELECT JSON_VALUE(payload, '$.a'), JSON_VALUE(payload, '$.b' RETURNING INT), JSON_VALUE(payload, '$.c' RETURNING DOUBLE DEFAULT 0 ON EMPTY ERROR ON ERROR) FROM t",
    "SELECT LOCALTIMESTAMP, CURRENT_TIMESTAMP, CURRENT_DATE, LOCALTIME, NOW(), PROCTIME() FROM t",
    "SELECT CURRENT_WATERMARK(ts) FROM t WHERE CURRENT_WATERMARK(ts) IS NULL OR ts > CURRENT_WATERMARK(ts)",
    "SELECT TIMESTAMPADD(HOUR, 2, ts), TIMESTAMPDIFF(DAY, a, b), TIMESTAMPDIFF(SECOND, a, b) FROM t",
    "SELECT IF(a > 1, 'x', 'y'), IFNULL(a, 0), COALESCE(a, b, 0), NULLIF(a, 0) FROM t",
    "SELECT REGEXP_EXTRACT(s, 'a(b+)', 1), REGEXP_EXTRACT(s, 'ab+'), REGEXP_REPLACE(s, 'a', 'b') FROM t",
    "SELECT SPLIT_INDEX(s, ',', 0), CONCAT_WS('-', a, b), CONCAT(a, b) FROM t",
    "SELECT UNIX_TIMESTAMP(), UNIX_TIMESTAMP(s), UNIX_TIMESTAMP(s, 'yyyy'), FROM_UNIXTIME(n), FROM_UNIXTIME(n, 'yyyy-MM-dd') FROM t",
    "SELECT TO_DATE(s), TO_DATE(s, 'yyyyMMdd') FROM t",
    "SELECT CAST(a AS STRING), CAST(b AS TIMESTAMP(3)), CAST(c AS TIMESTAMP_LTZ(3)), CAST(d AS DECIMAL(10, 2)), CAST(e AS BIGINT) FROM t",
    "SELECT CAST(m AS MAP<STRING, STRING>), CAST(r AS ROW<a INT, b STRING>), CAST(arr AS ARRAY<INT>), CAST(x AS BYTES) FROM t",
    "SELECT TRY_CAST(a AS INT) FROM t",
    "SELECT EXTRACT(HOUR FROM ts), YEAR(ts), HOUR(ts), FLOOR(ts TO HOUR), CEIL(ts TO DAY) FROM t",
    "SELECT TRIM(s), TRIM(BOTH ' ' FROM s), TRIM(LEADING 'x' FROM s), LOWER(s), UPPER(s), POSITION('a' IN s) FROM t",
    "SELECT LISTAGG(name), LISTAGG(name, ';'), CARDINALITY(arr), arr[1], m['k'] FROM t GROUP BY g",
    "SELECT ROW(1, 'a'), ARRAY[1, 2, 3], MAP['a', 1] FROM t",
    "SELECT SHA256(s), MD5(s), TO_TIMESTAMP_LTZ(n, 3), STR_TO_MAP(s) FROM t",
    "SELECT INTERVAL '1' DAY, INTERVAL '2' HOUR, INTERVAL '10' SECONDS, ts + INTERVAL '1' MINUTE FROM t",
    "SELECT my_udf(a, b), my_module_fn(a) FROM t",
    # hints and comments
    "SELECT /*+ BROADCAST(b) */ * FROM a JOIN b ON a.id = b.id",
    "SELECT a -- trailing comment\nFROM t /* block */ WHERE a > 1",
]

INSERTS = [
    "INSERT INTO user_count_by_account (accountId, userCount) SELECT accountId, COUNT(1) AS userCount FROM users GROUP BY accountId",
    "INSERT INTO sink SELECT * FROM src",
    "INSERT INTO sink SELECT a, b FROM src WHERE a > 1",
    "INSERT OVERWRITE sink SELECT * FROM src",
    "INSERT INTO sink VALUES (1, 'a'), (2, 'b')",
    "INSERT INTO sink (a, b) VALUES (1, 'x')",
    "INSERT INTO cat.db.sink SELECT * FROM cat.db.src",
    "INSERT INTO sink WITH x AS (SELECT * FROM src) SELECT * FROM x",
    "INSERT INTO sink SELECT a FROM s1 UNION ALL SELECT a FROM s2",
    "INSERT INTO sink SELECT window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
    "EXECUTE INSERT INTO sink SELECT * FROM src",
    "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM s; INSERT INTO b SELECT * FROM s; END",
    "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT CASE WHEN x > 1 THEN 1 ELSE 0 END FROM s; END",
    "EXECUTE STATEMENT SET BEGIN INSERT INTO pageviews SELECT page_id, COUNT(1) FROM pageviews GROUP BY page_id; INSERT INTO uniqueview SELECT page_id, COUNT(DISTINCT user_id) FROM pageviews GROUP BY page_id; END",
    "BEGIN STATEMENT SET; INSERT INTO a SELECT * FROM s; INSERT INTO b VALUES (1); END",
]


def scenario_statements():
    cases = []
    folder = Path(__file__).resolve().parents[1] / "scenarios"  # a copy of the project's shared scenarios
    for path in sorted(str(p) for p in folder.glob("*/pipeline.sql")):
        text = open(path, encoding="utf-8").read()
        for statement in parse_script(text):
            cases.append(pytest.param(statement.source.text, id=f"{path.split('/')[-2]}:{statement.source.line}"))
    return cases


@pytest.mark.parametrize("sql", QUERIES)
def test_queries_round_trip(sql):
    statement = assert_roundtrip(sql)
    assert isinstance(statement, st.Select)
    assert isinstance(statement.query, (exp.Query, exp.Values))


@pytest.mark.parametrize("sql", INSERTS)
def test_inserts_round_trip(sql):
    statement = assert_roundtrip(sql)
    assert isinstance(statement, (st.Insert, st.StatementSet))


@pytest.mark.parametrize("sql", scenario_statements())
def test_every_scenario_statement_parses_and_round_trips(sql):
    assert_roundtrip(sql)


def test_scenarios_are_found():
    assert len(scenario_statements()) >= 2


def test_insert_fields():
    [s] = parse_script(INSERTS[0])
    assert s.target == "user_count_by_account"
    assert s.columns == ["accountId", "userCount"]
    assert isinstance(s.query, exp.Select) and s.values is None and not s.overwrite
    [s] = parse_script("INSERT INTO sink (a, b) VALUES (1, 'x'), (2, 'y')")
    assert s.query is None and [[v.sql() for v in row] for row in s.values] == [["1", "'x'"], ["2", "'y'"]]
    [s] = parse_script("INSERT OVERWRITE sink SELECT * FROM src")
    assert s.overwrite and s.columns is None


def test_statement_set_holds_the_inserts():
    [s] = parse_script(INSERTS[11] + ";")
    assert isinstance(s, st.StatementSet)
    assert [i.target for i in s.inserts] == ["a", "b"]
    [s] = parse_script(INSERTS[14])
    assert [i.target for i in s.inserts] == ["a", "b"]


@pytest.mark.parametrize(
    "sql, message",
    [
        ("SELECT a FROM", "expected"),
        ("SELECT * FROM t WHERE", "end of statement"),
        ("INSERT sink SELECT 1", "expected INTO or OVERWRITE"),
        ("INSERT INTO sink", "expected SELECT or VALUES"),
        ("EXECUTE STATEMENT SET BEGIN SELECT 1; END", "a statement set holds only INSERT statements"),
        ("EXECUTE STATEMENT SET BEGIN END", "at least one INSERT"),
        ("SELECT (1 + 2 FROM t", "expected ')'"),
        ("SELECT 1 FROM t t2 t3", "unexpected"),
        ("SELECT \"a\" FROM t", "unexpected"),
    ],
)
def test_query_errors(sql, message):
    with pytest.raises(SqlSyntaxError) as info:
        parse_script(sql)
    assert message in info.value.message
    assert info.value.line == 1 and 1 <= info.value.col <= len(sql) + 1


@pytest.mark.parametrize(
    "sql, feature",
    [
        ("SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY a ORDER BY ts MEASURES A.x AS x PATTERN (A B) DEFINE A AS A.x > 1)", "MATCH_RECOGNIZE"),
        ("ANALYZE TABLE t COMPUTE STATISTICS", "ANALYZE TABLE"),
        ("USE MODULES hive", "USE MODULES"),
        ("LOAD MODULE hive", "LOAD MODULE"),
        ("DELETE FROM t", "DELETE without WHERE (deleting every key)"),
        ("UPDATE t SET a = 1", "UPDATE"),
        ("TRUNCATE TABLE t", "TRUNCATE TABLE"),
        ("ADD JAR '/x.jar'", "ADD JAR"),
        ("EXECUTE PLAN '/tmp/plan.json'", "EXECUTE PLAN"),
        ("INSERT INTO t PARTITION (dt = '1') SELECT 1", "INSERT with a static PARTITION clause"),
    ],
)
def test_unsupported_queries_are_named(sql, feature):
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_script(sql)
    assert info.value.message == f"{feature} is not supported"


@pytest.mark.parametrize(
    "sql, message, col",
    [
        ("SELECT 1 AS x FROM;", "expected a table name after FROM, found end of statement", 19),
        ("SELECT * FROM t JOIN ON a", "expected a table name after JOIN, found 'ON'", 22),
    ],
)
def test_a_missing_table_name_is_said_in_words_not_with_the_parsers_token(sql, message, col):
    with pytest.raises(SqlSyntaxError) as info:
        parse_script(sql)
    assert info.value.message == message
    assert (info.value.line, info.value.col) == (1, col)


@pytest.mark.parametrize(
    "sql, message, col",
    [
        ("SELECT id, FROM b3;", "a select list cannot end with a comma", 10),
        ("SELECT 1 AS x, ;", "a select list cannot end with a comma", 14),
        ("SELECT 1 AS x,", "a select list cannot end with a comma", 14),
        ("SELECT a, FROM gen", "a select list cannot end with a comma", 9),
        ("SELECT a, b, FROM t WHERE a > 1", "a select list cannot end with a comma", 12),
        ("SELECT * FROM (SELECT a, FROM t)", "a select list cannot end with a comma", 24),
        ("SELECT a FROM t WHERE a IN (SELECT b, FROM u)", "a select list cannot end with a comma", 37),
        ("WITH c AS (SELECT a, FROM t) SELECT * FROM c", "a select list cannot end with a comma", 20),
        ("INSERT INTO s SELECT a, FROM t", "a select list cannot end with a comma", 23),
        ("CREATE VIEW v AS SELECT a, FROM t", "a select list cannot end with a comma", 26),
        ("SELECT a FROM t UNION ALL SELECT b, FROM u", "a select list cannot end with a comma", 35),
        ("SELECT a,, b FROM t", "expected an expression after ','", 10),
        ("SELECT , a FROM t", "expected an expression before ','", 8),
    ],
)
def test_a_select_list_with_an_empty_item_is_a_positioned_syntax_error(sql, message, col):
    with pytest.raises(SqlSyntaxError) as info:
        parse_script(sql)
    assert info.value.message == message
    assert (info.value.line, info.value.col) == (1, col)


def test_binary_literals_parse_print_and_translate():
    from shell.sql.parse import generate
    from shell.sql.translate import to_spark_expression, to_spark_sql

    [s] = parse_script("SELECT X'00FF', x'0a' AS b, X'' FROM t")
    assert [e.this if isinstance(e, exp.HexString) else e.this.this for e in s.query.expressions] == ["00FF", "0a", ""]
    assert generate(s.query) == "SELECT X'00FF', X'0a' AS b, X'' FROM t"
    assert to_spark_sql(s.query) == "SELECT X'00FF', X'0a' AS `b`, X'' FROM `t`"
    [s] = parse_script("INSERT INTO b VALUES (X'00FF10')")
    [[value]] = s.values
    assert (generate(value), to_spark_expression(value)) == ("X'00FF10'", "X'00FF10'")  # what write_values runs


@pytest.mark.parametrize(
    "sql, message, col",
    [
        ("SELECT X'0G'", "holds only the hex digits", 8),
        ("SELECT 1, X'abc' FROM t", "an even number of hex digits", 11),
        ("SELECT X'00''FF'", "holds only the hex digits", 8),
        ("SELECT x' 1 '", "holds only the hex digits", 8),  # Python's int() would take it; Flink does not
        ("SELECT X'0_1'", "holds only the hex digits", 8),
    ],
)
def test_bad_binary_literals_are_positioned_errors(sql, message, col):
    with pytest.raises(SqlSyntaxError) as info:
        parse_script(sql)
    assert message in info.value.message
    assert (info.value.line, info.value.col) == (1, col)


def test_the_scenarios_are_there_to_parse():
    assert len(scenario_statements()) >= 7, "tests/scenarios holds both pipelines"


def test_the_reused_parser_starts_clean_after_a_statement_that_failed_halfway():
    """One parser per thread parses every statement; a failure must leave nothing behind for the next."""
    with pytest.raises(SqlSyntaxError):
        parse_script("SELECT a, FROM (SELECT b FROM t WHERE;")
    (after,) = parse_script("SELECT c FROM u;")
    assert isinstance(after, st.Select)
    assert after.query.sql() == "SELECT c FROM u"
    (again,) = parse_script("INSERT INTO s SELECT d FROM v;")
    assert isinstance(again, st.Insert)


def test_each_thread_parses_with_its_own_parser():
    import threading

    from shell.sql import parse

    seen = {}

    def work(name):
        parse_script(f"SELECT {name} FROM t;")
        seen[name] = parse._parser()

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen["a"] is not seen["b"]
    assert parse._parser() is parse._parser()


def test_insert_overwrite_is_refused_where_it_is_written_not_run_as_insert_into(tmp_path):
    from shell.errors import UnsupportedFeatureError
    from shell.session import Session, SessionOptions

    session = Session(SessionOptions(home=tmp_path))
    statements = parse_script("CREATE TEMPORARY TABLE sink (a INT) WITH ('connector' = 'blackhole');\n"
                              "INSERT OVERWRITE sink VALUES (1);\n"
                              "EXECUTE STATEMENT SET BEGIN INSERT OVERWRITE sink SELECT 1; END;")
    session.execute(statements[0])
    for statement, line in ((statements[1], 2), (statements[2], 3)):
        with pytest.raises(UnsupportedFeatureError) as caught:
            session.execute(statement)
        assert "INSERT OVERWRITE is not supported" in str(caught.value) and caught.value.line == line
        assert "INSERT INTO" in caught.value.hint
    session.close()
