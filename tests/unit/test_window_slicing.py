"""A HOP window aggregation is aggregated slice by slice where that is exact, and left whole where not."""

from __future__ import annotations

import pytest

from shell.sql.parse import parse_query
from shell.sql.translate import to_spark_sql

pytestmark = pytest.mark.unit

TYPES = {"bid": {"auction": "BIGINT", "price": "INT", "ts": "TIMESTAMP(3)", "rate": "DOUBLE", "cost": "DECIMAL(10, 2)"}}


def spark(select: str, tail: str = "", slide: str = "2", size: str = "10") -> str:
    query = (f"SELECT {select} FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '{slide}' SECOND, "
             f"INTERVAL '{size}' SECOND)) {tail or 'GROUP BY window_start, window_end, auction'}")  # fmt: skip
    return to_spark_sql(parse_query(query), TYPES)


def test_a_count_per_key_is_counted_per_slice_and_summed_per_window():
    sql = spark("window_start, auction, COUNT(*) AS n")
    assert sql == (
        "SELECT `window`.`start` AS `window_start`, `__slice_k0` AS `auction`, SUM(`__slice_p0`) AS `n` "
        "FROM (SELECT WINDOW(`ts`, '2 seconds', '2 seconds') AS `__slice`, `auction` AS `__slice_k0`, "
        "COUNT(*) AS `__slice_p0` FROM `bid` GROUP BY WINDOW(`ts`, '2 seconds', '2 seconds'), `auction`) "
        "GROUP BY WINDOW(WINDOW_TIME(`__slice`), '10 seconds', '2 seconds'), `__slice_k0`")


def test_each_combinable_aggregate_has_its_combination():
    sql = spark("auction AS a, COUNT(price) AS c, SUM(price) AS s, MIN(price) AS lo, MAX(ts) AS hi, AVG(price) AS av")
    assert "SUM(`__slice_p0`) AS `c`, SUM(`__slice_p1`) AS `s`, MIN(`__slice_p2`) AS `lo`, MAX(`__slice_p3`) AS `hi`" in sql
    # Flink's AVG of an INT is an INT: the slices' sum over their count, truncated; no rows counted is NULL
    assert "CAST(CAST(SUM(`__slice_p4`) AS DOUBLE) / NULLIF(SUM(`__slice_p5`), 0) AS INT) AS `av`" in sql
    assert "SUM(`price`) AS `__slice_p4`, COUNT(`price`) AS `__slice_p5`" in sql


def test_a_filter_where_and_having_stay_exact():
    sql = spark("auction, COUNT(*) FILTER (WHERE price > 3) AS big",
                "WHERE price > 0 GROUP BY window_start, window_end, auction HAVING MAX(price) > 5")
    assert "COUNT(*) FILTER(WHERE `price` > 3) AS `__slice_p0`, MAX(`price`) AS `__slice_p1`" in sql
    assert "FROM `bid` WHERE `price` > 0 GROUP BY WINDOW(`ts`, '2 seconds', '2 seconds')" in sql  # rows filtered first
    assert sql.endswith("HAVING MAX(`__slice_p1`) > 5")


def test_a_comparison_in_having_reads_the_combined_aggregates():
    sql = spark("auction, COUNT(*) AS n", "GROUP BY window_start, window_end, auction HAVING COUNT(*) > 1 OR MIN(price) IS NULL")
    assert sql.endswith("HAVING SUM(`__slice_p1`) > 1 OR MIN(`__slice_p2`) IS NULL")


@pytest.mark.parametrize("select, tail, slide", [
    ("auction, COUNT(DISTINCT price) AS n", "", "2"),  # a set, not a count, per slice
    ("auction, SUM(rate) AS s", "", "2"),  # a DOUBLE's sum depends on its order
    ("auction, SUM(cost) AS s", "", "2"),  # a DECIMAL's sum of sums is a wider type
    ("auction, AVG(rate) AS s", "", "2"),
    ("auction, COUNT(*) AS n", "", "3"),  # 10 s is not a multiple of 3 s
    ("auction, price, COUNT(*) AS n", "GROUP BY window_start, window_end, auction, price HAVING SUM(rate) > 0", "2"),
    ("auction, COUNT(*) AS n, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY ts) AS r", "", "2"),
    # the slices' columns have no declared types, so what Flink's types decide stays over the table's columns
    ("auction, SUM(price) / COUNT(*) AS q", "", "2"),  # Flink's integer division
    ("auction / 2 AS half, COUNT(*) AS n", "", "2"),
    ("UPPER(CAST(auction AS STRING)) AS u, COUNT(*) AS n", "", "2"),
    ("auction, LISTAGG(CAST(auction AS STRING)) AS l", "", "2"),  # an aggregate sqlglot does not know as one
    ("auction, COUNT(*) FILTER (WHERE ts >= window_end - INTERVAL '1' SECOND) AS late", "", "2"),  # the window's bound
    ("auction, MIN(ts - window_start) AS first", "", "2"),
    ("auction, COUNT(*) AS n", "GROUP BY window_start, window_end, auction ORDER BY COUNT(*)", "2"),
], ids=["count-distinct", "double-sum", "decimal-sum", "double-avg", "size-not-a-multiple", "double-in-having",
        "window-function", "integer-division", "arithmetic-on-a-key", "function-of-a-key", "unknown-aggregate",
        "window-end-in-a-filter", "window-start-in-an-aggregate", "order-by"])  # fmt: skip
def test_what_slices_cannot_combine_exactly_is_aggregated_whole(select, tail, slide):
    sql = spark(select, tail, slide=slide)
    assert "__slice" not in sql and "'10 seconds'" in sql, sql


def test_tumble_windows_are_not_sliced():
    sql = to_spark_sql(parse_query("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), "
                                   "INTERVAL '10' SECOND)) GROUP BY window_start, window_end"), TYPES)  # fmt: skip
    assert "__slice" not in sql
