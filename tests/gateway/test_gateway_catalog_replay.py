"""The DBeaver and Grafana catalog queries of tests/gateway/recorded/, sent in their order on one real connection
(psycopg) to a running gateway, and what each tool would list checked on the answers: the schema, its tables and
view, a table's columns with their types, the server version. test_gateway_catalog_queries.py answers the same
queries without a server; this is what a client gets over the wire.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.gateway.test_gateway_catalog_queries import recorded

pytestmark = pytest.mark.e2e

DATABASE = "replayed"
TABLES = [
    "CREATE TABLE IF NOT EXISTS visits (user_name STRING NOT NULL, url STRING, ts TIMESTAMP(3), hits BIGINT, "
    "PRIMARY KEY (user_name) NOT ENFORCED) WITH ('connector' = 'datagen')",
    "CREATE TABLE IF NOT EXISTS sales (id INT, amount DECIMAL(10, 2), ok BOOLEAN) WITH ('connector' = 'datagen')",
    "CREATE VIEW IF NOT EXISTS big_sales AS SELECT id FROM sales WHERE amount > 100",
]


@pytest.fixture(scope="module")
def replay_dsn(gateway):
    """A database of its own, so that the tables of the other tests are not in its schema."""
    with psycopg.connect(gateway.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    dsn = gateway.dsn(dbname=DATABASE)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for sql in TABLES:
            conn.execute(sql)
    return dsn


def replay(conn: psycopg.Connection, queries: list[str]) -> list[tuple[list[str], list[tuple]] | None]:
    """Each query's (column names, rows) as the connection answers it (None: no rows), in order."""
    answers = []
    for sql in queries:
        try:
            cursor = conn.execute(sql)
        except psycopg.Error as exc:
            pytest.fail(f"not answered over the wire: {exc.sqlstate} {exc}\n{sql}")
        answers.append(([c.name for c in cursor.description], cursor.fetchall()) if cursor.description else None)
    return answers


def test_dbeaver_lists_the_schema_its_tables_and_a_tables_columns_over_a_real_connection(replay_dsn):
    queries = recorded("dbeaver")
    with psycopg.connect(replay_dsn, autocommit=True) as conn:
        tables_query = next(q for q in queries if "c.relnamespace=2200 AND" in q)
        (names, rows), = replay(conn, [tables_query])
        oids = {row[names.index("relname")]: row[names.index("oid")] for row in rows}
        assert set(oids) == {"visits", "sales", "big_sales"}
        kinds = {row[names.index("relname")]: row[names.index("relkind")] for row in rows}
        assert kinds == {"visits": "r", "sales": "r", "big_sales": "v"}
        # every query in DBeaver's order, the table ones about `sales` (16384 in the recording: the first table)
        answers = replay(conn, [q.replace("16384", str(oids["sales"])) for q in queries])
    by_query = dict(zip(queries, answers))
    assert by_query["SELECT current_schema(),session_user"][1] == [(DATABASE, "tester")]
    names, rows = by_query[next(q for q in queries if "FROM pg_catalog.pg_namespace n LEFT OUTER" in q)]
    assert DATABASE in [row[names.index("nspname")] for row in rows]
    names, rows = by_query[next(q for q in queries if "a.*,pg_catalog.pg_get_expr(ad.adbin" in q)]
    columns = [(row[names.index("attname")], row[names.index("atttypid")], row[names.index("atttypmod")]) for row in rows]
    assert columns == [("id", 23, -1), ("amount", 1700, (10 << 16 | 2) + 4), ("ok", 16, -1)]  # int4, numeric(10,2), bool
    assert by_query["SHOW search_path"] == (["search_path"], [(DATABASE,)])
    names, rows = by_query[next(q for q in queries if "FROM pg_catalog.pg_roles" in q)]
    assert [row[names.index("rolname")] for row in rows] == ["tester"]


def test_grafana_checks_health_reads_the_version_and_lists_tables_and_columns_over_a_real_connection(replay_dsn):
    queries = [q.replace("'clicks'", "'visits'") for q in recorded("grafana")]
    with psycopg.connect(replay_dsn, autocommit=True) as conn:
        answers = replay(conn, queries)
    by_query = dict(zip(queries, answers))
    assert by_query["SELECT 1"][1] == [(1,)]
    assert by_query[next(q for q in queries if "server_version_num" in q)][1] == [(1500,)]
    assert by_query[next(q for q in queries if "timescaledb'" in q)][1] == []  # no TimescaleDB
    names, rows = by_query[next(q for q in queries if "information_schema.tables" in q)]
    assert names == ["table"] and sorted(rows) == [("sales",), ("visits",)]  # base tables, not the view
    names, rows = by_query[next(q for q in queries if "quote_ident(column_name)" in q)]
    assert names == ["column", "type"]
    assert rows == [("user_name", "text"), ("url", "text"), ("ts", "timestamp without time zone"), ("hits", "bigint")]
    assert by_query[queries[-1]][1] == rows  # the editor's own column query
