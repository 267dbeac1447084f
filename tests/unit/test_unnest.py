"""UNNEST keeps Flink's meaning in Spark SQL (numbered from 1, a LEFT JOIN's empty arrays kept, ROW fields as
columns, a lateral join in place) and runs over changelog inputs as a per-row expansion after their stage."""

from __future__ import annotations

import pytest

from shell.errors import UnsupportedFeatureError
from shell.planner.model import RETRACT, UPSERTS, Sources
from shell.planner.changelog import plan_changelog
from shell.catalog.model import Column, TableDef
from shell.changes import InputKind
from shell.sql.parse import parse_query
from shell.sql.translate import to_spark_sql

pytestmark = pytest.mark.unit

TYPES = {"orders": {"id": "INT", "tags": "ARRAY<STRING>", "attrs": "MAP<STRING, INT>",
                    "items": "ARRAY<ROW<sku STRING, qty INT>>"}}


def spark(sql: str) -> str:
    return to_spark_sql(parse_query(sql), TYPES)


def test_cross_join_unnest_is_a_lateral_explode_in_place():
    assert spark("SELECT id, tag FROM orders CROSS JOIN UNNEST(tags) AS t (tag)") == \
        "SELECT `id`, `tag` FROM `orders`, LATERAL EXPLODE(`tags`) AS `t`(`tag`)"


def test_with_ordinality_numbers_the_elements_from_one():
    assert spark("SELECT tag, n FROM orders CROSS JOIN UNNEST(tags) WITH ORDINALITY AS t (tag, n)") == (
        "SELECT `tag`, `n` FROM `orders`, LATERAL INLINE(TRANSFORM(`tags`, (`__element`, `__index`) -> "
        "STRUCT(`__element`, `__index` + 1))) AS `t`(`tag`, `n`)")


def test_left_join_unnest_on_true_keeps_rows_whose_array_is_empty_or_null():
    assert spark("SELECT id, tag FROM orders LEFT JOIN UNNEST(tags) AS t (tag) ON TRUE") == \
        "SELECT `id`, `tag` FROM `orders`, LATERAL EXPLODE_OUTER(`tags`) AS `t`(`tag`)"


def test_an_array_of_rows_gives_a_column_per_field_typed_as_declared():
    # qty is an INT field: qty / 2 stays Flink's integer division
    assert spark("SELECT sku, qty / 2 FROM orders CROSS JOIN UNNEST(items) AS t (sku, qty)") == \
        "SELECT `sku`, CAST(`qty` DIV 2 AS INT) FROM `orders`, LATERAL INLINE(`items`) AS `t`(`sku`, `qty`)"
    numbered = spark("SELECT sku, n FROM orders CROSS JOIN UNNEST(items) WITH ORDINALITY AS t (sku, qty, n)")
    assert "STRUCT(`__element`.`sku`, `__element`.`qty`, `__index` + 1)" in numbered


def test_a_map_gives_key_and_value_and_its_entries_are_numbered():
    assert spark("SELECT k, v FROM orders CROSS JOIN UNNEST(attrs) AS t (k, v)").endswith(
        "LATERAL EXPLODE(`attrs`) AS `t`(`k`, `v`)")
    assert "TRANSFORM(MAP_ENTRIES(`attrs`)" in spark(
        "SELECT k, n FROM orders CROSS JOIN UNNEST(attrs) WITH ORDINALITY AS t (k, v, n)")


def test_a_join_after_the_unnest_reads_its_column_in_place():
    sql = spark("SELECT o.id, l.x FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag) JOIN labels AS l "
                "ON l.tag = t.tag")
    assert sql.index("LATERAL EXPLODE") < sql.index("JOIN `labels`")


def test_each_unnest_of_a_from_is_typed_by_its_own_argument():
    sql = spark("SELECT k, sku FROM orders CROSS JOIN UNNEST(tags) AS t (tag) CROSS JOIN UNNEST(attrs) AS u (k, v) "
                "CROSS JOIN UNNEST(items) WITH ORDINALITY AS w (sku, qty, n)")
    assert "LATERAL EXPLODE(`attrs`) AS `u`(`k`, `v`)" in sql, "a MAP, though an UNNEST comes before it"
    assert "STRUCT(`__element`.`sku`, `__element`.`qty`, `__index` + 1)" in sql


def test_unnest_in_from_is_a_table_valued_call():
    assert spark("SELECT x FROM UNNEST(ARRAY[1, 2]) AS t (x)") == "SELECT `x` FROM EXPLODE(ARRAY(1, 2)) AS `t`(`x`)"


@pytest.mark.parametrize(("sql", "said"), [
    ("SELECT * FROM orders RIGHT JOIN UNNEST(tags) AS t (x) ON TRUE", "RIGHT JOIN UNNEST"),
    ("SELECT * FROM orders LEFT JOIN UNNEST(tags) AS t (x) ON x = 'a'", "on a condition"),
    ("SELECT * FROM orders CROSS JOIN UNNEST(tags, tags) AS t (x, y)", "UNNEST of 2 arguments"),
    ("SELECT * FROM orders CROSS JOIN UNNEST(id) AS t (x)", "not an ARRAY or a MAP"),
    ("SELECT * FROM (SELECT items FROM orders) AS o CROSS JOIN UNNEST(o.items) WITH ORDINALITY AS t (a, b, n)",
     "fields are not known here"),
])
def test_what_has_no_spark_form_is_refused_with_what_to_write(sql, said):
    with pytest.raises(UnsupportedFeatureError) as refused:
        spark(sql)
    assert said in str(refused.value) and refused.value.hint


def sources() -> Sources:
    orders = TableDef(name="orders", columns=[Column("id", "INT"), Column("cust", "STRING"),
                                              Column("tags", "ARRAY<STRING>")], primary_key=["id"])
    labels = TableDef(name="labels", columns=[Column("tag", "STRING"), Column("label", "STRING")],
                      primary_key=["tag"])
    return Sources({"orders": orders, "labels": labels}, {"orders": InputKind.UPSERT, "labels": InputKind.UPSERT})


def planned(sql: str):
    return plan_changelog(parse_query(sql), sources(), "stage")


def test_over_a_changelog_the_elements_follow_their_rows_weights():
    plan = planned("SELECT o.id, t.tag FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag)")
    assert plan.output == RETRACT and [i.table.name for i in plan.inputs] == ["orders"]
    assert plan.sql.startswith("WITH `__unnest_rows` AS (SELECT `o__id` AS `id`")
    assert plan.sql.endswith("`o`.`__w` FROM `__unnest_rows` AS `o`, LATERAL EXPLODE(`o`.`tags`) AS `t`(`tag`)")


def test_an_aggregate_over_unnested_changelog_rows_reads_them_as_a_subquery():
    plan = planned("SELECT t.tag, COUNT(*) AS n FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag) GROUP BY t.tag")
    assert plan.output == UPSERTS and plan.key == ["tag"]
    below = plan.inputs[0].plan
    assert below is not None and "LATERAL EXPLODE" in below.sql


def test_a_join_on_an_unnested_column_keys_the_stage_by_it():
    plan = planned("SELECT o.cust, l.label FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag) "
                   "JOIN labels AS l ON l.tag = t.tag")
    assert [i.key for i in plan.inputs] == [["tag"], ["tag"]]
    assert "LATERAL EXPLODE" in plan.inputs[0].plan.sql


def test_unnested_columns_named_as_the_tables_are_refused_over_a_changelog():
    with pytest.raises(UnsupportedFeatureError) as refused:
        planned("SELECT COUNT(*) FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (cust)")
    assert "cust" in str(refused.value)
