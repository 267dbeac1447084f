"""Scalar subqueries on the changelog path: each becomes a LEFT JOIN of its aggregate (on the equalities that tie it
to the outer row, or on a constant key), COUNT's empty value is 0, and the forms with no one-row-per-outer-row
meaning are refused with a hint."""

from __future__ import annotations

import pytest

from shell.catalog.model import Column, TableDef
from shell.errors import UnsupportedFeatureError
from shell.planner.rules.scalar_subqueries import as_left_joins, scalar_subqueries
from shell.sql.parse import parse_query
from tests.unit.test_planner_changelog import DDL, plan  # noqa: F401 - the catalog fixture's tables
from tests.unit.test_planner_changelog import catalog  # noqa: F401 - a fixture

TABLES = {
    "o": TableDef("o", [Column("id", "INT"), Column("k", "INT"), Column("v", "INT")]),
    "t": TableDef("t", [Column("k", "INT"), Column("x", "INT"), Column("c", "STRING")]),
}


def rewritten(sql: str) -> str:
    return as_left_joins(parse_query(sql), TABLES).sql()


def test_a_correlated_aggregate_is_a_left_join_of_its_groups_on_the_tying_columns():
    assert rewritten("SELECT o.id, (SELECT SUM(x) FROM t WHERE t.k = o.k AND c = 'a') AS s FROM o") == (
        "SELECT o.id, __sq1.__value AS s FROM o LEFT JOIN (SELECT k AS __key0, SUM(x) AS __value FROM t "
        "WHERE c = 'a' GROUP BY k) AS __sq1 ON o.k = __sq1.__key0")


def test_count_of_a_key_without_rows_is_zero_not_null():
    sql = rewritten("SELECT o.id FROM o WHERE (SELECT COUNT(*) FROM t WHERE o.k = t.k) > 1")
    assert "WHERE COALESCE(__sq1.__value, 0) > 1" in sql and "COUNT(*) AS __value" in sql


def test_an_uncorrelated_aggregate_joins_every_outer_row_on_a_constant_key():
    sql = rewritten("SELECT o.id, o.v - (SELECT MAX(x) FROM t) AS gap FROM o")
    assert "FROM (SELECT \"id\", \"k\", \"v\", 1 AS __one FROM o) AS o" in sql
    assert "LEFT JOIN (SELECT 1 AS __key0, MAX(x) AS __value FROM t) AS __sq1 ON o.__one = __sq1.__key0" in sql
    assert "o.v - __sq1.__value AS gap" in sql


def test_several_subqueries_get_a_join_each_and_a_query_without_one_is_untouched():
    sql = rewritten("SELECT (SELECT MIN(x) FROM t WHERE t.k = o.k) AS a, (SELECT MAX(x) FROM t) AS b FROM o")
    assert "AS __sq1 ON o.k = __sq1.__key0" in sql and "AS __sq2 ON o.__one = __sq2.__key0" in sql
    query = parse_query("SELECT id FROM o WHERE k IN (SELECT k FROM t)")
    assert scalar_subqueries(query) == [] and as_left_joins(query, TABLES) is query


@pytest.mark.parametrize("sql, says", [
    ("SELECT (SELECT x FROM t WHERE t.k = o.k) FROM o", "does not aggregate"),
    ("SELECT (SELECT SUM(x) FROM t WHERE t.k = o.k GROUP BY c) FROM o", "with GROUP BY"),
    ("SELECT (SELECT SUM(x), MIN(x) FROM t) FROM o", "of 2 columns"),
    ("SELECT (SELECT COUNT(*) + 1 FROM t WHERE t.k = o.k) FROM o", "COUNT inside an expression"),
    ("SELECT (SELECT SUM(x) FROM t WHERE t.k > o.k) FROM o", "between the subquery and the outer query"),
    ("SELECT k, SUM(v), (SELECT MAX(x) FROM t) FROM o GROUP BY k", "in a query that aggregates"),
    ("SELECT k FROM o GROUP BY k HAVING SUM(v) > (SELECT MAX(x) FROM t)", "in HAVING"),
    ("SELECT (SELECT MAX(x) FROM t) FROM (SELECT id FROM o) AS s", "not tied to the outer row"),
])
def test_forms_without_one_row_per_outer_row_are_refused_with_a_hint(sql, says):
    with pytest.raises(UnsupportedFeatureError) as refused:
        rewritten(sql)
    assert says in str(refused.value) and refused.value.hint


def test_the_planner_runs_them_on_the_changelog_path_as_left_joins(catalog):  # noqa: F811
    p = plan(catalog, "SELECT u.uid, (SELECT COUNT(*) FROM cdc WHERE cdc.grp = u.accountId) AS n FROM users u")
    assert p.path == "changelog"
    joined = p.changelog.inputs[1]
    assert joined.alias == "__sq1" and joined.join == "left" and joined.key == ["__key0"]
    assert "COALESCE(" in p.changelog.sql
    q = plan(catalog, "SELECT id, v FROM events WHERE v >= (SELECT MAX(v) FROM events)")  # append input: updating
    assert q.path == "changelog" and "scalar subquery" in q.reason
    assert [i.key for i in q.changelog.inputs] == [["__one"], ["__key0"]]


@pytest.mark.parametrize("sql, says", [
    ("SELECT (SELECT COALESCE(SUM(x), 0) FROM t WHERE t.k = o.k) FROM o", "'COALESCE(SUM(x), 0)' around the aggregate"),
    ("SELECT (SELECT CASE WHEN MAX(x) IS NULL THEN 0 ELSE 1 END FROM t WHERE t.k = o.k) FROM o", "around the aggregate"),
    ("SELECT (SELECT SUM(x) + o.v FROM t WHERE t.k = o.k) FROM o", "reading 'o.v' of the outer row"),
    ("SELECT (SELECT MAX(x) FROM t) FROM o RIGHT JOIN t AS u ON o.k = u.k", "in a query with a RIGHT JOIN"),
])
def test_values_a_key_without_rows_would_get_wrong_are_refused(sql, says):
    # the LEFT JOIN gives such a key NULL: only a value that is NULL whenever its aggregates are is exact
    with pytest.raises(UnsupportedFeatureError) as refused:
        rewritten(sql)
    assert says in str(refused.value) and refused.value.hint


def test_null_strict_values_and_aggregates_of_expressions_are_kept():
    assert "MAX(x) - MIN(x) AS __value" in rewritten("SELECT (SELECT MAX(x) - MIN(x) FROM t WHERE t.k = o.k) FROM o")
    assert "SUM(COALESCE(x, 0)) AS __value" in rewritten("SELECT (SELECT SUM(COALESCE(x, 0)) FROM t WHERE t.k = o.k) FROM o")


def test_an_aliased_subquery_table_is_named_by_its_alias_alone():
    # `o.k` names the outer table; inside, the aliased `o AS p` is `p` only
    sql = rewritten("SELECT o.id, (SELECT MAX(v) FROM o AS p WHERE p.k = o.k) AS m FROM o")
    assert "LEFT JOIN (SELECT k AS __key0, MAX(v) AS __value FROM o AS p GROUP BY k) AS __sq1 ON o.k = __sq1.__key0" in sql


def test_star_shows_the_outer_rows_columns_not_the_joined_aggregates(catalog):  # noqa: F811
    p = plan(catalog, "SELECT *, (SELECT COUNT(*) FROM cdc WHERE cdc.grp = u.accountId) AS n FROM users u")
    assert p.changelog.sql.split(" FROM ")[0].count(" AS ") == 4, p.changelog.sql  # uid, accountId, fullName, n
    q = plan(catalog, "SELECT *, (SELECT MAX(v) FROM events) AS m FROM events")
    assert "__one" not in q.changelog.sql.split(" FROM ")[0] and "__value" in q.changelog.sql


def test_a_refusal_points_at_the_subquery_not_the_statements_start():
    from shell.sql.parse import parse_script

    sql = "SELECT o.id,\n  (SELECT x FROM t WHERE t.k = o.k) AS m FROM o;"
    with pytest.raises(UnsupportedFeatureError) as refused:
        as_left_joins(parse_script(sql)[0].query, TABLES)
    assert (refused.value.line, refused.value.col) == (2, 11)
