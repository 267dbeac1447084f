"""INTERSECT and EXCEPT are planned as the GROUP BY over both sides they are, on append-only and changelog inputs."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from shell.errors import UnsupportedFeatureError
from shell.planner.rules.intersect_except import as_grouped

pytestmark = pytest.mark.unit


def grouped(sql: str) -> str:
    return as_grouped(sqlglot.parse_one(sql)).sql()


def test_intersect_keeps_a_row_while_both_sides_have_it():
    sql = grouped("SELECT a, b FROM l INTERSECT SELECT x, y FROM r")
    assert sql == (
        'SELECT "a", "b" FROM (SELECT "__set_l"."a" AS "a", "__set_l"."b" AS "b", 1 AS __in_left, 0 AS __in_right '
        'FROM (SELECT a, b FROM l) AS __set_l UNION ALL SELECT "__set_r"."x" AS "a", "__set_r"."y" AS "b", '
        '0 AS __in_left, 1 AS __in_right FROM (SELECT x, y FROM r) AS __set_r) AS __set GROUP BY "a", "b" '
        "HAVING SUM(__in_left) > 0 AND SUM(__in_right) > 0")


def test_except_keeps_a_left_row_while_the_right_side_has_none():
    assert grouped("SELECT a FROM l EXCEPT SELECT a FROM r").endswith(
        "HAVING SUM(__in_left) > 0 AND SUM(__in_right) = 0")


def test_an_unnamed_column_is_named_as_flink_names_it():
    tree = as_grouped(sqlglot.parse_one("SELECT a + 1, b FROM l INTERSECT SELECT c, d FROM r"))
    assert tree.named_selects == ["EXPR$0", "b"]


def test_a_nested_set_operation_is_a_side_of_its_own():
    tree = as_grouped(sqlglot.parse_one("(SELECT a FROM l INTERSECT SELECT a FROM m) EXCEPT SELECT a FROM r"))
    assert tree.find(exp.Intersect) is not None and tree.named_selects == ["a"]


def test_intersect_all_unnests_each_row_into_the_fewer_copies_of_the_two_sides():
    tree = as_grouped(sqlglot.parse_one("SELECT a FROM l INTERSECT ALL SELECT a FROM r"))
    counted = tree.args["from_"].this.this
    assert counted.selects[-1].sql() == 'LEAST(SUM(__in_left), SUM(__in_right)) AS "__copies"'
    assert counted.args["having"].sql() == "HAVING LEAST(SUM(__in_left), SUM(__in_right)) > 0"
    unnest = tree.args["joins"][0].this
    assert isinstance(unnest, exp.Unnest) and unnest.expressions[0].sql() == 'GENERATE_SERIES(1, "__set_counts"."__copies")'
    assert tree.named_selects == ["a"]


def test_except_all_keeps_the_left_sides_copies_less_the_right_sides():
    tree = as_grouped(sqlglot.parse_one("SELECT a, b FROM l EXCEPT ALL SELECT a, b FROM r"))
    assert tree.args["from_"].this.this.selects[-1].sql() == 'SUM(__in_left) - SUM(__in_right) AS "__copies"'
    assert tree.named_selects == ["a", "b"]


@pytest.mark.parametrize(("sql", "said"), [
    ("SELECT a FROM l INTERSECT SELECT a, b FROM r", "different numbers of columns"),
    ("SELECT * FROM l INTERSECT SELECT a FROM r", "'*'"),
    ("SELECT a FROM l EXCEPT SELECT a FROM r ORDER BY a LIMIT 3", "ORDER BY or LIMIT"),
])
def test_what_a_grouped_result_cannot_show_is_refused_with_the_reason(sql, said):
    with pytest.raises(UnsupportedFeatureError) as refused:
        as_grouped(sqlglot.parse_one(sql))
    assert said in str(refused.value)
