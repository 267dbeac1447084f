"""Shell statements: each parses into its dataclass and round-trips through our dialect."""

from __future__ import annotations

import pytest

from shell.errors import SqlSyntaxError, UnsupportedFeatureError
from shell.sql import parse_script
from shell.sql import statements as st
from shell.sql.parse import generate

pytestmark = pytest.mark.unit

SHELL = [
    ("HELP", st.Help()),
    ("help", st.Help()),
    ("HELP set", st.Help("SET")),
    ("QUIT", st.Quit()),
    ("EXIT", st.Quit()),
    ("quit", st.Quit()),
    ("CLEAR", st.Clear()),
    ("SET", st.Set()),
    ("SET 'execution.runtime-mode' = 'streaming'", st.Set("execution.runtime-mode", "streaming")),
    ("SET 'sql-client.execution.result-mode' = 'tableau'", st.Set("sql-client.execution.result-mode", "tableau")),
    ("SET 'table.exec.state.ttl' = '1 h'", st.Set("table.exec.state.ttl", "1 h")),
    ("SET 'pipeline.name' = 'it''s mine'", st.Set("pipeline.name", "it's mine")),
    ("SET table.exec.mini-batch.enabled = true", st.Set("table.exec.mini-batch.enabled", "true")),
    ("SET parallelism.default = 4", st.Set("parallelism.default", "4")),
    ("RESET", st.Reset()),
    ("RESET 'execution.runtime-mode'", st.Reset("execution.runtime-mode")),
    ("RESET table.exec.state.ttl", st.Reset("table.exec.state.ttl")),
    ("SHOW TABLES", st.Show("TABLES")),
    ("show tables", st.Show("TABLES")),
    ("SHOW VIEWS", st.Show("VIEWS")),
    ("SHOW FUNCTIONS", st.Show("FUNCTIONS")),
    ("SHOW JOBS", st.Show("JOBS")),
    ("SHOW JOBS LIKE 'ins%'", st.Show("JOBS", like="ins%")),
    ("SHOW JOBS NOT LIKE 'x%'", st.Show("JOBS", like="x%", not_like=True)),
    ("SHOW CREATE TABLE users", st.ShowCreate("users")),
    ("SHOW CREATE TABLE cat.db.`my-table`", st.ShowCreate("cat.db.my-table")),
    ("SHOW CREATE VIEW v", st.ShowCreate("v", is_view=True)),
    ("DESCRIBE users", st.Describe("users")),
    ("DESC users", st.Describe("users")),
    ("describe `Users`", st.Describe("Users")),
    ("STOP JOB '228d70913eab60dda85c5e7f78b5782c'", st.StopJob("228d70913eab60dda85c5e7f78b5782c")),
    ("STOP JOB 'abc' WITH SAVEPOINT", st.StopJob("abc", with_savepoint=True)),
    ("STOP JOB 'abc' WITH SAVEPOINT WITH DRAIN", st.StopJob("abc", with_savepoint=True, with_drain=True)),
    ("RESUME JOB 'abc'", st.ResumeJob("abc")),
    ("SHOW ERRORS FOR users", st.ShowErrors("users")),
    ("SHOW ERRORS FOR users LIMIT 20", st.ShowErrors("users", 20)),
    ("PRINT 'users'", st.PrintTopic("users")),
    ("PRINT 'persistent://public/default/users' FROM BEGINNING", st.PrintTopic("persistent://public/default/users", from_beginning=True)),
    ("PRINT 'users' FROM BEGINNING LIMIT 10", st.PrintTopic("users", from_beginning=True, limit=10)),
    (
        "PRINT 'users' LIMIT 5 WITH ('connector' = 'kafka', 'properties.bootstrap.servers' = 'localhost:9092')",
        st.PrintTopic("users", limit=5, options={"connector": "kafka", "properties.bootstrap.servers": "localhost:9092"}),
    ),
    ("DESCRIBE TOPIC 'users'", st.DescribeTopic("users")),
    ("DESCRIBE TOPIC 'users' SAMPLE 50", st.DescribeTopic("users", sample=50)),
    (
        "DESCRIBE TOPIC 'users' SAMPLE 10 WITH ('connector' = 'pulsar', 'service-url' = 'pulsar://localhost:6650')",
        st.DescribeTopic("users", sample=10, options={"connector": "pulsar", "service-url": "pulsar://localhost:6650"}),
    ),
]

EXPLAINS = [
    "EXPLAIN SELECT * FROM t",
    "EXPLAIN PLAN FOR SELECT * FROM t",
    "EXPLAIN ESTIMATED_COST, CHANGELOG_MODE SELECT a, COUNT(*) FROM t GROUP BY a",
    "EXPLAIN INSERT INTO sink SELECT * FROM src",
    "EXPLAIN EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM s; INSERT INTO b SELECT * FROM s; END",
    "EXPLAIN JSON_EXECUTION_PLAN SELECT 1",
]


@pytest.mark.parametrize("sql, expected", SHELL, ids=[s for s, _ in SHELL])
def test_shell_statements(sql, expected):
    [statement] = parse_script(sql)
    assert statement == expected
    assert statement.source.text == sql
    [again] = parse_script(generate(statement.node))
    assert again == statement and again.node == statement.node


@pytest.mark.parametrize("sql", EXPLAINS)
def test_explain(sql):
    [statement] = parse_script(sql)
    assert isinstance(statement, st.Explain)
    assert isinstance(statement.statement, (st.Select, st.Insert, st.StatementSet))
    [again] = parse_script(generate(statement.node))
    assert again == statement and again.node == statement.node


def test_explain_details():
    [s] = parse_script(EXPLAINS[2])
    assert s.details == ["ESTIMATED_COST", "CHANGELOG_MODE"]


@pytest.mark.parametrize(
    "sql, message, hint",
    [
        ("SHOW TABELS", "expected TABLES, VIEWS, FUNCTIONS, JOBS, CATALOGS, DATABASES, COLUMNS, CURRENT, CREATE or ERRORS", "did you mean TABLES?"),
        ("SHO TABLES", "unknown statement", "did you mean SHOW?"),
        ("STOP JOBS 'x'", "expected JOB after STOP", "did you mean JOB?"),
        ("STOP JOB abc", "expected the job id in quotes", None),
        ("SET 'a' 'b'", "expected '=' and a value", None),
        ("SET 'a' =", "expected a quoted value", None),
        ("SHOW ERRORS users", "expected FOR", None),
        ("PRINT 'x' LIMIT many", "expected a row count", None),
        ("EXPLAIN SHOW TABLES", "EXPLAIN takes a query, an INSERT or a statement set", None),
        ("DESCRIBE", "expected a table name", None),
        ("QUIT now", "unexpected 'now'", None),
        ("SHOW JOBS FROM default_database", "SHOW JOBS takes no FROM: a job belongs to no database",
         "SHOW JOBS LIKE 'insert%' lists the jobs whose names match"),
        ("SHOW JOBS NOT 'x%'", "expected LIKE after NOT", None),
    ],
)
def test_shell_errors(sql, message, hint):
    with pytest.raises(SqlSyntaxError) as info:
        parse_script(sql)
    assert message in info.value.message
    assert info.value.hint == hint


@pytest.mark.parametrize("sql", ["SHOW MODULES", "SHOW JARS", "SHOW FULL MODULES"])
def test_unsupported_show_is_named(sql):
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_script(sql)
    assert info.value.message == f"{' '.join(sql.split()[:2])} is not supported"


@pytest.mark.parametrize("detail", ["ESTIMATED_COST", "JSON_EXECUTION_PLAN", "PLAN_ADVICE"])
def test_explain_details_that_are_not_carried_out_are_refused(detail, tmp_path):
    from shell.errors import UnsupportedFeatureError
    from shell.session import Session, SessionOptions

    session = Session(SessionOptions(home=tmp_path))
    [statement] = parse_script(f"EXPLAIN {detail} SELECT 1")
    with pytest.raises(UnsupportedFeatureError) as caught:
        session.execute(statement)  # refused before any planning: no Spark starts
    assert f"EXPLAIN {detail} is not supported" in str(caught.value) and "CHANGELOG_MODE" in caught.value.hint
    session.close()
