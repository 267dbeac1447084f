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
    assert "WINDOW(WINDOW_TIME(`__slice`), '10 seconds', '2 seconds'), `__slice_k0`) AS `c`" in sql  # sliced
    assert "`window` AS `__window` FROM (SELECT WINDOW(`ts`, '2 seconds', '2 seconds') AS `__slice`" in sql
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
    assert "`window` AS `__window` FROM (SELECT WINDOW(`ts`, '2 seconds'" in sql  # the aggregate selects it,
    assert "`c`.`__window` AS `__window`" in sql and "`p`.`__window` AS `__window`" in sql  # both projections pass it on
    assert sql.endswith("GROUP BY `q`.`s`, `q`.`e`, `q`.`__window`")


# Flink's window join: two window table functions' rows joined on equal window starts and ends.
def window_rows(kind: str, table: str, sizes: str = "INTERVAL '5' MINUTES") -> str:
    return f"(SELECT * FROM TABLE({kind}(TABLE {table}, DESCRIPTOR(ts), {sizes})))"


def window_join(side: str, kind: str = "TUMBLE", sizes: str = "INTERVAL '5' MINUTES") -> str:
    return (f"SELECT L.id AS l_id, R.id AS r_id FROM {window_rows(kind, 'l', sizes)} L {side} JOIN "
            f"{window_rows(kind, 'r', sizes)} R "
            "ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end")  # fmt: skip


def tumble_rows(table: str) -> str:
    return (f"(SELECT * FROM (SELECT *, `window`.`start` AS `window_start`, `window`.`end` AS `window_end`, "
            f"WINDOW_TIME(`window`) AS `window_time`, `window` AS `__window` "
            f"FROM (SELECT *, WINDOW(`ts`, '5 minutes') AS `window` FROM `{table}`)))")  # fmt: skip


BOUNDS_EQUAL = "(`L`.`num` = `R`.`num` AND `L`.`window_start` = `R`.`window_start` AND `L`.`window_end` = `R`.`window_end`)"
KEYS_NOT_NULL = " AND NOT `L`.`num` IS NULL AND NOT `R`.`num` IS NULL"


@pytest.mark.parametrize("side", ["LEFT", "RIGHT", "FULL"])
def test_an_outer_window_join_also_joins_on_the_window_struct_and_never_matches_null_keys(side):
    # Spark runs an outer stream-stream join only with a watermarked key (the struct), and would match NULL keys
    assert spark(window_join(side)) == (
        f"SELECT `L`.`id` AS `l_id`, `R`.`id` AS `r_id` FROM {tumble_rows('l')} AS `L` {side} JOIN "
        f"{tumble_rows('r')} AS `R` ON {BOUNDS_EQUAL} AND `L`.`__window` = `R`.`__window`{KEYS_NOT_NULL}"
    )


def test_an_inner_window_join_joins_on_the_window_struct_and_leaves_null_keys_to_spark():
    sql = spark(window_join(""))
    assert sql.endswith(f"AS `R` ON {BOUNDS_EQUAL} AND `L`.`__window` = `R`.`__window`")


def test_hop_and_cumulate_window_joins_carry_their_window_struct():
    hop = spark(window_join("FULL", "HOP", "INTERVAL '2' MINUTES, INTERVAL '4' MINUTES"))
    assert hop.count("`window` AS `__window` FROM (SELECT *, WINDOW(`ts`, '4 minutes', '2 minutes') AS `window`") == 2
    assert hop.endswith(f"AND `L`.`__window` = `R`.`__window`{KEYS_NOT_NULL}")
    cumulate = spark(window_join("LEFT", "CUMULATE", "INTERVAL '1' MINUTES, INTERVAL '3' MINUTES"))
    # the size-long window: equal cumulative windows of the same CUMULATE have equal ones
    assert cumulate.count("`window` AS `__window` FROM (SELECT *, EXPLODE(SEQUENCE(") == 2
    assert cumulate.endswith(f"AND `L`.`__window` = `R`.`__window`{KEYS_NOT_NULL}")


def test_a_window_join_of_the_table_functions_themselves():
    sql = spark("SELECT L.id FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' MINUTES)) L "
                "LEFT JOIN TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' MINUTES)) R "
                "ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end")  # fmt: skip
    assert sql.endswith(f"AS `R` ON {BOUNDS_EQUAL} AND `L`.`__window` = `R`.`__window`{KEYS_NOT_NULL}")


def test_window_rows_joined_on_one_bound_only_are_left_alone():
    sql = spark(f"SELECT L.id FROM {window_rows('TUMBLE', 'l')} L LEFT JOIN {window_rows('TUMBLE', 'r')} R "
                "ON L.num = R.num AND L.window_start = R.window_start")  # fmt: skip
    assert "__window" not in sql


def test_grouping_a_filtered_subquery_of_window_rows_by_their_bounds_groups_by_their_window():
    sql = spark("SELECT window_start, window_end, COUNT(*) AS c FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, "
                "DESCRIPTOR(ts), INTERVAL '5' MINUTES)) WHERE num > 1) GROUP BY window_start, window_end")  # fmt: skip
    assert "`window` AS `__window` FROM (SELECT *, WINDOW(`ts`, '5 minutes')" in sql
    assert sql.endswith("WHERE `num` > 1) GROUP BY `window_start`, `window_end`, `__window`")
