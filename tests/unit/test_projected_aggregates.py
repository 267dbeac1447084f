"""Aggregates over expressions in a keyed stage: the expressions computed in a subquery first
(planner/projected_aggregates.py)."""

from __future__ import annotations

import pytest

from shell.planner.projected_aggregates import projected_arguments
from shell.sql.parse import parse_query

pytestmark = pytest.mark.unit


def rewrite(sql: str) -> str | None:
    out = projected_arguments(parse_query(sql))
    return out.sql() if out is not None else None


@pytest.mark.parametrize("sql", [
    "SELECT grp, MIN(v) AS m FROM t GROUP BY grp",
    "SELECT COUNT(*) AS n, COUNT(DISTINCT v) AS d, MAX(1) AS one FROM t",
])  # fmt: skip
def test_plain_columns_need_no_subquery(sql):
    assert rewrite(sql) is None


def test_expressions_of_groups_and_arguments_move_into_a_subquery():
    out = rewrite("SELECT UPPER(grp) AS g, MIN(price * qty) AS m, COUNT(DISTINCT price * qty) AS d FROM t "
                  "WHERE ok GROUP BY UPPER(grp) HAVING MAX(price * qty) > 3")
    assert out == ('SELECT "__p"."__g0" AS "g", MIN("__p"."__a0") AS "m", COUNT(DISTINCT "__p"."__a0") AS "d" '
                   'FROM (SELECT UPPER(grp) AS "__g0", price * qty AS "__a0" FROM t WHERE ok) AS __p '
                   'GROUP BY "__p"."__g0" HAVING MAX("__p"."__a0") > 3')


def test_a_grouped_column_is_found_however_it_is_qualified():
    out = rewrite("SELECT t.grp, AVG(CAST(v AS DOUBLE)) AS a FROM t GROUP BY grp")
    assert out.startswith('SELECT "__p"."__g0" AS "grp", AVG("__p"."__a0") AS "a"')
