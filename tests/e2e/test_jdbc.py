"""The `jdbc` connector against a real PostgreSQL (tests/postgres.py): a bounded scan, a lookup join with and
without its cache, an upsert sink fed by an updating aggregate (updates and deletes across micro-batches), a
replayed batch that converges, and failures that are one line without the password."""

from __future__ import annotations

import json
import uuid

import pytest

from shell.errors import StreamshellError
from tests.e2e.cli import streamshell
from tests.spark.helpers import changes, run, wait_for


def jdbc_with(postgres, table: str, **extra: str) -> str:
    options = {"connector": "jdbc", "url": postgres.url, "table-name": table, "username": postgres.user,
               "password": postgres.password, **{k.replace("__", "-").replace("_", "."): v for k, v in extra.items()}}
    return ", ".join(f"'{k}' = '{v}'" for k, v in options.items())


def fresh(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def test_a_scan_reads_the_rows_once_and_ends(session, postgres):
    name = fresh("people")
    postgres.sql(f"CREATE TABLE {name} (id INT PRIMARY KEY, name TEXT, score NUMERIC(6, 2), seen TIMESTAMP);"
                 f"INSERT INTO {name} SELECT g, 'p' || g, g * 1.5, TIMESTAMP '2024-01-01 00:00:00' + g * INTERVAL '1 hour'"
                 f" FROM generate_series(1, 50) AS g")
    run(session, f"""CREATE TABLE people (id INT, name STRING, score DECIMAL(6, 2), seen TIMESTAMP(3), doubled AS id * 2)
        WITH ({jdbc_with(postgres, name, scan_partition_column='id', scan_partition_num='3',
                         scan_partition_lower__bound='1', scan_partition_upper__bound='50', scan_fetch__size='7')});""")
    rows = changes(run(session, "SELECT id, name, score, doubled FROM people WHERE id > 45;"))
    assert sorted(row for _, row in rows) == [(i, f"p{i}", pytest.approx(i * 1.5), i * 2) for i in range(46, 51)]
    assert {op for op, _ in rows} == {"+I"}


def stream_until(stream, predicate, what: str, limit: int = 400) -> list[tuple]:
    """Rows of an unbounded result, batch by batch, until `predicate(rows of the batch)`; fails after `limit`
    batches."""
    seen = 0
    for batch in stream.batches():
        rows = [c.row for c in batch or ()]
        if rows and predicate(rows):
            return rows
        seen += 1
        assert seen < limit, f"{what}: not within {limit} batches"
    raise AssertionError(f"{what}: the stream ended")


def test_a_lookup_join_reads_postgres_as_of_processing_time_and_its_cache_keeps_a_copy(session, postgres):
    """Two lookups of the same PostgreSQL table: one without a cache sees an update in the next micro-batches, the
    other, cached for an hour, keeps the copy it read; a third with a short ttl sees it once its copy expired."""
    name = fresh("customers")
    postgres.sql(f"CREATE TABLE {name} (id INT PRIMARY KEY, name TEXT); INSERT INTO {name} VALUES (1, 'ada'), (2, 'bob')")
    run(session, f"""
        CREATE TABLE orders (oid BIGINT, cid INT, pt AS PROCTIME())
          WITH ('connector' = 'datagen', 'rows-per-second' = '20', 'fields.cid.min' = '1', 'fields.cid.max' = '2');
        CREATE TABLE live (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ({jdbc_with(postgres, name)});
        CREATE TABLE hour (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED)
          WITH ({jdbc_with(postgres, name, lookup_cache='PARTIAL', lookup_partial__cache_max__rows='100',
                           lookup_partial__cache_expire__after__write='1 h')});
        CREATE TABLE brief (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED)
          WITH ({jdbc_with(postgres, name, lookup_cache_max__rows='100', lookup_cache_ttl='2 s')});""")
    explained = run(session, "EXPLAIN SELECT o.oid FROM orders AS o JOIN hour FOR SYSTEM_TIME AS OF o.pt AS h ON o.cid = h.id;")
    assert "lookup join: hour" in explained.text and "JDBCRelation" in explained.text, explained.text
    stream = run(session, """
        SELECT o.cid, l.name, h.name, b.name FROM orders AS o
          JOIN live FOR SYSTEM_TIME AS OF o.pt AS l ON o.cid = l.id
          JOIN hour FOR SYSTEM_TIME AS OF o.pt AS h ON o.cid = h.id
          JOIN brief FOR SYSTEM_TIME AS OF o.pt AS b ON o.cid = b.id;""")
    try:
        first = stream_until(stream, lambda rows: any(r[0] == 1 for r in rows), "a first order of customer 1")
        assert {r for r in first if r[0] == 1} == {(1, "ada", "ada", "ada")}
        postgres.sql(f"UPDATE {name} SET name = 'ada lovelace' WHERE id = 1")
        # Without a cache the next micro-batches see the update; the hour-long copy still has the old name.
        updated = stream_until(stream, lambda rows: any(r[:2] == (1, "ada lovelace") for r in rows), "the update")
        assert {r[2] for r in updated if r[0] == 1} == {"ada"}
        # The two-second copy expires and is read again.
        later = stream_until(stream, lambda rows: any(r[0] == 1 and r[3] == "ada lovelace" for r in rows), "ttl")
        assert {r[2] for r in later if r[0] == 1} == {"ada"}
    finally:
        stream.cancel()


def cdc(path, *events: tuple) -> None:
    """Debezium events: ('c', after), ('u', before, after), ('d', before)."""
    lines = []
    for event in events:
        op, rows = event[0], event[1:]
        before, after = (None, rows[0]) if op == "c" else (rows[0], rows[1]) if op == "u" else (rows[0], None)
        lines.append(json.dumps({"before": before, "after": after, "op": op}))
    path.write_text("\n".join(lines) + "\n")


def test_an_updating_aggregate_upserts_and_deletes_by_key(session, postgres, tmp_path):
    name = fresh("counts")
    postgres.sql(f"CREATE TABLE {name} (acct TEXT PRIMARY KEY, n BIGINT NOT NULL); INSERT INTO {name} VALUES ('keep', 7)")
    users = tmp_path / "users"
    users.mkdir()
    run(session, f"""
        CREATE TABLE users (uid STRING, acct STRING)
          WITH ('connector' = 'filesystem', 'path' = '{users}', 'format' = 'debezium-json', 'source.monitor-interval' = '1 s');
        CREATE TABLE counts (acct STRING, n BIGINT, PRIMARY KEY (acct) NOT ENFORCED)
          WITH ({jdbc_with(postgres, name, sink_buffer__flush_max__rows='2')});""")
    cdc(users / "1.json", ("c", {"uid": "1", "acct": "a"}), ("c", {"uid": "2", "acct": "a"}),
        ("c", {"uid": "3", "acct": "b"}))  # fmt: skip
    started = run(session, "INSERT INTO counts SELECT acct, COUNT(*) FROM users GROUP BY acct;")
    try:
        def table() -> list[tuple]:
            return sorted(postgres.sql(f"SELECT acct, n FROM {name}"))

        wait_for(lambda: table() == [("a", "2"), ("b", "1"), ("keep", "7")], 240, "the first batch's groups")
        # Group a loses both users (deleted), b gains one (updated), c is new.
        cdc(users / "2.json", ("u", {"uid": "1", "acct": "a"}, {"uid": "1", "acct": "b"}),
            ("d", {"uid": "2", "acct": "a"}), ("c", {"uid": "4", "acct": "c"}))  # fmt: skip
        wait_for(lambda: table() == [("b", "2"), ("c", "1"), ("keep", "7")], 240, "the updates and the delete")
    finally:
        run(session, f"STOP JOB '{started.job_id}';")


def test_a_replayed_batch_converges_and_the_last_change_of_a_key_wins(session, postgres):
    from shell.connectors.registry import connector_for, resolved
    from shell.engine.run_context import RunContext

    name = fresh("balances")
    postgres.sql(f"CREATE TABLE {name} (id INT PRIMARY KEY, amount INT); INSERT INTO {name} VALUES (1, 10), (2, 20)")
    run(session, f"CREATE TABLE balances (id INT, amount INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({jdbc_with(postgres, name)});")
    spark = session.runtime.get()
    batch = spark.sql("SELECT * FROM VALUES (1, 11, '-U'), (1, 12, '+U'), (2, 20, '-D'), (3, 30, '+I'), (3, 31, '+U') "
                      "AS v(id, amount, __op)").coalesce(1)
    table = resolved(session.catalog.table("balances"))
    connector = connector_for(table)
    ctx = RunContext(spark, session.home / "work", 1000).connector_context(spark)
    for _ in range(2):  # the second time as Spark replays a batch after a crash
        connector.write_batch(ctx, table, batch, 5)
        assert sorted(postgres.sql(f"SELECT id, amount FROM {name}")) == [("1", "12"), ("3", "31")]
    # A one-off write leaves no staging table behind.
    assert postgres.sql(f"SELECT COUNT(*) FROM pg_tables WHERE tablename LIKE '{name}_streamshell_%'") == [("0",)]


def test_a_table_without_a_key_is_appended_to_and_refuses_an_updating_query(session, postgres):
    name = fresh("events")
    postgres.sql(f"CREATE TABLE {name} (id INT, what TEXT)")
    run(session, f"""CREATE TABLE events (id INT, what STRING) WITH ({jdbc_with(postgres, name)});
        INSERT INTO events VALUES (1, 'a'), (1, 'a'), (2, 'b');""")
    assert sorted(postgres.sql(f"SELECT id, what FROM {name}")) == [("1", "a"), ("1", "a"), ("2", "b")]
    with pytest.raises(StreamshellError, match="append-only"):
        run(session, "INSERT INTO events SELECT id, MAX(what) FROM events GROUP BY id;")


@pytest.mark.parametrize("problem", ["password", "table", "down"])
def test_failures_are_one_line_that_names_the_table_and_never_the_password(session, postgres, problem):
    name = fresh("missing") if problem == "table" else fresh("there")
    if problem != "table":
        postgres.sql(f"CREATE TABLE {name} (id INT)")
    options = jdbc_with(postgres, name)
    if problem == "password":
        options = options.replace(postgres.password, "wrong-secret-pw")
    if problem == "down":
        options = options.replace(f":{postgres.port}/", ":1/")
    run(session, f"CREATE TABLE t (id INT) WITH ({options});")
    with pytest.raises(StreamshellError) as info:
        changes(run(session, "SELECT * FROM t;"))
    shown = info.value.render()
    expected = {"password": "refused the login of user", "table": "does not exist", "down": "cannot reach PostgreSQL"}
    assert "jdbc table 't'" in shown and expected[problem] in shown, shown
    assert "Traceback" not in shown and postgres.password not in shown and "wrong-secret-pw" not in shown
    assert len(shown.splitlines()) == 2 and shown.splitlines()[1].startswith("hint: ")


def test_the_cli_says_a_wrong_password_in_one_line(postgres, tmp_path):
    name = fresh("cli")
    postgres.sql(f"CREATE TABLE {name} (id INT)")
    options = jdbc_with(postgres, name).replace(postgres.password, "not-the-password")
    done = streamshell("-e", f"CREATE TEMPORARY TABLE t (id INT) WITH ({options}); SELECT * FROM t;", home=tmp_path)
    assert done.code == 1
    assert "refused the login of user 'shelluser'" in done.err and "Traceback" not in done.err, done.err
    assert "not-the-password" not in done.err + done.out
