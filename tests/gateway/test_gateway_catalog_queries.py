"""The catalog queries psql, DBeaver, Grafana and JDBC send, replayed on the gateway's catalog answers.

The tools themselves cannot be installed here, so what they send is kept as text (tests/gateway/recorded/: psql's
recorded with `psql -E`, JDBC's from the gateway's trace, DBeaver's and Grafana's as those tools write them) and
each query is answered as a connection answers it: a session command by shell/gateway/compat.py, a catalog query
by shell/gateway/pgcatalog.py (SQLite over the session's catalog), anything else must be a streamshell statement.
No Spark is started: catalog answers never need it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.engine.spark import SparkRuntime
from shell.gateway import compat, params, pgcatalog
from shell.gateway.connection import BLANK
from shell.session import Session, SessionOptions
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit

RECORDED = Path(__file__).parent / "recorded"


def recorded(tool: str) -> list[str]:
    text = (RECORDED / f"{tool}.sql").read_text()
    body = "\n".join(line for line in text.splitlines() if not (line.startswith("-- ") and line != "-- ping" and line != "-- next"))
    return [q.strip("\n") for q in body.split("\n-- next\n")]


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    runtime = SparkRuntime("local[1]", {}, home / "log" / "spark.log")  # never started: catalog answers need no Spark
    s = Session(SessionOptions(home=home), runtime=runtime)
    for sql in [
        "CREATE TABLE clicks (user_name STRING NOT NULL, url STRING, ts TIMESTAMP(3), hits BIGINT, "
        "PRIMARY KEY (user_name) NOT ENFORCED) COMMENT 'page views' WITH ('connector' = 'datagen')",
        "CREATE TABLE orders (id INT, amount DECIMAL(10, 2), ok BOOLEAN) WITH ('connector' = 'datagen')",
        "CREATE VIEW big_orders AS SELECT id FROM orders WHERE amount > 100",
    ]:
        (statement,) = parse_script(sql)
        s.execute(statement)
    yield s
    s.close()


def answer(sql: str, session) -> list[tuple] | str:  # noqa: ANN001
    """What the connection would answer: rows, or 'empty', 'session command', 'statement'."""
    state = compat.PgState()
    state.parameters["search_path"] = session.catalog.current_database  # as a connection sets it
    if BLANK.fullmatch(sql):
        return "empty"
    if compat.handle(sql, state, []) is not None:
        return "session command"
    if pgcatalog.is_catalog_query(sql):
        sql = params.substitute(sql, ["'%'"] * params.placeholders(sql)) if params.placeholders(sql) else sql
        outcome = pgcatalog.answer(sql, session, state, "alice")
        return [tuple(c.name for c in outcome.columns or [])] + list(outcome.rows)
    parse_script(sql)
    return "statement"


@pytest.mark.parametrize("tool", ["psql", "dbeaver", "grafana", "jdbc"])
def test_every_recorded_query_of_a_tool_is_answered(tool, session):
    queries = recorded(tool)
    assert len(queries) >= 3
    for sql in queries:
        try:
            answer(sql, session)
        except Exception as exc:  # noqa: BLE001 - the failing query is the message
            pytest.fail(f"{tool} query not answered: {getattr(exc, 'fields', exc)}\n{sql}")


def test_psql_lists_tables_and_describes_one_with_types_and_not_null(session):
    dt = answer(recorded("psql")[0], session)
    assert dt[0] == ("Schema", "Name", "Type", "Owner")
    assert ("default_database", "clicks", "table", "alice") in dt[1:]
    assert ("default_database", "orders", "table", "alice") in dt[1:]
    (oid, schema, name), = [row for row in answer(recorded("psql")[1], session)[1:] if row[2] == "clicks"]
    columns = answer(recorded("psql")[3].replace("'16384'", f"'{oid}'"), session)
    shown = {row[0]: (row[1], row[3]) for row in columns[1:]}
    assert shown == {"user_name": ("text", True), "url": ("text", False),
                     "ts": ("timestamp without time zone", False), "hits": ("bigint", False)}


def test_dbeaver_sees_the_schema_the_tables_and_a_tables_columns(session):
    queries = recorded("dbeaver")
    schemas = answer(next(q for q in queries if "FROM pg_catalog.pg_namespace n LEFT OUTER" in q), session)
    names = schemas[0].index("nspname")
    assert "default_database" in [row[names] for row in schemas[1:]]
    tables = answer(next(q for q in queries if "c.relnamespace=2200 AND" in q), session)
    relname = tables[0].index("relname")
    assert {row[relname] for row in tables[1:]} == {"clicks", "orders", "big_orders"}
    columns = answer(next(q for q in queries if "a.*,pg_catalog.pg_get_expr(ad.adbin" in q), session)
    attname = columns[0].index("attname")
    assert [row[attname] for row in columns[1:]] == ["user_name", "url", "ts", "hits"]
    description = columns[0].index("description")
    assert all(row[description] is None for row in columns[1:])


def test_grafana_pickers_list_the_tables_of_the_search_path_and_a_tables_columns(session):
    queries = recorded("grafana")
    tables = answer(next(q for q in queries if "information_schema.tables" in q), session)
    assert sorted(tables[1:]) == [("clicks",), ("orders",)]  # BASE TABLEs only, the view is not one
    columns = answer(next(q for q in queries if "quote_ident(column_name)" in q), session)
    assert columns[1:] == [("user_name", "text"), ("url", "text"), ("ts", "timestamp without time zone"), ("hits", "bigint")]
    version = answer(next(q for q in queries if "server_version_num" in q), session)
    assert version[1:] == [(1500,)]  # 150000 / 100: Grafana reads 1500 as PostgreSQL 15


def test_jdbc_metadata_gives_tables_views_and_column_types(session):
    tables, _, columns = [answer(q, session) for q in recorded("jdbc")]
    by_name = {row[tables[0].index("TABLE_NAME")]: row[tables[0].index("TABLE_TYPE")] for row in tables[1:]}
    assert by_name == {"clicks": "TABLE", "orders": "TABLE", "big_orders": "VIEW"}
    header = columns[0]
    found = {(row[header.index("relname")], row[header.index("attname")]): row[header.index("atttypid")] for row in columns[1:]}
    assert found[("orders", "amount")] == 1700 and found[("orders", "ok")] == 16  # numeric, bool: JDBC names them


def test_a_catalog_query_it_cannot_answer_is_an_error_that_says_so(session):
    from shell.gateway.connection import StatementFailed

    with pytest.raises(StatementFailed) as caught:
        pgcatalog.answer("SELECT * FROM pg_catalog.pg_no_such_thing", session, compat.PgState(), "alice")
    assert caught.value.fields["C"] == "0A000"
    assert "not answered by the gateway" in caught.value.fields["M"]


def test_booleans_come_back_as_booleans_and_names_as_postgresql_names_them(session):
    rows = answer("SELECT c.relname, c.relhasindex, c.relname = 'clicks', pg_catalog.format_type(23, NULL) "
                  "FROM pg_catalog.pg_class c WHERE c.relname = 'clicks'", session)
    assert rows == [("relname", "relhasindex", "?column?", "format_type"), ("clicks", False, True, "integer")]
