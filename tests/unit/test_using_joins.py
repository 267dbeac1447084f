"""JOIN ... USING on the changelog path: written as the ON it means, its column as the one column SQL gives it."""

from __future__ import annotations

import pytest

from shell.catalog.model import Column, TableDef
from shell.errors import UnsupportedFeatureError
from shell.planner.using_joins import as_on
from shell.sql.fragments import to_sql
from shell.sql.parse import parse_query

pytestmark = pytest.mark.unit

TABLES = {name: TableDef(name=name, columns=[Column(c, "INT") for c in columns]) for name, columns in
          {"l": ["k", "x"], "r": ["k", "y"], "f": ["k", "z"]}.items()}


def rewritten(sql: str) -> str:
    """The rewrite as Flink SQL text, its quoted names written with " here for legibility."""
    return to_sql(as_on(parse_query(sql), TABLES)).replace("`", '"')


@pytest.mark.parametrize("side, key", [
    ("", '"l"."k"'), ("LEFT ", '"l"."k"'), ("RIGHT ", '"r"."k"'), ("FULL ", 'COALESCE("l"."k", "r"."k")'),
])  # fmt: skip
def test_the_using_column_is_the_one_column_its_kind_of_join_gives(side, key):
    sql = rewritten(f"SELECT k, l.x, y FROM l {side}JOIN r USING (k) WHERE k > 1 GROUP BY k, l.x, y ORDER BY k")
    assert f'ON "l"."k" = "r"."k"' in sql and "USING" not in sql
    assert sql.startswith(f'SELECT {key} AS "k", l.x, y FROM')
    assert f"WHERE {key} > 1 GROUP BY {key}, l.x, y ORDER BY {key}" in sql


def test_a_chained_using_join_joins_on_the_column_so_far():
    sql = rewritten("SELECT k FROM l LEFT JOIN f USING (k) FULL JOIN r USING (k)")
    assert 'ON "l"."k" = "f"."k"' in sql and 'ON "l"."k" = "r"."k"' in sql
    assert sql.startswith('SELECT COALESCE("l"."k", "r"."k") AS "k"')


def test_a_natural_join_is_a_using_join_on_the_columns_both_sides_have():
    sql = rewritten("SELECT k, x, y FROM l NATURAL LEFT JOIN r")
    assert 'LEFT JOIN r ON "l"."k" = "r"."k"' in sql and "NATURAL" not in sql
    assert sql.startswith('SELECT "l"."k" AS "k", x, y FROM')


def test_a_subquerys_own_columns_are_left_alone():
    sql = rewritten("SELECT k FROM l JOIN r USING (k) WHERE x IN (SELECT k FROM f)")
    assert "(SELECT k FROM f)" in sql


@pytest.mark.parametrize("sql, says", [
    ("SELECT * FROM l JOIN r USING (k)", "SELECT * of a JOIN ... USING"),
    ("SELECT x FROM l JOIN r USING (y)", "no table before the join has 'y'"),
    ("SELECT k FROM l JOIN r USING (x)", "'r' has no column 'x'"),
    ("SELECT x FROM l JOIN r ON l.k = r.k JOIN f USING (k)", "more than one table before the join has 'k'"),
])  # fmt: skip
def test_what_cannot_be_told_is_refused(sql, says):
    with pytest.raises(UnsupportedFeatureError) as caught:
        rewritten(sql)
    assert says in caught.value.message and caught.value.hint


def test_a_query_without_using_is_the_same_object():
    query = parse_query("SELECT l.k FROM l JOIN r ON l.k = r.k")
    assert as_on(query, TABLES) is query
