"""The jdbc connector's options as CREATE TABLE checks them, its lookup cache policy, and the SQL of a batch's
merge (no database here: tests/e2e/test_jdbc.py runs them against PostgreSQL)."""

from __future__ import annotations

import pytest

from shell.catalog.model import Column, TableDef
from shell.connectors.jdbc_lookup import CachePolicy
from shell.connectors.jdbc_sink import Merge, staging_name
from shell.connectors.registry import secret_keys, validate_table
from shell.errors import OptionError

pytestmark = pytest.mark.unit

URL = "jdbc:postgresql://localhost:5432/shop"


def table(primary_key: tuple[str, ...] = (), **options: str) -> TableDef:
    given = {"connector": "jdbc", "url": URL, "table-name": "customers", "username": "app", "password": "pw-123456"}
    given.update({k.replace("__", "-").replace("_", "."): v for k, v in options.items()})
    return TableDef("customers", [Column("id", "INT"), Column("name", "STRING")], given, list(primary_key))


def refusal(t: TableDef) -> str:
    with pytest.raises(OptionError) as info:
        validate_table(t)
    return info.value.render()


def test_flinks_options_are_accepted():
    validate_table(table(("id",), scan_partition_column="id", scan_partition_num="4", scan_partition_lower__bound="1",
                         scan_partition_upper__bound="1000", scan_fetch__size="500", lookup_cache="PARTIAL",
                         lookup_partial__cache_max__rows="1000", lookup_partial__cache_expire__after__write="10 s",
                         lookup_max__retries="2", sink_buffer__flush_max__rows="50",
                         sink_buffer__flush_interval="2 s", sink_max__retries="1", sink_parallelism="2"))
    validate_table(table(lookup_cache_max__rows="10", lookup_cache_ttl="1 min"))


@pytest.mark.parametrize(("options", "expected"), [
    ({"url": "jdbc:mysql://localhost/shop"}, "must be a PostgreSQL JDBC URL"),
    ({"scan_partition_column": "id", "scan_partition_num": "2"}, "missing scan.partition.lower-bound"),
    ({"lookup_cache": "PARTIAL"}, "needs 'lookup.partial-cache.max-rows'"),
    ({"lookup_cache": "FULL"}, "must be one of 'NONE', 'PARTIAL'"),
    ({"lookup_cache_max__rows": "10"}, "set both 'lookup.cache.max-rows' and 'lookup.cache.ttl'"),
    ({"lookup_cache_ttl": "soon", "lookup_cache_max__rows": "1"}, "a duration"),
    ({"sink_buffer__flush_max__rows": "0"}, "must be at least 1"),
    ({"sink_max__retries": "-1"}, "must be at least 0"),
    ({"table__nam": "x"}, "did you mean"),
])  # fmt: skip
def test_wrong_options_are_refused_with_the_option_named(options, expected):
    assert expected in refusal(table(**options))


def test_the_required_options_and_the_password_stay_hidden():
    t = table()
    del t.options["table-name"]
    assert "needs option 'table-name'" in refusal(t)
    shown = refusal(table(scan_fetch__size="pw-123456"))
    assert "pw-123456" not in shown
    assert secret_keys(table()) == {"password"}


def test_the_cache_policy_follows_the_current_options_first_then_the_older_ones():
    assert CachePolicy.of(table()) is None
    assert CachePolicy.of(table(lookup_cache="PARTIAL", lookup_partial__cache_max__rows="5",
                                lookup_partial__cache_expire__after__access="3 s")) == CachePolicy(5, 3000)
    assert CachePolicy.of(table(lookup_cache="PARTIAL", lookup_partial__cache_max__rows="5")) == CachePolicy(5, None)
    assert CachePolicy.of(table(lookup_cache_max__rows="7", lookup_cache_ttl="1 min")) == CachePolicy(7, 60_000)


def test_an_upsert_merge_keeps_the_last_change_of_each_key_in_one_transactions_statements():
    merge = Merge("shop.counts", ["acct", "n"], ["acct"], "shop.counts_streamshell_0a1b2c3d")
    delete, upsert, clear = merge.statements()
    assert delete.startswith("DELETE FROM shop.counts AS t USING (SELECT DISTINCT ON (\"acct\")")
    assert "ORDER BY \"acct\", streamshell_seq DESC" in delete and "s.streamshell_op = '-D'" in delete
    assert upsert.endswith('ON CONFLICT ("acct") DO UPDATE SET "n" = EXCLUDED."n"')
    assert "streamshell_op <> '-U'" in upsert
    assert clear == "TRUNCATE shop.counts_streamshell_0a1b2c3d"
    only_key = Merge("t", ["a"], ["a"], "t_streamshell_x").statements()[1]
    assert only_key.endswith("DO NOTHING")


def test_an_append_merge_inserts_the_rows_in_batch_order():
    insert, clear = Merge("events", ["id", "what"], [], "events_streamshell_x").statements()
    assert insert.startswith('INSERT INTO events ("id", "what") SELECT "id", "what" FROM events_streamshell_x')
    assert insert.endswith("ORDER BY streamshell_seq") and clear.startswith("TRUNCATE")


def test_staging_tables_are_one_per_writer_in_the_targets_schema_within_63_characters():
    assert staging_name("shop.counts", "query-1") != staging_name("shop.counts", "query-2")
    assert staging_name("shop.counts", "query-1").startswith("shop.counts_streamshell_")
    long = staging_name("x" * 80, "q")
    assert len(long) == 63 and long.endswith(staging_name("t", "q")[len("t"):])
