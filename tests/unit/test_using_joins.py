"""JOIN ... USING and NATURAL JOIN on the changelog path: written as the ON they mean. As in Flink, each side keeps
its own key column: an unqualified one is ambiguous."""

from __future__ import annotations

import pytest

from shell.catalog.model import Column, TableDef
from shell.errors import UnsupportedFeatureError
from shell.planner.rules.using_joins import as_on
from shell.sql.fragments import to_sql
from shell.sql.parse import parse_query

pytestmark = pytest.mark.unit

TABLES = {name: TableDef(name=name, columns=[Column(c, "INT") for c in columns]) for name, columns in
          {"l": ["k", "x"], "r": ["k", "y"], "f": ["k", "x", "z"]}.items()}


def rewritten(sql: str) -> str:
    """The rewrite as Flink SQL text, its quoted names written with " here for legibility."""
    return to_sql(as_on(parse_query(sql), TABLES)).replace("`", '"')


@pytest.mark.parametrize("side", ["", "LEFT ", "RIGHT ", "FULL "])
def test_a_using_join_is_the_on_join_of_its_columns(side):
    sql = rewritten(f"SELECT l.k, r.k, x FROM l {side}JOIN r USING (k) WHERE l.k > 1")
    assert sql == f'SELECT l.k, r.k, x FROM l {side}JOIN r ON "l"."k" = "r"."k" WHERE l.k > 1'


def test_a_chained_using_join_joins_the_table_before_it_that_has_the_column():
    sql = rewritten("SELECT l.k FROM l JOIN r USING (k) LEFT JOIN f USING (x)")
    assert sql == 'SELECT l.k FROM l JOIN r ON "l"."k" = "r"."k" LEFT JOIN f ON "l"."x" = "f"."x"'


def test_a_using_join_after_another_on_the_same_column_joins_on_the_value_the_joined_rows_have():
    assert rewritten("SELECT l.k FROM l LEFT JOIN f USING (k) FULL JOIN r USING (k)") == \
        'SELECT l.k FROM l LEFT JOIN f ON "l"."k" = "f"."k" FULL JOIN r ON "l"."k" = "r"."k"'
    assert rewritten("SELECT l.k FROM l FULL JOIN f USING (k) JOIN r USING (k)").endswith(
        'JOIN r ON COALESCE("l"."k", "f"."k") = "r"."k"')


def test_a_natural_join_is_a_using_join_on_the_columns_both_sides_have():
    assert rewritten("SELECT l.k, y FROM l NATURAL LEFT JOIN r") == \
        'SELECT l.k, y FROM l LEFT JOIN r ON "l"."k" = "r"."k"'
    assert rewritten("SELECT l.k FROM l NATURAL JOIN f") == \
        'SELECT l.k FROM l JOIN f ON "l"."k" = "f"."k" AND "l"."x" = "f"."x"'


@pytest.mark.parametrize("sql, says", [
    ("SELECT * FROM l JOIN r USING (k)", "SELECT * of a JOIN ... USING"),
    ("SELECT x FROM l JOIN r USING (y)", "no table before the join has 'y'"),
    ("SELECT l.k FROM l JOIN r USING (x)", "'r' has no column 'x'"),
    ("SELECT l.x FROM l JOIN r ON l.k = r.k JOIN f USING (k)", "more than one table before the join has 'k'"),
    ("SELECT l.x FROM l NATURAL JOIN (SELECT 1 AS q) AS s", "has no column of the tables before it"),
])  # fmt: skip
def test_what_cannot_be_told_is_refused(sql, says):
    with pytest.raises(UnsupportedFeatureError) as caught:
        rewritten(sql)
    assert says in caught.value.message and caught.value.hint


def test_a_query_without_using_is_the_same_object():
    query = parse_query("SELECT l.k FROM l JOIN r ON l.k = r.k")
    assert as_on(query, TABLES) is query
