"""Which of an input's columns the keyed stage can keep once: the primary key's own column, when it equals `__pk`."""

from __future__ import annotations

import pytest
from pyspark.sql.types import LongType, StringType, StructField

from shell.catalog.model import Column, TableDef
from shell.engine.changelog import primary_key_column
from shell.planner.model import APPEND, UPSERT_INPUT, StageInput

pytestmark = pytest.mark.unit


def stage_input(kind: str, key_type: str, reads: list[str], primary_key: tuple[str, ...] = ("uid",)) -> StageInput:
    table = TableDef("users", [Column("uid", key_type), Column("region", "STRING"), Column("acct", "STRING")],
                     primary_key=list(primary_key))
    return StageInput(table, "u", kind, reads, key=["uid"])


def fields(key_type) -> dict:  # noqa: ANN001 - a Spark DataType
    return {name: StructField(name, t) for name, t in
            (("u__uid", key_type), ("u__region", StringType()), ("u__acct", StringType()))}


@pytest.mark.parametrize("source, types, expected", [
    (stage_input(UPSERT_INPUT, "STRING", ["uid", "acct"]), fields(StringType()), "u__uid"),
    (stage_input(UPSERT_INPUT, "STRING", ["acct"]), fields(StringType()), ""),  # not read: nothing to keep
    (stage_input(UPSERT_INPUT, "BIGINT", ["uid", "acct"]), fields(LongType()), ""),  # __pk is its text, not it
    (stage_input(UPSERT_INPUT, "STRING", ["uid", "region"], ("uid", "region")), fields(StringType()), ""),
    (stage_input(APPEND, "STRING", ["uid", "acct"]), fields(StringType()), ""),  # no primary key in the stage
], ids=["string-key-read", "key-not-read", "bigint-key", "two-column-key", "append-input"])  # fmt: skip
def test_only_a_one_column_string_primary_key_the_query_reads_is_kept_as_pk(source, types, expected):
    assert primary_key_column(source, types) == expected
