"""Property: whatever the text, the front end raises only our error type, positioned inside it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as s

from shell.errors import LINE_BREAK, StreamshellError
from shell.sql import is_complete, parse_script, split_statements
from shell.sql.translate import to_spark_sql

pytestmark = pytest.mark.unit

SEEDS = [
    "CREATE TABLE t (a INT, b AS a + 1, ts TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'kafka');",
    "INSERT INTO s SELECT a, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY a, window_start, window_end;",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY ts DESC) AS rn FROM t) WHERE rn = 1;",
    "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM s; INSERT INTO b VALUES (1, 'x'); END;",
    "SELECT JSON_VALUE(j, '$.a' RETURNING INT), CAST(x AS ROW<a INT, b MAP<STRING, ARRAY<INT>>>) FROM t -- c\n;",
    "SET 'a' = 'b'; RESET; SHOW TABLES; DESCRIBE t; STOP JOB 'x' WITH SAVEPOINT; PRINT 'topic' FROM BEGINNING LIMIT 3;",
    "SELECT o.id FROM o JOIN r FOR SYSTEM_TIME AS OF o.pt AS r ON o.id = r.id; /* done */",
]
TOKENS = [
    "SELECT", "FROM", "WHERE", "CREATE", "TABLE", "(", ")", ",", ";", "'", "`", "/*", "*/", "--",
    "\n", "\r\n", " ", "AS", "INT", "ROW<", ">", "BEGIN", "END", "CASE", "TUMBLE", "DESCRIPTOR",
    "INTERVAL '1' MINUTE", "=", "WITH", "METADATA", "WATERMARK FOR", "x", "1", "'s'", "PRIMARY KEY",
    "EXECUTE STATEMENT SET", "INSERT INTO", "VALUES", "MATCH_RECOGNIZE", "OVER (", "\t", "é", "\x00",
    "X'0F'", "x'", "X'zz'",
]


def check(source: str) -> None:
    split_statements(source)
    is_complete(source)
    try:
        statements = parse_script(source)
    except StreamshellError as error:
        message = error.render()
        assert message
        if error.line is not None:
            lines = LINE_BREAK.split(source)
            assert 1 <= error.line <= len(lines), message
            assert 1 <= error.col <= len(lines[error.line - 1]) + 1, message
        return
    for statement in statements:
        query = getattr(statement, "query", None)
        if query is not None:
            try:
                to_spark_sql(query)
            except StreamshellError:
                pass


@s.composite
def mutated(draw) -> str:
    text = draw(s.sampled_from(SEEDS))
    for _ in range(draw(s.integers(1, 4))):
        position = draw(s.integers(0, len(text)))
        action = draw(s.sampled_from(["insert", "delete", "token"]))
        if action == "delete":
            end = min(len(text), position + draw(s.integers(1, 8)))
            text = text[:position] + text[end:]
        elif action == "insert":
            text = text[:position] + draw(s.text(min_size=1, max_size=3)) + text[position:]
        else:
            text = text[:position] + " " + draw(s.sampled_from(TOKENS)) + " " + text[position:]
    return text


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(mutated())
def test_mutated_statements(source):
    check(source)


@FUZZ
@given(s.lists(s.sampled_from(TOKENS), max_size=30).map(" ".join))
def test_random_token_soup(source):
    check(source)


@FUZZ
@given(s.text(max_size=80))
def test_random_text(source):
    check(source)
