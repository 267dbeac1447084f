"""Queries over catalogs and databases, and CREATE TABLE ... AS SELECT, on local Spark."""

from __future__ import annotations

import json

import pytest

from shell.results import JobStarted, Rows
from tests.spark.helpers import changes, run

pytestmark = pytest.mark.spark


def generated(name: str, first: int, last: int) -> str:
    return f"""CREATE TABLE {name} (id BIGINT, qty INT) WITH ('connector' = 'datagen', 'number-of-rows' = '{last - first + 1}',
      'fields.id.kind' = 'sequence', 'fields.id.start' = '{first}', 'fields.id.end' = '{last}',
      'fields.qty.min' = '1', 'fields.qty.max' = '1');"""


def test_one_query_reads_tables_of_one_name_from_two_catalogs_and_databases(session):
    run(session, generated("t", 1, 5))
    run(session, "CREATE CATALOG mem WITH ('type' = 'generic_in_memory'); CREATE DATABASE mem.staging;")
    run(session, generated("mem.staging.t", 101, 103))
    rows = changes(run(session, "SELECT id, 'here' AS side FROM t UNION ALL "
                                "SELECT id, 'there' AS side FROM mem.staging.t;"))  # fmt: skip
    assert sorted(r for _, r in rows) == [(i, "here") for i in range(1, 6)] + [(i, "there") for i in range(101, 104)]

    run(session, "USE mem.staging;")
    joined = changes(run(session, "SELECT a.id, b.id FROM default_catalog.default_database.t AS a "
                                  "JOIN t AS b ON a.id + 100 = b.id;"))  # fmt: skip
    assert sorted(r for op, r in joined if op == "+I") == [(1, 101), (2, 102), (3, 103)]


def test_create_table_as_select_declares_the_querys_columns_and_fills_the_table(session, tmp_path):
    run(session, generated("orders", 1, 20))
    out = tmp_path / "big"
    started = run(session, f"""CREATE TABLE big WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json')
        AS SELECT id, qty * 2 AS doubled, CAST(id AS STRING) AS label FROM orders WHERE id > 15;""")
    assert isinstance(started, JobStarted)
    assert session.jobs.wait_all() == []
    described = run(session, "DESCRIBE big;")
    assert isinstance(described, Rows)
    assert [(r[0], r[1]) for r in described.rows] == [("id", "BIGINT"), ("doubled", "INT"), ("label", "STRING")]
    written = [json.loads(line) for path in out.rglob("part-*") for line in path.read_text().splitlines() if line]
    assert sorted(w["id"] for w in written) == [16, 17, 18, 19, 20]
    assert all(w["doubled"] == 2 and w["label"] == str(w["id"]) for w in written)


def test_create_table_as_select_that_cannot_run_leaves_no_table(session, tmp_path):
    from shell.errors import StreamshellError

    run(session, generated("orders", 1, 3))
    with pytest.raises(StreamshellError):
        run(session, f"""CREATE TABLE counts WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "c"}', 'format' = 'json')
            AS SELECT qty, COUNT(*) AS n FROM orders GROUP BY qty;""")  # an updating result into an append-only sink
    assert session.catalog.find("counts") is None
