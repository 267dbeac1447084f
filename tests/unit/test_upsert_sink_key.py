"""When an upsert sink's rows are already one per key: the sink's primary key is the GROUP BY key of the result
(Spark's update-mode aggregation gives each group once per micro-batch), so no window over the batch picks them.
A wrong "yes" would write two rows of one key in a batch in any order (a delete after the new row); a wrong "no"
only costs time, so every doubtful case must say no."""

from __future__ import annotations

import pytest

from shell.catalog.model import Column, TableDef
from shell.engine.native import keyed_like_result

pytestmark = pytest.mark.unit

RESULT = {"accountId": "string", "userCount": "bigint"}  # SELECT accountId, COUNT(1) AS userCount ... GROUP BY accountId


def sink(key: list[str], account_type: str = "STRING") -> TableDef:
    columns = [Column("accountId", account_type), Column("userCount", "BIGINT")]
    return TableDef("user_count_by_account", columns, {"connector": "upsert-kafka"}, primary_key=key)


def test_a_sink_keyed_by_the_group_key_needs_no_picking():
    assert keyed_like_result(RESULT, ["accountId"], sink(["accountId"]), None)
    assert keyed_like_result(RESULT, ["accountId"], sink(["ACCOUNTID"]), None)  # names are case-insensitive


def test_a_sink_keyed_otherwise_is_picked():
    assert not keyed_like_result(RESULT, ["accountId"], sink(["userCount"]), None)
    assert not keyed_like_result(RESULT, ["accountId"], sink(["accountId", "userCount"]), None)
    assert not keyed_like_result(RESULT, [], sink(["accountId"]), None)  # the group key is not among the columns
    assert not keyed_like_result(RESULT, ["accountId"], sink([]), None)


def test_the_key_is_matched_by_position_through_an_insert_column_list():
    swapped = TableDef("t", [Column("n", "BIGINT"), Column("k", "STRING")], primary_key=["k"])
    assert keyed_like_result(RESULT, ["accountId"], swapped, ["k", "n"])  # accountId fills k
    assert not keyed_like_result(RESULT, ["accountId"], swapped, None)  # accountId fills n, by position


def test_a_key_column_cast_on_the_way_is_picked():
    # DOUBLE groups 1.2 and 1.4 are two rows; cast to the sink's INT they are one key
    doubles = {"x": "double", "n": "bigint"}
    table = TableDef("t", [Column("x", "INT"), Column("n", "BIGINT")], primary_key=["x"])
    assert not keyed_like_result(doubles, ["x"], table, None)
    decimals = {"x": "decimal(10,2)", "n": "bigint"}
    table = TableDef("t", [Column("x", "DECIMAL(10, 2)"), Column("n", "BIGINT")], primary_key=["x"])
    assert keyed_like_result(decimals, ["x"], table, None)


def test_text_types_that_spark_writes_whole_need_no_picking():
    # Spark writes VARCHAR(n) and CHAR(n) columns as STRING, uncut: the key stays the group's
    assert keyed_like_result(RESULT, ["accountId"], sink(["accountId"], "VARCHAR(3)"), None)
