"""Windows over PROCTIME() columns: which relation the engine watermarks by processing time, and what is refused."""

from __future__ import annotations

import pytest

from shell.catalog.store import Catalog
from shell.errors import UnsupportedFeatureError
from shell.planner.plan import NATIVE, ProcessingTimeInput
from shell.planner.planner import plan_query
from tests.sessions import catalog_after
from shell.sql.parse import parse_query

pytestmark = pytest.mark.unit

DDL = """
CREATE TABLE clicks (user_id STRING, n INT, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '/tmp/clicks', 'format' = 'json', 'source.monitor-interval' = '1 s');
CREATE TABLE feed (event_type INT, bidder BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '4' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '/tmp/feed', 'format' = 'json');
CREATE TABLE cdc (id INT, grp STRING) WITH ('connector' = 'filesystem', 'path' = '/tmp/cdc', 'format' = 'debezium-json');
CREATE VIEW bid AS SELECT bidder, ts FROM feed WHERE event_type = 2;
CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid;
CREATE VIEW BB AS SELECT * FROM B;
CREATE VIEW windowed AS SELECT window_start, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end;
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Catalog:
    return catalog_after(DDL, tmp_path_factory.mktemp("home"))


def plan(catalog: Catalog, sql: str):
    return plan_query(parse_query(sql), catalog)


def test_a_window_over_a_tables_proctime_column_reads_its_processing_time_view(catalog):
    p = plan(catalog, "SELECT user_id, COUNT(*) AS c, window_start FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), "
                      "INTERVAL '2' SECOND)) GROUP BY user_id, window_start, window_end")  # fmt: skip
    source = p.source_views["clicks"]
    assert p.path == NATIVE and p.processing_time == (ProcessingTimeInput(f"{source}__proctime_pt", source, "pt"),)
    assert p.spark_sql == (f"SELECT `user_id` AS `user_id`, COUNT(*) AS `c`, `window`.`start` AS `window_start` FROM "
                           f"`{source}__proctime_pt` GROUP BY `user_id`, WINDOW(`pt`, '2 seconds')")  # fmt: skip
    assert any("processing-time windows over pt" in line for line in p.describe())


def test_nexmark_q12_windows_the_views_proctime_alias(catalog):
    p = plan(catalog, "SELECT bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime "
                      "FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND)) GROUP BY bidder, window_start, window_end")  # fmt: skip
    (window_input,) = p.processing_time
    assert window_input.relation == p.views[-1][0] and window_input.column == "p_time"
    assert f"FROM `{window_input.view}` GROUP BY `bidder`, WINDOW(`p_time`, '10 seconds')" in p.spark_sql


def test_a_proctime_alias_is_found_through_a_view_of_its_view(catalog):
    p = plan(catalog, "SELECT COUNT(*) AS c FROM TABLE(TUMBLE(TABLE BB, DESCRIPTOR(p_time), INTERVAL '10' SECOND)) "
                      "GROUP BY window_start, window_end")  # fmt: skip
    assert [i.column for i in p.processing_time] == ["p_time"]


@pytest.mark.parametrize("kind, sizes, grouped", [
    ("HOP", "INTERVAL '1' SECOND, INTERVAL '2' SECOND", "WINDOW(WINDOW_TIME(`__slice`), '2 seconds', '1 seconds')"),  # sliced
    ("CUMULATE", "INTERVAL '1' SECOND, INTERVAL '2' SECOND", "GROUP BY `window`, `__cumulate_step`"),
    ("SESSION", "INTERVAL '2' SECOND", "SESSION_WINDOW(`pt`, '2 seconds')"),
])  # fmt: skip
def test_every_window_kind_runs_over_processing_time(catalog, kind, sizes, grouped):
    p = plan(catalog, f"SELECT COUNT(*) AS c FROM TABLE({kind}(TABLE clicks, DESCRIPTOR(pt), {sizes})) "
                      "GROUP BY window_start, window_end")  # fmt: skip
    assert len(p.processing_time) == 1 and f"`{p.processing_time[0].view}`" in p.spark_sql and grouped in p.spark_sql


def test_an_event_time_window_has_no_processing_time_input(catalog):
    p = plan(catalog, "SELECT COUNT(*) AS c FROM TABLE(TUMBLE(TABLE feed, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                      "GROUP BY window_start, window_end")  # fmt: skip
    assert p.processing_time == ()


@pytest.mark.parametrize("sql, message", [
    ("SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '2' SECOND))",
     "TUMBLE over the processing-time column 'pt' outside a window aggregation is not supported"),
    ("SELECT * FROM (SELECT window_start, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '2' SECOND)) "
     "GROUP BY window_start, window_end) a JOIN (SELECT window_start, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE feed, "
     "DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end) b ON a.window_start = b.window_start",
     "TUMBLE over the event-time column 'ts' in a query with processing-time windows is not supported"),
    ("SELECT COUNT(*) AS c FROM clicks GROUP BY TUMBLE(pt, INTERVAL '2' SECOND)",
     r"GROUP BY TUMBLE\(pt, ...\) over a processing-time column is not supported"),
    ("SELECT * FROM windowed", "TUMBLE over the processing-time column 'p_time' inside view 'windowed' is not supported"),
    ("SELECT c.grp, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '2' SECOND)) w "
     "JOIN cdc c ON c.id = w.n GROUP BY c.grp, w.window_start, w.window_end",
     "TUMBLE over the processing-time column 'pt' in a query that reads changelog input .* is not supported"),
])  # fmt: skip
def test_processing_time_windows_spark_cannot_run_are_refused_naming_them(catalog, sql, message):
    with pytest.raises(UnsupportedFeatureError, match=message) as raised:
        plan(catalog, sql)
    assert "\n" not in raised.value.message
