"""The changelog path on local Spark, over debezium-json and json files: aggregates with updates and deletes,
HAVING, joins with NULL padding, sinks that cannot take updates, EXPLAIN, and state kept across a restart."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from shell.engine import query as engine_query
from shell.errors import OptionError
from shell.paths import jvm_bundle_jars
from shell.planner.planner import plan_query
from shell.results import Text
from shell.sql.parse import parse_query
from tests.spark.helpers import changes, materialize, next_changes, run


def cdc(path: Path, *events: tuple) -> None:
    """Debezium events: ('c', after), ('u', before, after), ('d', before)."""
    lines = []
    for event in events:
        op, rows = event[0], event[1:]
        before, after = (None, rows[0]) if op == "c" else (rows[0], rows[1]) if op == "u" else (rows[0], None)
        lines.append(json.dumps({"before": before, "after": after, "op": op}))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def tables(session, tmp_path):
    users, colors = tmp_path / "users", tmp_path / "colors"
    users.mkdir()
    colors.mkdir()
    cdc(users / "1.json",
        ("c", {"uid": "1", "acct": "a", "age": 30}),
        ("c", {"uid": "2", "acct": "a", "age": 40}),
        ("c", {"uid": "3", "acct": "b", "age": None}),
        ("u", {"uid": "2", "acct": "a", "age": 40}, {"uid": "2", "acct": "b", "age": 41}),
        ("c", {"uid": "4", "acct": "c", "age": 20}),
        ("d", {"uid": "1", "acct": "a", "age": 30}))  # fmt: skip
    cdc(colors / "1.json",
        ("c", {"uid": "1", "color": "red"}),
        ("c", {"uid": "3", "color": "blue"}),
        ("u", {"uid": "3", "color": "blue"}, {"uid": "3", "color": "green"}),
        ("c", {"uid": "9", "color": "black"}))  # fmt: skip
    run(session, f"""
        CREATE TEMPORARY TABLE users (uid STRING, acct STRING, age INT)
          WITH ('connector' = 'filesystem', 'path' = '{users}', 'format' = 'debezium-json');
        CREATE TEMPORARY TABLE colors (uid STRING, color STRING)
          WITH ('connector' = 'filesystem', 'path' = '{colors}', 'format' = 'debezium-json');""")
    return users, colors


def test_count_sum_and_avg_follow_updates_and_deletes(session, tables):
    rows = changes(run(session, "SELECT acct, COUNT(*) AS n, SUM(age) AS s, AVG(age) AS m, COUNT(age) AS k FROM users GROUP BY acct;"))
    # a: its two users moved away or were deleted; b: uid 2 (41) and uid 3 (NULL age); c: uid 4
    assert materialize(rows, key=1) == [("b", 2, 41, 41.0, 1), ("c", 1, 20, 20.0, 1)]
    # all in one micro-batch: group a came and went before anything was shown, so nothing of it is
    assert sorted(rows, key=repr) == [("+I", ("b", 2, 41, 41.0, 1)), ("+I", ("c", 1, 20, 20.0, 1))]


def test_having_deletes_a_group_that_stops_qualifying(session, tables):
    rows = changes(run(session, "SELECT acct, COUNT(*) AS n FROM users GROUP BY acct HAVING COUNT(*) > 1;"))
    assert materialize(rows, key=1) == [("b", 2)]
    assert rows == [("+I", ("b", 2))]  # nothing of the groups HAVING kept out, not even a -D


def test_groups_the_output_does_not_name_stay_apart_when_their_rows_are_equal(session, tables):
    # three colours with one user each: three rows (1), not one row updated three times
    rows = changes(run(session, "SELECT COUNT(*) AS n FROM colors GROUP BY color;"))
    assert rows == [("+I", (1,))] * 3
    nested = "SELECT COUNT(*) AS groups FROM (SELECT acct, COUNT(*) AS n FROM users GROUP BY acct) x GROUP BY n;"
    assert changes(run(session, nested)) == [("+I", (1,))] * 2  # accounts of 2 users and of 1: one each


def test_global_aggregate_is_one_row_updated_in_place(session, tables):
    rows = changes(run(session, "SELECT COUNT(*) AS n, SUM(age) AS s FROM users;"))
    assert rows[-1] in (("+I", (3, 61)), ("+U", (3, 61)))
    assert materialize(rows) == [(3, 61)]


def test_left_join_pads_missing_colors_with_null(session, tables):
    rows = changes(run(session, "SELECT u.uid, u.acct, c.color FROM users u LEFT JOIN colors c ON u.uid = c.uid;"))
    assert materialize(rows) == [("2", "b", None), ("3", "b", "green"), ("4", "c", None)]


def test_full_join_then_group_by(session, tables):
    query = "SELECT c.color, COUNT(*) AS n, COUNT(u.uid) AS users FROM users u FULL JOIN colors c ON u.uid = c.uid GROUP BY c.color;"
    rows = changes(run(session, query))
    assert materialize(rows, key=1) == sorted([(None, 2, 2), ("black", 1, 0), ("green", 1, 1), ("red", 1, 0)], key=repr)


def test_in_and_exists_subqueries_follow_the_current_rows_of_their_table(session, tables):
    # colors now: 1 red, 3 green (was blue), 9 black; users now: 2, 3, 4
    rows = changes(run(session, "SELECT uid, acct FROM users WHERE uid IN (SELECT uid FROM colors WHERE color <> 'red');"))
    assert materialize(rows) == [("3", "b")]
    blue = "SELECT uid FROM users u WHERE EXISTS (SELECT 1 FROM colors c WHERE c.uid = u.uid AND c.color = 'blue');"
    assert materialize(changes(run(session, blue))) == [], "3 stopped being blue: its before-image took the match away"
    rows = changes(run(session, "SELECT * FROM users u WHERE NOT EXISTS (SELECT 1 FROM colors c WHERE c.uid = u.uid);"))
    assert materialize(rows) == [("2", "b", 41), ("4", "c", 20)]


def test_a_row_inserted_and_updated_in_one_batch_is_never_retracted_before_it_is_shown(session, tables):
    # no keyed stage: uid 1 and uid 2 (acct a) are created, then updated or deleted, all in one micro-batch
    rows = changes(run(session, "SELECT uid, acct FROM users;"))
    assert sorted(rows) == [("+I", ("2", "b")), ("+I", ("3", "b")), ("+I", ("4", "c"))]


def test_netting_a_batch_groups_map_values_by_their_content(spark_runtime):
    from shell.engine.changelog import netted

    spark = spark_runtime.get()
    batch = spark.createDataFrame(
        [("a", {"k": 1}, 1), ("a", {"k": 1}, -1), ("a", {"k": 2}, 1), ("b", None, 2), ("b", None, -1)],
        "name STRING, m MAP<STRING, INT>, __w INT")
    rows = sorted((r["name"], r["m"], r["__w"]) for r in netted(batch, ["name", "m"]).collect())
    assert rows == [("a", {"k": 2}, 1), ("b", None, 1)]


def test_an_append_table_aggregated_without_a_window_keeps_min_and_max(session, tmp_path):
    (tmp_path / "ev").mkdir()
    (tmp_path / "ev" / "a.json").write_text("\n".join(json.dumps({"g": g, "v": v}) for g, v in
                                                      [("x", 3), ("x", 9), ("y", 4), ("x", 1)]) + "\n")
    run(session, f"CREATE TEMPORARY TABLE ev (g STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'ev'}', 'format' = 'json');")
    rows = changes(run(session, "SELECT g, MIN(v) AS lo, MAX(v) AS hi, COUNT(*) AS n FROM ev GROUP BY g;"))
    assert materialize(rows, key=1) == [("x", 1, 9, 3), ("y", 4, 4, 1)]


def test_an_event_time_temporal_join_uses_the_version_valid_at_each_rows_time(session, tmp_path):
    at = "2024-01-01 {}:00"
    cdc(tmp_path / "rates.json",
        ("c", {"cur": "EUR", "rate": 1.1, "at": at.format("09:00")}),
        ("u", {"cur": "EUR", "rate": 1.1, "at": at.format("09:00")}, {"cur": "EUR", "rate": 1.2, "at": at.format("10:00")}),
        ("c", {"cur": "GBP", "rate": 1.3, "at": at.format("09:00")}),
        ("d", {"cur": "GBP", "rate": 1.3, "at": at.format("09:30")}))  # fmt: skip
    orders = [(1, "EUR", "08:59"), (2, "EUR", "09:00"), (3, "EUR", "09:59"), (4, "EUR", "10:00"), (5, "GBP", "09:10"),
              (6, "GBP", "09:40"), (7, "JPY", "09:00")]
    (tmp_path / "orders.json").write_text("\n".join(
        json.dumps({"id": i, "cur": c, "ts": at.format(t)}) for i, c, t in orders) + "\n")
    run(session, f"""
        CREATE TEMPORARY TABLE orders (id INT, cur STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
          WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'orders.json'}', 'format' = 'json');
        CREATE TEMPORARY TABLE rates (cur STRING, rate DOUBLE, at TIMESTAMP(3), WATERMARK FOR at AS at,
          PRIMARY KEY (cur) NOT ENFORCED)
          WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'rates.json'}', 'format' = 'debezium-json');""")
    join = "FROM orders AS o {} JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur"
    inner = changes(run(session, f"SELECT o.id, r.rate {join.format('')};"))
    assert {op for op, _ in inner} == {"+I"}, "a temporal join of an append-only table only adds rows"
    assert sorted(row for _, row in inner) == [(2, 1.1), (3, 1.1), (4, 1.2), (5, 1.3)]
    left = changes(run(session, f"SELECT o.id, r.rate {join.format('LEFT')};"))
    assert sorted(row for _, row in left) == [(1, None), (2, 1.1), (3, 1.1), (4, 1.2), (5, 1.3), (6, None), (7, None)]
    # Its rows are final once emitted, so an append-only table takes them (a regular join's would be refused).
    out = tmp_path / "out"
    run(session, f"""CREATE TEMPORARY TABLE converted (id INT, rate DOUBLE)
        WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');""")
    started = run(session, f"INSERT INTO converted SELECT o.id, r.rate {join.format('')};")
    job = session.jobs.jobs[started.job_id]
    job.await_end()
    assert job.status == "FINISHED"
    written = [json.loads(line) for f in out.rglob("part-*") for line in f.read_text().splitlines() if line]
    assert sorted((r["id"], r["rate"]) for r in written) == [(2, 1.1), (3, 1.1), (4, 1.2), (5, 1.3)]


def test_an_updating_result_into_an_append_only_table_is_refused(session, tables, tmp_path):
    run(session, f"CREATE TEMPORARY TABLE out (acct STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'json');")
    with pytest.raises(OptionError, match="append-only") as info:
        run(session, "INSERT INTO out SELECT acct, COUNT(*) FROM users GROUP BY acct;")
    assert "upsert" in info.value.hint


def test_an_updating_result_into_a_changelog_table_writes_its_changes(session, tables, tmp_path):
    run(session, f"CREATE TEMPORARY TABLE out (acct STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'debezium-json');")
    run(session, "INSERT INTO out SELECT acct, COUNT(*) FROM users GROUP BY acct;")
    session.jobs.jobs[next(iter(session.jobs.jobs))].await_end()
    written = [json.loads(line) for f in sorted((tmp_path / "out").rglob("part-*")) for line in f.read_text().splitlines()]
    final = {}
    for event in written:
        if event["op"] == "d":
            final.pop(event["before"]["acct"], None)
        else:
            final[event["after"]["acct"]] = event["after"]["n"]
    assert final == {"b": 2, "c": 1}


def test_explain_shows_the_changelog_plan_then_sparks(session, tables):
    text = run(session, "EXPLAIN SELECT u.acct, COUNT(*) AS n FROM users u LEFT JOIN colors c ON u.uid = c.uid GROUP BY u.acct;")
    assert isinstance(text, Text)
    assert "path: changelog" in text.text and "keyed stage" in text.text
    if jvm_bundle_jars("stages"):  # built by make setup, when a JDK's javac is there
        assert "TransformWithState " in text.text and "MapInArrow pack" not in text.text, "the JVM's stage, no Python"
    run(session, f"""CREATE TEMPORARY TABLE tagged (uid STRING, tags MAP<STRING, STRING>) WITH ('connector' =
        'filesystem', 'path' = '{tables[0]}', 'format' = 'debezium-json');""")
    text = run(session, "EXPLAIN SELECT u.uid, t.tags FROM users u JOIN tagged t ON u.uid = t.uid;")
    assert "TransformWithStateInPySpark" in text.text, "rows with a MAP are counted by value: the Python stage"
    run(session, "SET 'table.exec.changelog.jvm-stages' = 'false';")
    text = run(session, "EXPLAIN SELECT u.acct, COUNT(*) AS n FROM users u LEFT JOIN colors c ON u.uid = c.uid GROUP BY u.acct;")
    assert "MapInArrow pack" in text.text and "TransformWithStateInPySpark" in text.text, "packed, then the stage"
    assert "StateStoreSave" in text.text


@pytest.mark.parametrize("layout", [(16, 64), (1, 2)], ids=["few-sub-buckets-touched", "most-sub-buckets-touched"])
def test_state_survives_a_restart_from_the_checkpoint(session, tables, tmp_path, layout):
    """The second run reads only the new file; its delete can only be right if the first run's rows are in state.
    Also with one bucket of 2 sub-buckets, whose batches touch every sub-bucket."""
    users, colors = tables
    plan = plan_query(parse_query("SELECT u.acct, c.color FROM users u LEFT JOIN colors c ON u.uid = c.uid"), session.catalog)
    context = replace(session._run_context(tmp_path / "job"), layout=layout)
    first = changes(engine_query.start_select(context, plan))
    cdc(colors / "2.json", ("d", {"uid": "3", "color": "green"}))
    cdc(users / "2.json", ("d", {"uid": "4", "acct": "c", "age": 20}))
    second = changes(engine_query.start_select(context, plan))
    assert sorted(second, key=repr) == sorted([("-D", ("b", "green")), ("+I", ("b", None)), ("-D", ("c", None))], key=repr)
    assert materialize(first + second) == [("b", None), ("b", None)]


def test_top_n_per_account_follows_updates_and_deletes(session, tables):
    query = """SELECT acct, uid, age, rn FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY acct ORDER BY age DESC) AS rn FROM users) WHERE rn <= 1;"""
    rows = changes(run(session, query))
    # b: uid 2 (41) beats uid 3 (NULL age, sorted last); c: uid 4; a: both users gone
    assert materialize(rows) == [("b", "2", 41, 1), ("c", "4", 20, 1)]


def test_order_by_with_limit_is_the_first_rows_of_the_filtered_table(session, tables):
    query = "SELECT * FROM users WHERE acct <> 'c' ORDER BY age DESC LIMIT 1;"
    rows = changes(run(session, query))
    assert materialize(rows) == [("2", "b", 41)], "uid 4 (20) is filtered out; uid 3's NULL age sorts last"


def test_deduplication_keeps_the_first_row_per_key(session, tmp_path):
    (tmp_path / "clicks").mkdir()
    (tmp_path / "clicks" / "a.json").write_text("\n".join(json.dumps(r) for r in [
        {"user": "u1", "page": "home", "ts": "2024-01-01 00:00:03.000"},
        {"user": "u1", "page": "cart", "ts": "2024-01-01 00:00:01.000"},
        {"user": "u2", "page": "help", "ts": "2024-01-01 00:00:02.000"},
        {"user": "u1", "page": "shop", "ts": "2024-01-01 00:00:02.000"}]) + "\n")
    run(session, f"CREATE TEMPORARY TABLE clicks (`user` STRING, page STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'clicks'}', 'format' = 'json');")
    query = """SELECT `user`, page, ts FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY `user` ORDER BY ts) AS rn FROM clicks) WHERE rn = 1;"""
    rows = materialize(changes(run(session, query)))
    assert [(u, p, str(t)) for u, p, t in rows] == [("u1", "cart", "2024-01-01 00:00:01"), ("u2", "help", "2024-01-01 00:00:02")]


def test_min_max_and_count_distinct_are_right_after_the_current_extreme_goes(session, tables, tmp_path):
    users, _ = tables
    query = "SELECT acct, MIN(age) AS lo, MAX(age) AS hi, COUNT(DISTINCT age) AS ages, COUNT(*) AS n FROM users GROUP BY acct"
    plan = plan_query(parse_query(query), session.catalog)
    context = session._run_context(tmp_path / "job")
    first = changes(engine_query.start_select(context, plan))
    assert materialize(first) == [("b", 41, 41, 1, 2), ("c", 20, 20, 1, 1)]
    cdc(users / "2.json", ("d", {"uid": "2", "acct": "b", "age": 41}))  # b's maximum goes; only a NULL age is left
    second = changes(engine_query.start_select(context, plan))
    assert sorted(second, key=repr) == sorted([("-D", ("b", 41, 41, 1, 2)), ("+I", ("b", None, None, 0, 1))], key=repr)


def test_a_nested_aggregate_counts_groups_by_their_size(session, tables):
    query = "SELECT n, COUNT(*) AS accounts FROM (SELECT acct, COUNT(*) AS n FROM users GROUP BY acct) per GROUP BY n;"
    assert materialize(changes(run(session, query)), key=1) == [(1, 1), (2, 1)]


def test_union_all_of_two_tables_into_an_aggregate(session, tmp_path):
    (tmp_path / "web.json").write_text('{"customer": "ann", "amount": 10.5}\n{"customer": "bob", "amount": 3.0}\n')
    (tmp_path / "app.json").write_text('{"customer": "ann", "amount": 2.25, "device": "ios"}\n')
    run(session, f"""
        CREATE TEMPORARY TABLE web (customer STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'web.json'}', 'format' = 'json');
        CREATE TEMPORARY TABLE app (customer STRING, amount DECIMAL(10, 2), device STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'app.json'}', 'format' = 'json');""")
    query = """SELECT customer, COUNT(*) AS n, SUM(amount) AS total, COUNT(DISTINCT channel) AS channels FROM (
        SELECT customer, amount, 'web' AS channel FROM web UNION ALL SELECT customer, amount, 'app' AS channel FROM app) AS o
        GROUP BY customer;"""
    from decimal import Decimal

    assert materialize(changes(run(session, query))) == [("ann", 2, Decimal("12.75"), 2), ("bob", 1, Decimal("3.00"), 1)]


def test_a_job_reads_its_sub_buckets_local_copies_only_at_the_version_its_state_holds(session, tables, tmp_path):
    """The keyed stage keeps local copies of its sub-buckets (engine/stage_cache.py). Run, keep the checkpoint,
    run again on new input, then put the kept checkpoint back and run the same input again: the copies are now
    of a later state than the checkpoint's, so the third run must read the state store and repeat the second's
    changes (reading the newer copies, it would see uid 3 and 4 already deleted and emit nothing)."""
    run(session, "SET 'table.exec.changelog.jvm-stages' = 'false'")  # the Python stage's copies
    import shutil

    from shell.engine import stage_cache

    users, colors = tables
    plan = plan_query(parse_query("SELECT u.acct, c.color FROM users u LEFT JOIN colors c ON u.uid = c.uid"), session.catalog)
    context = session._run_context(tmp_path / "job")
    changes(engine_query.start_select(context, plan))
    copies = stage_cache.folder(stage_cache.scope_of(tmp_path / "job"))
    assert any(copies.iterdir()), "the first run left copies"
    shutil.copytree(tmp_path / "job" / "checkpoint", tmp_path / "kept")
    cdc(colors / "2.json", ("d", {"uid": "3", "color": "green"}))
    cdc(users / "2.json", ("d", {"uid": "4", "acct": "c", "age": 20}))
    second = changes(engine_query.start_select(context, plan))
    shutil.rmtree(tmp_path / "job" / "checkpoint")
    shutil.copytree(tmp_path / "kept", tmp_path / "job" / "checkpoint")
    third = changes(engine_query.start_select(context, plan))
    expected = [("-D", ("b", "green")), ("+I", ("b", None)), ("-D", ("c", None))]
    assert sorted(second, key=repr) == sorted(third, key=repr) == sorted(expected, key=repr)


def test_without_local_copies_a_job_writes_none(session, tables, tmp_path):
    run(session, "SET 'table.exec.changelog.jvm-stages' = 'false'")  # the Python stage's copies
    from shell.engine import stage_cache

    run(session, "SET 'table.exec.changelog.local-copies' = 'false'")
    plan = plan_query(parse_query("SELECT acct, COUNT(*) FROM users GROUP BY acct"), session.catalog)
    result = changes(engine_query.start_select(session._run_context(tmp_path / "job"), plan))
    assert materialize(result, key=1) == [("b", 2), ("c", 1)]
    assert not stage_cache.folder(stage_cache.scope_of(tmp_path / "job")).exists()


def test_a_run_without_local_copies_leaves_none_to_be_read_later(session, tables, tmp_path):
    """Copies on, then off (the state changes, the copies do not), then on again: the third run must not read the
    first run's copies of sub-buckets the second run rewrote (it would still see uid 3's green)."""
    run(session, "SET 'table.exec.changelog.jvm-stages' = 'false'")  # the Python stage's copies
    users, colors = tables
    plan = plan_query(parse_query("SELECT u.acct, c.color FROM users u LEFT JOIN colors c ON u.uid = c.uid"), session.catalog)
    context = session._run_context(tmp_path / "job")
    changes(engine_query.start_select(context, plan))
    cdc(colors / "2.json", ("d", {"uid": "3", "color": "green"}))
    changes(engine_query.start_select(replace(context, local_copies=False), plan))
    cdc(users / "3.json", ("u", {"uid": "3", "acct": "b", "age": None}, {"uid": "3", "acct": "d", "age": None}))
    third = changes(engine_query.start_select(context, plan))
    assert sorted(third, key=repr) == sorted([("-D", ("b", None)), ("+I", ("d", None))], key=repr)


def test_a_sub_buckets_changes_are_kept_beside_its_rows_then_folded_in(session, tmp_path):
    """One bucket of 2 sub-buckets of ~1,500 users each: a run that changes a few users writes only their rows (the
    bucket's delta, engine/stage_operators.py) and leaves the sub-buckets as they were; a run that changes many
    writes them whole again and the delta goes. The runs restart from the checkpoint, one reads without local
    copies: each result must follow."""
    from shell.engine import stage_cache, stage_operators

    run(session, "SET 'table.exec.changelog.jvm-stages' = 'false'")  # the Python stage's sub-buckets
    users, colors = tmp_path / "users", tmp_path / "colors"
    users.mkdir(), colors.mkdir()
    accounts = {str(i): f"a{i % 7}" for i in range(3000)}
    painted = {str(i): "red" for i in range(0, 3000, 3)}
    cdc(users / "0.json", *[("c", {"uid": u, "acct": a, "age": 1}) for u, a in accounts.items()])
    cdc(colors / "0.json", *[("c", {"uid": u, "color": c}) for u, c in painted.items()])
    run(session, f"""
        CREATE TEMPORARY TABLE users (uid STRING, acct STRING, age INT)
          WITH ('connector' = 'filesystem', 'path' = '{users}', 'format' = 'debezium-json');
        CREATE TEMPORARY TABLE colors (uid STRING, color STRING)
          WITH ('connector' = 'filesystem', 'path' = '{colors}', 'format' = 'debezium-json');""")
    plan = plan_query(parse_query("SELECT u.acct, c.color FROM users u LEFT JOIN colors c ON u.uid = c.uid"), session.catalog)
    context = replace(session._run_context(tmp_path / "job"), layout=(1, 2))
    copies = stage_cache.folder(stage_cache.scope_of(tmp_path / "job"))
    result = changes(engine_query.start_select(context, plan))

    def change(n: int, moved: list[str], unpainted: list[str], gone: list[str], copies_on: bool = True) -> list:
        cdc(users / f"{n}.json",
            *[("u", {"uid": u, "acct": accounts[u], "age": 1}, {"uid": u, "acct": accounts[u] + "x", "age": 1}) for u in moved],
            *[("d", {"uid": u, "acct": accounts[u], "age": 1}) for u in gone])  # fmt: skip
        cdc(colors / f"{n}.json", *[("d", {"uid": u, "color": painted[u]}) for u in unpainted])
        accounts.update({u: accounts[u] + "x" for u in moved})
        for u in gone:
            del accounts[u]
        for u in unpainted:
            del painted[u]
        return changes(engine_query.start_select(replace(context, local_copies=copies_on), plan))

    result += change(1, moved=["1", "2", "10"], unpainted=["3"], gone=["4"])
    delta = f".{stage_operators.DELTA}."
    assert any(delta in p.name for p in copies.iterdir()), "a few changed users: a delta, with its local copy"
    result += change(2, moved=["1", "11"], unpainted=["12"], gone=["13"])
    result += change(3, moved=[str(i) for i in range(100, 1600)], unpainted=[], gone=[])
    assert not any(delta in p.name for p in copies.iterdir()), "many changed: folded into their sub-buckets"
    result += change(4, moved=["5", "6"], unpainted=["9"], gone=["7"], copies_on=False)
    result += change(5, moved=["2", "20"], unpainted=["21"], gone=["22"])
    assert materialize(result) == sorted([(a, painted.get(u)) for u, a in accounts.items()], key=repr)


def test_an_over_aggregation_releases_rows_as_the_watermark_passes_and_drops_late_ones(session, tmp_path):
    """A watched directory: the first file's rows leave once the watermark passes them; in the second file a row
    behind the watermark is dropped, and the next row's frame still reaches the row before it (kept in state)."""
    folder = tmp_path / "payments"
    folder.mkdir()
    at = "2024-01-01 10:{:02d}:00"

    def add(name: str, rows: list[tuple]) -> None:
        hidden = folder / f".{name}.tmp"
        hidden.write_text("".join(json.dumps({"k": k, "v": v, "ts": at.format(m)}) + "\n" for k, v, m in rows))
        hidden.rename(folder / f"{name}.json")  # a file appears whole

    add("1", [("a", 1, 0), ("b", 5, 1), ("a", 2, 2)])
    run(session, f"""CREATE TEMPORARY TABLE payments (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
        WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json', 'source.monitor-interval' = '1 s');""")
    stream = run(session, "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT"
                          " ROW) AS last_two FROM payments;")
    assert not stream.bounded
    try:
        first = next_changes(stream, 3)
        assert sorted(first) == [("+I", ("a", 1, 1)), ("+I", ("a", 2, 3)), ("+I", ("b", 5, 5))]
        add("2", [("a", 100, 1), ("a", 4, 5), ("b", 7, 6)])  # 10:01 is behind the watermark (10:02): late
        second = next_changes(stream, 2)
        assert sorted(second) == [("+I", ("a", 4, 6)), ("+I", ("b", 7, 12))]
    finally:
        stream.cancel()
