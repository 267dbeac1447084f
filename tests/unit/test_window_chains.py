"""Queries over window results carry the window struct where they group or join by window bounds (window_chains)."""

from __future__ import annotations

import pytest

from shell.sql import parse_script
from shell.sql.translate import to_spark_sql

pytestmark = pytest.mark.unit

COUNTS = ("SELECT auction, COUNT(*) AS num, window_start AS starttime, window_end AS endtime "
          "FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) "
          "GROUP BY auction, window_start, window_end")  # fmt: skip
MAXIMA = f"SELECT MAX(c.num) AS maxn, c.starttime, c.endtime FROM ({COUNTS}) AS c GROUP BY c.starttime, c.endtime"
Q5 = (f"SELECT a.auction, a.num FROM ({COUNTS}) AS a JOIN ({MAXIMA}) AS m "
      "ON a.starttime = m.starttime AND a.endtime = m.endtime AND a.num >= m.maxn")  # fmt: skip


def spark(sql: str) -> str:
    [statement] = parse_script(sql)
    return to_spark_sql(statement.query)


def test_grouping_by_the_bounds_of_a_window_aggregate_also_groups_by_its_window():
    sql = spark(MAXIMA)
    assert "WINDOW(`ts`, '10 seconds', '2 seconds')) AS `c`" in sql
    assert "`window` AS `__window` FROM `bid`" in sql
    assert sql.endswith("GROUP BY `c`.`starttime`, `c`.`endtime`, `c`.`__window`")
    assert sql.startswith("SELECT MAX(`c`.`num`) AS `maxn`, `c`.`starttime`, `c`.`endtime` FROM")  # output unchanged


def test_nexmark_q5_joins_the_two_window_aggregates_on_their_windows_too():
    sql = spark(Q5)
    assert sql.startswith("SELECT `a`.`auction`, `a`.`num` FROM")
    assert sql.count("`window` AS `__window`") == 2  # both window aggregates carry their window
    assert "`c`.`__window` AS `__window`" in sql  # the aggregate of the aggregate passes it on
    assert sql.endswith("AND `a`.`__window` = `m`.`__window`")


def test_queries_that_do_not_group_or_join_by_both_bounds_are_left_alone():
    only_start = f"SELECT MAX(c.num), c.starttime FROM ({COUNTS}) AS c GROUP BY c.starttime"
    by_auction = f"SELECT c.auction, MAX(c.num) FROM ({COUNTS}) AS c GROUP BY c.auction"
    star_join = f"SELECT * FROM ({COUNTS}) AS a JOIN ({COUNTS}) AS b ON a.starttime = b.starttime AND a.endtime = b.endtime"
    top_level = "SELECT window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end"
    # A window's rows joined with a stream can come after the window closed: grouping them by window would drop them.
    other_join = (f"SELECT c.starttime, c.endtime, MAX(b.price) FROM ({COUNTS}) AS c JOIN bid AS b "
                  "ON b.auction = c.auction GROUP BY c.starttime, c.endtime")  # fmt: skip
    for sql in (only_start, by_auction, star_join, top_level, other_join):
        assert "__window" not in spark(sql), sql


def test_a_projection_of_a_window_aggregate_passes_its_window_on():
    renamed = f"SELECT p.s, p.e, p.num FROM (SELECT c.starttime AS s, c.endtime AS e, c.num FROM ({COUNTS}) AS c) AS p"
    sql = spark(f"SELECT MAX(q.num) FROM ({renamed}) AS q GROUP BY q.s, q.e")
    assert "`window` AS `__window` FROM `bid`" in sql  # the aggregate selects it,
    assert "`c`.`__window` AS `__window`" in sql and "`p`.`__window` AS `__window`" in sql  # both projections pass it on
    assert sql.endswith("GROUP BY `q`.`s`, `q`.`e`, `q`.`__window`")
