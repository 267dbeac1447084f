"""A stage's column resolution (planner/stage_columns.py): `*` expanded, every column named as its input's stage
column, and the lookup the planner's rules ask instead of reading hidden attributes; join keys (sql_parts)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from shell.catalog.model import Column, TableDef
from shell.errors import CatalogError
from shell.planner.model import APPEND, StageInput
from shell.planner.sql_parts import NotAKeyJoin, join_keys
from shell.planner.stage_columns import resolve_columns
from shell.sql.parse import parse_query

pytestmark = pytest.mark.unit


def table(name: str, *columns: str) -> TableDef:
    return TableDef(name=name, columns=[Column(c, "STRING") for c in columns])


USERS = StageInput(table("users", "uid", "acct", "name"), "u", APPEND, [])
COLORS = StageInput(table("colors", "uid", "color"), "c", APPEND, [], join="inner")


def resolved(sql: str, inputs=(USERS, COLORS)):  # noqa: ANN001, ANN201
    query = parse_query(sql)
    reads, columns = resolve_columns(query, list(inputs))
    return query, reads, columns


def test_columns_become_stage_columns_and_the_lookup_names_their_input_and_column():
    query, reads, columns = resolved("SELECT acct, COUNT(*) AS n FROM users u JOIN colors c ON u.uid = c.uid "
                                     "WHERE color = 'red' GROUP BY acct")
    assert query.sql() == ('SELECT "u__acct" AS "acct", COUNT(*) AS n FROM users AS u JOIN colors AS c '
                           'ON "u__uid" = "c__uid" WHERE "c__color" = \'red\' GROUP BY "u__acct"')
    assert columns.of(exp.column("u__acct")) == (0, "acct") and columns.of(exp.column("c__uid")) == (1, "uid")
    assert columns.of(exp.column("n")) is None  # a SELECT alias, not a stage column
    # ON clauses are the key: an input reads only the columns the rest of the query uses
    assert [r.columns for r in reads] == [["acct"], ["color"]]
    assert columns.equated(query.args["joins"][0].args["on"]) == ((0, "uid"), (1, "uid"))
    assert columns.as_written(query.args["where"].this) == "c.color = 'red'"


def test_star_expands_to_every_shown_column_in_table_order():
    query, reads, _ = resolved("SELECT c.*, name FROM users u JOIN colors c ON u.uid = c.uid")
    assert query.named_selects == ["uid", "color", "name"]
    assert [r.columns for r in reads] == [["name"], ["uid", "color"]]


@pytest.mark.parametrize("sql,message", [
    ("SELECT uid FROM users u JOIN colors c ON u.uid = c.uid", "column 'uid' is ambiguous"),
    ("SELECT colour FROM users u JOIN colors c ON u.uid = c.uid", "unknown column 'colour'"),
    ("SELECT x.* FROM users u JOIN colors c ON u.uid = c.uid", "unknown table or alias 'x'"),
    ("SELECT c.name FROM users u JOIN colors c ON u.uid = c.uid", "table 'c' has no column 'name'"),
])
def test_names_that_are_not_one_inputs_column_are_errors(sql, message):
    with pytest.raises(CatalogError, match=message):
        resolved(sql)


def test_join_keys_are_the_equalities_of_the_joined_relation_with_one_earlier_relation():
    side = {"a": 0, "b": 1, "c": 2}

    def side_of(node: exp.Expr):  # noqa: ANN202
        return (side[node.table], node.name) if isinstance(node, exp.Column) and node.table in side else None

    def on(text: str) -> exp.Expr:
        return parse_query(f"SELECT 1 FROM a JOIN c ON {text}").args["joins"][0].args["on"]

    assert join_keys(on("a.x = c.y AND c.z = a.w"), side_of, 2) == (0, ["x", "w"], ["y", "z"])
    with pytest.raises(NotAKeyJoin) as mixed:
        join_keys(on("a.x = c.y AND b.v = c.z"), side_of, 2)  # two earlier relations
    assert mixed.value.equality and mixed.value.conjunct.sql() == "b.v = c.z"
    with pytest.raises(NotAKeyJoin) as other:
        join_keys(on("a.x = c.y AND c.z > 1"), side_of, 2)
    assert not other.value.equality and other.value.conjunct.sql() == "c.z > 1"
