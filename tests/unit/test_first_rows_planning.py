"""A keep-first deduplication on the time attribute of an append-only table is an append-only relation (as in
Flink): the query, its FROM subquery or a view's body reads a view of each key's first row, which the engine builds;
any other ROW_NUMBER() = 1 stays a Top-N of the changelog path."""

from __future__ import annotations

import pytest

from shell.catalog.store import Catalog
from shell.planner.plan import APPEND_ONLY, CHANGELOG, NATIVE
from shell.planner.planner import plan_query
from shell.sql.parse import parse_query
from tests.sessions import catalog_after

pytestmark = pytest.mark.unit

DDL = """
CREATE TABLE clicks (id INT, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '/tmp/c', 'format' = 'json');
CREATE TABLE plain (id INT, url STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '/tmp/p', 'format' = 'json');
CREATE TABLE changes (id INT, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '/tmp/d', 'format' = 'debezium-json');
CREATE VIEW first_clicks AS
  SELECT id, url, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts ASC) AS rn FROM clicks) WHERE rn = 1;
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Catalog:
    return catalog_after(DDL, tmp_path_factory.mktemp("home"))


def plan(catalog: Catalog, sql: str):
    return plan_query(parse_query(sql), catalog)


def dedup(table: str = "clicks", order: str = "ts ASC", shown: str = "id, url, ts") -> str:
    return (f"SELECT {shown} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY {order}) AS rn FROM {table}) "
            "WHERE rn = 1")


def test_a_window_over_a_view_that_keeps_each_keys_first_row_by_time_reads_its_first_rows(catalog):
    p = plan(catalog, "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE first_clicks, DESCRIPTOR(ts), "
                      "INTERVAL '1' MINUTE)) GROUP BY window_start, window_end")
    assert (p.path, p.output) == (NATIVE, APPEND_ONLY)
    (first,) = p.first_rows
    assert (first.key, first.time) == (("id",), "ts") and first.rows_sql.startswith("SELECT * FROM `__")
    ((name, sql),) = p.views
    assert f"FROM `{first.view}` AS `clicks`" in sql and "ROW_NUMBER" not in sql
    assert any(line.startswith("deduplication: the first row of each id by ts") for line in p.describe())


def test_the_deduplication_itself_is_append_only(catalog):
    p = plan(catalog, dedup())
    assert (p.path, p.output) == (NATIVE, APPEND_ONLY) and len(p.first_rows) == 1
    assert "ROW_NUMBER" not in p.spark_sql


@pytest.mark.parametrize("query", [
    dedup(order="ts DESC"),  # keep-last: a key's row is replaced by later ones
    dedup(order="url"),  # not the time attribute
    dedup(table="plain"),  # no watermark
    dedup(table="changes"),  # rows that change
    dedup(shown="id, url, rn"),  # the row number shown: a Top-N
])
def test_other_deduplications_stay_top_ns_of_the_changelog_path(catalog, query):
    p = plan(catalog, query)
    assert p.path == CHANGELOG and not p.first_rows
