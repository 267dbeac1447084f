"""`a[i]` keeps Flink's meaning in Spark SQL: an ARRAY counted from 1 and NULL past its ends, a MAP read by its key
as it is; `MAP[k, v, ..]` is a map constructor wherever it is written."""

from __future__ import annotations

import pytest

from shell.sql.parse import parse_query
from shell.sql.translate import to_spark_sql

pytestmark = pytest.mark.unit

TYPES = {"t": {"tags": "ARRAY<STRING>", "codes": "MAP<INT, STRING>", "pos": "INT"}}


def spark(expression: str) -> str:
    sql = to_spark_sql(parse_query(f"SELECT {expression} FROM t"), TYPES)
    return sql.removeprefix("SELECT ").removesuffix(" FROM `t`")


@pytest.mark.parametrize(("flink", "spark_sql"), [
    ("tags[1]", "GET(`tags`, 0)"),  # get: NULL past either end, where Spark's a[i] fails
    ("tags[pos]", "GET(`tags`, (`pos`) - 1)"),  # a column as the index was read from 0 before
    ("tags[pos + 1]", "GET(`tags`, (`pos` + 1) - 1)"),
    ("ARRAY[10, 20][2]", "GET(ARRAY(10, 20), 1)"),
    ("codes[1]", "`codes`[1]"),  # a MAP<INT, ..> column's key is not an index
    ("codes[pos]", "`codes`[`pos`]"),
    ("MAP[1, 'a', 2, 'b'][pos]", "MAP(1, 'a', 2, 'b')[`pos`]"),
    ("other['x']", "`other`['x']"),  # text: a key of a map whose type is not known
    ("CAST(other AS MAP<INT, STRING>)[1]", "CAST(`other` AS MAP<INT, STRING>)[1]"),
    # an operand of unknown type (a function's result): try_element_at reads a MAP by key, an ARRAY from 1
    ("STR_TO_MAP('a=1')[tags[1]]", "TRY_ELEMENT_AT(STR_TO_MAP('a=1', ',', '='), GET(`tags`, 0))"),
])
def test_an_element_is_read_with_flinks_rules(flink, spark_sql):
    assert spark(flink) == spark_sql


def test_a_column_of_a_subquery_is_read_by_key_or_from_one_whatever_it_is():
    sql = to_spark_sql(parse_query("SELECT v.codes[v.pos], v.tags[2] FROM (SELECT * FROM t) AS v"), TYPES)
    assert sql.startswith("SELECT TRY_ELEMENT_AT(`v`.`codes`, `v`.`pos`), TRY_ELEMENT_AT(`v`.`tags`, 2) FROM")


def test_a_map_constructor_is_a_map_and_prints_back_as_written():
    tree = parse_query("SELECT MAP['a', 1, 'b', 2] AS m FROM t")
    assert tree.sql(dialect="streamshell") == "SELECT MAP['a', 1, 'b', 2] AS m FROM t"
    assert to_spark_sql(tree) == "SELECT MAP('a', 1, 'b', 2) AS `m` FROM `t`"


def test_a_map_constructor_with_a_key_and_no_value_is_a_syntax_error():
    from shell.errors import SqlSyntaxError

    with pytest.raises(SqlSyntaxError) as refused:
        parse_query("SELECT MAP['a', 1, 'b'] FROM t")
    assert "in pairs" in str(refused.value)
