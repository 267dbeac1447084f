"""The result's column names, as Flink gives them (planner/output_names.py)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from shell.planner.output_names import flink_names
from shell.sql.parse import parse_query


@pytest.mark.parametrize("sql, names", [
    ("SELECT a, b AS c FROM t", ["a", "c"]),
    ("SELECT UPPER(a), b + 1, COUNT(*) AS n FROM t GROUP BY a, b", ["EXPR$0", "EXPR$1", "n"]),
    ("SELECT x.name, y.name FROM x JOIN y ON x.id = y.id", ["name", "name0"]),
    ("SELECT x.name, y.name, z.name FROM x, y, z", ["name", "name0", "name1"]),
    ("SELECT x.Name, y.NAME FROM x, y", ["Name", "NAME0"]),  # compared without case
    ("SELECT a, b AS a0, c AS a FROM t", ["a", "a0", "a1"]),  # a number already taken is skipped
    ("SELECT a, UPPER(b) FROM t UNION ALL SELECT c, d FROM u", ["a", "EXPR$1"]),  # the first SELECT names a UNION
])  # fmt: skip
def test_every_item_of_the_outer_select_is_named_as_flink_names_it(sql, names):
    query = flink_names(parse_query(sql))
    first = query
    while isinstance(first, exp.Union):
        first = first.this
    assert first.named_selects == names


@pytest.mark.parametrize("sql", ["SELECT * FROM t", "SELECT t.*, a FROM t", "SELECT a AS a, b AS b FROM t"])
def test_a_star_or_a_select_named_already_is_left_as_it_is(sql):
    query = parse_query(sql)
    assert flink_names(query) is query
