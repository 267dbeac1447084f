"""The engine benchmark's small runs write and check their data in Python: the same messages Spark writes.

benchmarks/engine_data_python.py makes the benchmark's input without a Spark for runs of a few thousand messages
(those `make test` executes); if its hash or its JSON drifted from Spark's, a small run would measure other data
than a large one, and a check in Python would disagree with the check in Spark. Here both make every phase of every
pipeline and the append path's orders, and every message must be equal.
"""

from __future__ import annotations

import pytest

from benchmarks import engine_data, engine_data_python

pytestmark = pytest.mark.spark

TOPICS = {"count": ["users"], "join": ["users", "colors", "cheeses"], "orders": ["users", "orders"]}


def test_python_hashes_longs_as_spark_does(spark_runtime):
    spark = spark_runtime.get()
    values = [0, 1, 7, 999, 123_456_789, -5, 2**62, -(2**63)]
    for salt in (None, 12, 13, 19):
        expr = "xxhash64(id)" if salt is None else f"xxhash64(id, {salt})"
        got = {r[0]: r[1] for r in spark.createDataFrame([(v,) for v in values], "id BIGINT").selectExpr(
            "id", expr).collect()}  # fmt: skip
        assert got == {v: engine_data_python.xxhash64(v, salt) for v in values}, salt


@pytest.mark.parametrize("pipeline", sorted(TOPICS))
@pytest.mark.parametrize("phase", ["preload", "changes"])
def test_each_phase_makes_the_same_messages_as_spark(spark_runtime, pipeline, phase):
    spark, topics = spark_runtime.get(), TOPICS[pipeline]
    keys, changes, accounts = 400, 1_001, 37
    frame = engine_data.change_rows(spark, pipeline, phase, keys, changes, accounts, topics)
    by_spark = sorted(tuple(r) for r in frame.collect())
    by_python = list(engine_data_python.change_rows(pipeline, phase, keys, changes, accounts, topics,
                                                    engine_data.TASKS))  # fmt: skip
    assert len(by_python) == (keys * len(topics) if phase == "preload" else changes)
    assert sorted(by_python, key=lambda r: (r[0], r[1])) == sorted(by_spark, key=lambda r: (r[0], r[1]))
    if phase == "changes":
        assert any(value is None for *_, value in by_python)  # deletes are among them


def test_the_orders_are_the_same_messages_as_spark(spark_runtime):
    by_spark = [tuple(r) for r in engine_data.order_frame(spark_runtime.get(), 3_000).orderBy("id").collect()]
    assert list(engine_data_python.order_rows(3_000)) == by_spark
