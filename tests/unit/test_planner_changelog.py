"""Which path a query takes, and the changelog plan: inputs, keys, joins, output kind, and what is refused."""

from __future__ import annotations

import re

import pytest

from shell.catalog.model import Column, TableDef
from shell.catalog.store import Catalog
from shell.errors import CatalogError, UnsupportedFeatureError
from shell.planner.model import APPEND, CHANGELOG, RETRACT, UPSERTS, UPSERT_INPUT
from shell.planner.plan import APPEND_ONLY, NATIVE
from shell.planner.plan_tree import tree_lines
from shell.planner.stages import Aggregation, Rank, Temporal, UnionAll
from shell.planner.planner import plan_query
from tests.sessions import catalog_after
from shell.sql.parse import parse_query

PULSAR = "'service-url' = 'pulsar://localhost:6650', 'admin-url' = 'http://localhost:8080', 'key.format' = 'raw', 'value.format' = 'json'"
DDL = f"""
CREATE TABLE users (uid STRING, accountId STRING, fullName STRING, PRIMARY KEY (uid) NOT ENFORCED)
  WITH ('connector' = 'upsert-pulsar', 'topic' = 'users', {PULSAR});
CREATE TABLE colors (userUid STRING, color STRING, PRIMARY KEY (userUid) NOT ENFORCED)
  WITH ('connector' = 'upsert-pulsar', 'topic' = 'colors', {PULSAR});
CREATE TABLE cheeses (userUid STRING, cheese STRING, PRIMARY KEY (userUid) NOT ENFORCED)
  WITH ('connector' = 'upsert-pulsar', 'topic' = 'cheeses', {PULSAR});
CREATE TABLE cdc (id INT, grp STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'debezium-json');
CREATE TABLE events (id INT, grp STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '/tmp/y', 'format' = 'json');
CREATE TABLE rates (grp STRING, rate DOUBLE, at TIMESTAMP(3), WATERMARK FOR at AS at, PRIMARY KEY (grp) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '/tmp/z', 'format' = 'debezium-json');
CREATE TABLE clicks (id INT, grp STRING, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '/tmp/w', 'format' = 'json');
CREATE VIEW named_users AS SELECT uid, accountId FROM users WHERE fullName IS NOT NULL;
CREATE VIEW users_per_account AS SELECT accountId, COUNT(*) AS n FROM named_users GROUP BY accountId;
CREATE VIEW red_events AS SELECT id, grp FROM events WHERE v > 0;
CREATE TABLE feed (event_type INT, bid ROW<auction BIGINT, price BIGINT>)
  WITH ('connector' = 'filesystem', 'path' = '/tmp/v', 'format' = 'json');
CREATE VIEW bids AS SELECT bid.auction, bid.price FROM feed WHERE event_type = 2;
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Catalog:
    return catalog_after(DDL, tmp_path_factory.mktemp("home"))


def plan(catalog: Catalog, sql: str):
    return plan_query(parse_query(sql), catalog)


def test_the_user_count_reads_only_the_grouped_column_through_the_keyed_stage(catalog):
    p = plan(catalog, "SELECT accountId, COUNT(1) AS userCount FROM users GROUP BY accountId")
    cl = p.changelog
    assert p.path == "changelog" and cl.keyed and cl.output == UPSERTS and cl.key == ["accountId"]
    (source,) = cl.inputs
    assert source.kind == UPSERT_INPUT and source.key == ["uid"] and source.columns == ["accountId"]
    assert "SUM(`__w`)" in cl.sql and "`__count`" in cl.sql


def test_the_three_way_left_join_is_one_keyed_stage_on_the_user_key(catalog):
    p = plan(catalog, """SELECT u.accountId, u.uid, c.color, h.cheese FROM users u
        LEFT JOIN colors c ON u.uid = c.userUid LEFT JOIN cheeses h ON u.uid = h.userUid""")
    cl = p.changelog
    assert cl.output == RETRACT and cl.keyed
    assert [(i.alias, i.key, i.join, i.joins_with) for i in cl.inputs] == [
        ("u", ["uid"], "", 0), ("c", ["userUid"], "left", 0), ("h", ["userUid"], "left", 0)]
    assert cl.inputs[0].columns == ["uid", "accountId"] and cl.inputs[2].columns == ["cheese"]


def test_a_debezium_changelog_needs_no_keyed_stage(catalog):
    cl = plan(catalog, "SELECT grp, SUM(v) AS s, AVG(v) AS a FROM cdc GROUP BY grp").changelog
    assert not cl.keyed and cl.inputs[0].kind == CHANGELOG


def test_an_unwindowed_aggregate_of_an_append_table_keeps_min_and_max(catalog):
    p = plan(catalog, "SELECT grp, MIN(v) AS lo, MAX(v) AS hi FROM events GROUP BY grp")
    assert p.path == "changelog" and p.changelog.inputs[0].kind == APPEND and not p.changelog.keyed
    assert "MIN(" in p.changelog.sql and "MAX(" in p.changelog.sql


def test_min_max_and_count_distinct_of_a_changelog_are_grouped_in_the_stage(catalog):
    p = plan(catalog, "SELECT grp, MIN(v) AS lo, COUNT(DISTINCT id) AS n, COUNT(*) AS c FROM cdc WHERE v > 0 GROUP BY grp HAVING MAX(v) > 1")
    cl = p.changelog
    assert cl.keyed and cl.output == RETRACT and cl.inputs[0].key == ["grp"] and cl.inputs[0].filter == "`v` > 0"
    assert cl.stage.group == ["cdc__grp"]
    assert cl.stage.functions == [("__agg0", "min", "cdc__v", False), ("__agg1", "count", "cdc__id", True),
                                        ("__agg2", "count", None, False), ("__agg3", "max", "cdc__v", False)]
    assert "WHERE `__agg3` > 1" in cl.sql


def test_a_nested_aggregate_groups_in_the_stage_then_counts_natively(catalog):
    p = plan(catalog, "SELECT n, COUNT(*) AS groups FROM (SELECT grp, COUNT(*) AS n FROM cdc GROUP BY grp) x GROUP BY n")
    cl = p.changelog
    assert cl.stage.functions == [("__agg0", "count", None, False)] and cl.output == UPSERTS and cl.key == ["n"]


def test_a_group_by_the_output_does_not_show_is_kept_hidden_to_tell_the_groups_apart(catalog):
    p = plan(catalog, "SELECT COUNT(*) AS n FROM cdc GROUP BY grp, v % 2")
    cl = p.changelog
    assert cl.output == UPSERTS and cl.key == [] and cl.hidden_key == ["__group_key_0", "__group_key_1"]
    assert "AS `__group_key_0`" in cl.sql and "AS `__group_key_1`" in cl.sql
    assert "output upserts keyed by the GROUP BY (not shown)" in "\n".join(cl.describe())
    shown = plan(catalog, "SELECT grp, COUNT(*) AS n FROM cdc GROUP BY grp").changelog
    assert shown.key == ["grp"] and shown.hidden_key == []
    assert plan(catalog, "SELECT COUNT(*) AS n FROM cdc").changelog.hidden_key == []


def test_a_left_join_of_append_tables_takes_the_changelog_path(catalog):
    p = plan(catalog, "SELECT a.id, b.v FROM events a LEFT JOIN events b ON a.id = b.id")
    assert p.path == "changelog" and p.changelog.keyed


@pytest.mark.parametrize("sql", [
    "SELECT id, v FROM events WHERE v > 1",
    "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
    # a window aggregation over a window aggregation whose window columns were renamed (Nexmark q5's shape)
    "SELECT MAX(n) AS most, s, e FROM (SELECT window_start AS s, window_end AS e, COUNT(*) AS n FROM "
    "TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end) GROUP BY s, e",
])  # fmt: skip
def test_append_only_queries_stay_native(catalog, sql):
    assert plan(catalog, sql).path == NATIVE


@pytest.mark.parametrize("sql, message", [
    ("SELECT u.uid FROM users u LEFT JOIN colors c ON u.uid = c.userUid AND u.fullName = 'x'",
     "join condition 'u.fullName = 'x'' \\(LEFT JOIN\\)"),
    ("SELECT u.uid FROM users u FULL JOIN colors c ON u.uid = c.userUid AND c.color = 'red'", "FULL JOIN\\)"),
    ("SELECT uid FROM users ORDER BY uid", "ORDER BY without LIMIT"),
    ("SELECT uid FROM users LIMIT 3", "LIMIT without ORDER BY"),
    # a window over rows that change (it recursed without end: the window's rows were planned as the stage again)
    ("SELECT grp, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE rates, DESCRIPTOR(at), INTERVAL '1' MINUTE)) GROUP BY grp",
     "a window table function over 'rates', whose rows change"),
    ("SELECT grp, window_start, COUNT(*) AS n FROM TABLE(HOP(TABLE rates, DESCRIPTOR(at), INTERVAL '1' MINUTE, "
     "INTERVAL '2' MINUTE)) GROUP BY grp, window_start, window_end", "a window table function over 'rates'"),
])  # fmt: skip
def test_what_the_changelog_path_cannot_do_yet_is_named(catalog, sql, message):
    with pytest.raises(UnsupportedFeatureError, match=message):
        plan(catalog, sql)


def test_unknown_and_ambiguous_columns_are_errors_with_hints(catalog):
    with pytest.raises(CatalogError, match="unknown column 'acountId'") as info:
        plan(catalog, "SELECT acountId, COUNT(*) AS n FROM users GROUP BY acountId")
    assert "accountId" in str(info.value.hint)
    with pytest.raises(CatalogError, match="ambiguous"):
        plan(catalog, "SELECT userUid FROM colors c JOIN cheeses h ON c.userUid = h.userUid")


def test_explain_words_say_how_the_stage_works(catalog):
    lines = plan(catalog, "SELECT accountId, COUNT(1) AS n FROM users GROUP BY accountId").describe()
    text = "\n".join(lines)
    assert "path: changelog" in text and "keyed stage" in text and "upserts keyed by accountId" in text


def test_top_n_is_a_keyed_stage_partitioned_by_the_window_key(catalog):
    p = plan(catalog, """SELECT grp, v, rn FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY v DESC) AS rn FROM cdc) WHERE rn <= 3""")
    cl = p.changelog
    assert p.path == "changelog" and cl.keyed and cl.stage.limit == 3
    assert cl.stage.order == [("cdc__v", True, False)] and cl.inputs[0].key == ["grp"]
    assert "`__rownum`" in cl.sql and "top-n: the first 3 rows" in "\n".join(p.describe())


def test_top_n_of_an_upsert_table_must_partition_by_its_key(catalog):
    with pytest.raises(UnsupportedFeatureError, match="outside its primary key"):
        plan(catalog, """SELECT uid FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY accountId ORDER BY uid) AS rn
                           FROM users) WHERE rn <= 2""")


def test_a_union_all_of_append_tables_feeds_an_aggregate(catalog):
    p = plan(catalog, """SELECT grp, COUNT(DISTINCT src) AS sources, SUM(v) AS total FROM (
        SELECT grp, v, 'a' AS src FROM events UNION ALL SELECT grp, v, 'b' AS src FROM events WHERE v > 0) AS u GROUP BY grp""")
    cl = p.changelog
    (source,) = cl.inputs
    assert source.kind == APPEND and source.derived is not None and source.key == ["grp"]
    sql, tables = source.derived
    assert "UNION ALL" in sql and [t.name for t, _ in tables] == ["events"] and tables[0][1] in sql
    assert cl.stage.functions[0] == ("__agg0", "count", "u__src", True)


def test_a_subquery_over_a_changelog_is_not_derived_but_planned(catalog):
    p = plan(catalog, "SELECT grp, COUNT(*) AS n FROM (SELECT grp FROM cdc UNION ALL SELECT grp FROM events) x GROUP BY grp")
    union = p.changelog.inputs[0].plan
    assert p.changelog.inputs[0].derived is None and isinstance(union.stage, UnionAll)
    assert union.inputs[0].plan is not None and union.inputs[1].derived is not None  # Spark runs the append-only one


def test_an_event_time_temporal_join_waits_for_the_left_rows_time(catalog):
    p = plan(catalog, "SELECT e.id, r.rate FROM events AS e LEFT JOIN rates FOR SYSTEM_TIME AS OF e.ts AS r ON e.grp = r.grp")
    cl = p.changelog
    assert cl.keyed and cl.output == RETRACT and isinstance(cl.stage, Temporal) and cl.stage.outer
    assert p.output == APPEND_ONLY, "its rows are final once emitted: append-only sinks take them"
    events, rates = cl.inputs
    assert (events.kind, rates.kind, events.key, rates.key) == (APPEND, CHANGELOG, ["grp"], ["grp"])
    assert (cl.stage.left_time, cl.stage.right_time) == ("e__ts", "r__at")
    assert events.columns == ["id", "ts"] and rates.columns == ["rate", "at"], "the two times travel with the rows"
    assert any("temporal join" in line for line in cl.describe())


def test_a_processing_time_temporal_join_is_a_join_with_the_current_rows(catalog):
    p = plan(catalog, "SELECT c.id, r.rate FROM clicks AS c JOIN rates FOR SYSTEM_TIME AS OF c.pt AS r ON c.grp = r.grp")
    assert p.changelog.keyed and not isinstance(p.changelog.stage, Temporal)


@pytest.mark.parametrize(
    "sql, message",
    [
        ("SELECT e.id FROM events AS e JOIN rates FOR SYSTEM_TIME AS OF e.id AS r ON e.grp = r.grp", "AS OF e.id"),
        ("SELECT e.id FROM events AS e JOIN cdc FOR SYSTEM_TIME AS OF e.ts AS c ON e.grp = c.grp", "not a versioned table"),
        ("SELECT r.rate FROM rates AS r JOIN rates FOR SYSTEM_TIME AS OF r.at AS q ON r.grp = q.grp", "not append-only"),
        ("SELECT e.grp, COUNT(*) FROM events AS e JOIN rates FOR SYSTEM_TIME AS OF e.ts AS r ON e.grp = r.grp GROUP BY e.grp",
         "GROUP BY over an event-time temporal join"),
    ],
)
def test_temporal_joins_flink_cannot_run_are_refused(catalog, sql, message):
    with pytest.raises(UnsupportedFeatureError, match=message):
        plan(catalog, sql)


def test_a_star_over_a_changelog_is_every_column_of_the_tables_read(catalog):
    p = plan(catalog, "SELECT * FROM users")
    assert p.changelog.inputs[0].columns == ["uid", "accountId", "fullName"]
    joined = plan(catalog, "SELECT * FROM users u JOIN colors c ON u.uid = c.userUid").changelog
    assert [i.columns for i in joined.inputs] == [["uid", "accountId", "fullName"], ["userUid", "color"]]
    assert "`c__color` AS `color`" in joined.sql


def test_in_a_subquery_is_a_semi_join_whose_table_adds_no_columns(catalog):
    p = plan(catalog, "SELECT * FROM events WHERE grp IN (SELECT grp FROM cdc WHERE v > 3) AND id > 0")
    cl = p.changelog
    assert p.path == "changelog"
    events, sub = cl.inputs
    assert (events.key, sub.join, sub.key, sub.columns) == (["grp"], "semi", ["grp"], [])
    assert sub.filter == "`v` > 3" and sub.table.name == "cdc"
    assert "`__in1__" not in cl.sql and "`events__id` > 0" in cl.sql, "the subquery's columns are not in the result"
    assert p.output != APPEND_ONLY, "cdc's rows can be deleted, and take their matches with them"
    appended = plan(catalog, "SELECT id FROM events WHERE grp IN (SELECT grp FROM clicks)")
    assert "semi or anti join" in appended.reason
    assert appended.output == APPEND_ONLY, "append-only rows with append-only matches are never taken back"
    assert any("IN/EXISTS subquery of events" in line for line in appended.changelog.describe())


def test_an_in_subquery_becomes_a_semi_join_in_the_tree_itself_with_its_conditions_in_on():
    from shell.planner.rules.in_exists import as_joins
    from shell.sql.parse import parse_query

    table = TableDef(name="cdc", columns=[Column("grp", "STRING"), Column("v", "INT")])
    joined = as_joins(parse_query("SELECT * FROM events WHERE grp IN (SELECT grp FROM cdc WHERE v > 3)"),
                      {"cdc": table})
    join = joined.args["joins"][0]
    assert (join.kind, join.sql()) == ("SEMI", 'SEMI JOIN cdc AS __in1 ON grp = __in1.grp AND "__in1"."v" > 3')
    assert set(join.args) <= {"this", "on", "kind"}, "no state passed through attributes of the node"


@pytest.mark.parametrize("written", ["LEFT SEMI JOIN", "SEMI JOIN", "LEFT ANTI JOIN", "ANTI JOIN"])
def test_a_semi_or_anti_join_written_by_hand_is_refused_as_flink_refuses_it(written):
    from shell.errors import SqlSyntaxError
    from shell.sql.parse import parse_script

    with pytest.raises(SqlSyntaxError) as refused:
        parse_script(f"SELECT * FROM a {written} b ON a.x = b.x;")
    assert "is not Flink SQL" in str(refused.value) and "EXISTS" in str(refused.value)


def test_an_in_subquery_with_a_condition_of_its_own_beside_a_join_on_another_key_is_split(catalog):
    p = plan(catalog, "SELECT u.uid, c.color FROM users u JOIN colors c ON u.uid = c.userUid "
                      "WHERE u.accountId IN (SELECT grp FROM cdc WHERE v > 3)")
    outer, sub = p.changelog.inputs
    assert (sub.join, sub.filter) == ("semi", "`v` > 3") and outer.plan is not None, "the join is a stage below"


def test_in_and_exists_over_a_view_join_the_views_rows_as_a_stage_of_their_own(catalog):
    p = plan(catalog, "SELECT uid FROM users WHERE accountId IN (SELECT accountId FROM users_per_account WHERE n > 1)")
    users, sub = p.changelog.inputs
    assert (sub.join, sub.key, users.key) == ("semi", ["__key0"], ["accountId"])
    assert sub.plan is not None and "> 1" in sub.plan.sql, "the subquery's own condition filters the view's rows"
    q = plan(catalog, "SELECT uid FROM users u WHERE NOT EXISTS (SELECT 1 FROM named_users v WHERE v.uid = u.uid)")
    assert q.changelog.inputs[1].join == "anti" and q.changelog.inputs[1].plan is not None


def test_exists_is_a_semi_join_and_not_exists_an_anti_join_on_the_correlated_columns(catalog):
    p = plan(catalog, "SELECT c.color FROM colors c WHERE EXISTS (SELECT 1 FROM users WHERE users.uid = c.userUid "
                      "AND accountId = 'a')")
    colors, sub = p.changelog.inputs
    assert (colors.key, sub.join, sub.key, sub.filter) == (["userUid"], "semi", ["uid"], "`accountId` = 'a'")
    q = plan(catalog, "SELECT id FROM events e WHERE NOT EXISTS (SELECT 1 FROM clicks k WHERE e.grp = k.grp)")
    assert q.changelog.inputs[1].join == "anti" and q.output != APPEND_ONLY, "a row goes when its first match comes"


@pytest.mark.parametrize("sql, error, message", [
    ("SELECT id FROM events WHERE grp NOT IN (SELECT grp FROM cdc)", UnsupportedFeatureError, "grp NOT IN"),
    ("SELECT id FROM events WHERE EXISTS (SELECT 1 FROM cdc)", UnsupportedFeatureError, "without a condition"),
    ("SELECT id FROM events e WHERE EXISTS (SELECT 1 FROM cdc WHERE cdc.v > e.id)", UnsupportedFeatureError,
     "between the subquery and the outer query"),
    ("SELECT id, grp IN (SELECT grp FROM cdc) FROM events", UnsupportedFeatureError, "the subquery in"),
    ("SELECT id FROM events WHERE grp IN (SELECT grp FROM cdc) OR id = 1", UnsupportedFeatureError,
     "the subquery in"),
    ("SELECT id FROM events WHERE grp IN (SELECT nope FROM cdc)", CatalogError, "no column 'nope'"),
    ("SELECT id FROM events WHERE UPPER(grp) IN (SELECT grp FROM cdc)", UnsupportedFeatureError,
     r"'UPPER\(grp\) IN \(SELECT \.\.\)'"),
    ("SELECT color FROM cheeses WHERE userUid IN (SELECT userUid FROM colors)", CatalogError,
     "unknown column 'color'"),
])  # fmt: skip
def test_subqueries_the_changelog_path_cannot_run_are_refused_with_the_reason(catalog, sql, error, message):
    with pytest.raises(error, match=message):
        plan(catalog, sql)


def test_order_by_with_limit_is_a_top_n_over_all_rows_with_its_where_as_a_filter(catalog):
    p = plan(catalog, "SELECT * FROM users WHERE fullName <> '' ORDER BY fullName DESC LIMIT 3")
    cl = p.changelog
    assert p.path == "changelog" and isinstance(cl.stage, Rank) and cl.stage.limit == 3
    assert cl.stage.order == [("users__fullName", True, False)]
    (source,) = cl.inputs
    assert source.key == [] and source.filter == "`fullName` <> ''", "one ranking of every row, filtered first"
    assert "__rownum" not in cl.sql.replace("`__rownum` <= 3", ""), "the row number is not a column of the result"
    appended = plan(catalog, "SELECT id, v FROM events ORDER BY v LIMIT 2")
    assert appended.path == "changelog" and "ORDER BY with LIMIT" in appended.reason
    with pytest.raises(UnsupportedFeatureError, match="ORDER BY without LIMIT"):
        plan(catalog, "SELECT id, v FROM events ORDER BY v")


def test_a_where_inside_a_top_n_or_before_a_stage_aggregate_filters_the_rows_first(catalog):
    p = plan(catalog, """SELECT uid FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY uid ORDER BY fullName) AS rn
                         FROM users WHERE accountId = 'a') WHERE rn = 1""")
    assert p.changelog.inputs[0].filter == "`accountId` = 'a'"
    q = plan(catalog, "SELECT uid, MIN(fullName) AS m FROM users WHERE accountId <> 'x' GROUP BY uid")
    assert isinstance(q.changelog.stage, Aggregation) and q.changelog.inputs[0].filter == "`accountId` <> 'x'"
    with pytest.raises(CatalogError, match="unknown column 'nope'"):
        plan(catalog, "SELECT uid FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY uid ORDER BY uid) AS rn FROM users "
                      "WHERE nope = 1) WHERE rn = 1")


# ---- chained stages (planner/stage_split.py) --------------------------------------------------------------------


def stage_tree(p) -> list:  # noqa: ANN001 - a Plan or a ChangelogPlan
    """Each stage of a plan as (its inputs' names, their keys), the stages below first."""
    cl = getattr(p, "changelog", p)
    below = [s for i in cl.inputs if i.plan is not None for s in stage_tree(i.plan)]
    return below + [[(i.table.name, i.key) for i in cl.inputs]]


def test_joins_on_another_key_chain_a_stage_per_key(catalog):
    p = plan(catalog, "SELECT u.uid, h.cheese FROM users u JOIN colors c ON u.uid = c.userUid "
                      "JOIN cheeses h ON c.color = h.userUid")
    assert stage_tree(p) == [[("users", ["uid"]), ("colors", ["userUid"])],
                             [("__s1", ["c__color"]), ("cheeses", ["userUid"])]]
    first = p.changelog.inputs[0]
    assert first.kind == CHANGELOG and first.columns == ["u__uid"]  # the key c__color is not carried as a column
    assert "  | stage input 1: colors AS c" in "\n".join(p.changelog.describe())


def test_an_upsert_table_joined_outside_its_key_is_made_a_changelog_first(catalog):
    p = plan(catalog, "SELECT u.uid, c.color FROM users u JOIN colors c ON u.accountId = c.userUid")
    assert stage_tree(p) == [[("users", ["uid"])], [("u", ["accountId"]), ("colors", ["userUid"])]]
    normalized = p.changelog.inputs[0].plan
    assert normalized.inputs[0].kind == UPSERT_INPUT and normalized.output == RETRACT and normalized.keyed


def test_min_over_an_upsert_table_grouped_outside_its_key_groups_its_changelog(catalog):
    p = plan(catalog, "SELECT accountId, MIN(fullName) AS m FROM users GROUP BY accountId")
    assert stage_tree(p) == [[("users", ["uid"])], [("users", ["accountId"])]]
    assert p.changelog.stage.group == ["users__accountId"] and p.changelog.output == RETRACT


def test_max_over_a_join_groups_the_joined_rows_in_a_stage_of_their_own(catalog):
    p = plan(catalog, "SELECT c.color, MAX(u.fullName) AS m FROM users u JOIN colors c ON u.uid = c.userUid "
                      "GROUP BY c.color")
    assert stage_tree(p) == [[("users", ["uid"]), ("colors", ["userUid"])], [("__s1", ["c__color"])]]
    assert [f[1:3] for f in p.changelog.stage.functions] == [("max", "__s1__u__fullName")]


def test_a_count_after_a_join_on_another_key_is_spark_s_aggregation_over_the_chain(catalog):
    p = plan(catalog, "SELECT u.accountId, COUNT(*) AS n FROM colors c JOIN users u ON c.userUid = u.uid "
                      "JOIN cheeses h ON u.accountId = h.userUid GROUP BY u.accountId")
    assert p.changelog.output == UPSERTS and p.changelog.key == ["accountId"]
    assert stage_tree(p)[-1] == [("__s1", ["u__accountId"]), ("cheeses", ["userUid"])]


def test_a_semi_join_on_another_key_runs_after_the_joins_before_it(catalog):
    p = plan(catalog, "SELECT e.id FROM events e JOIN cdc c ON e.grp = c.grp WHERE e.id IN (SELECT id FROM clicks)")
    assert stage_tree(p) == [[("events", ["grp"]), ("cdc", ["grp"])], [("__s1", ["e__id"]), ("clicks", ["id"])]]
    assert p.changelog.inputs[1].join == "semi"


def test_an_aggregating_subquery_joined_to_a_table_is_a_stage_that_gives_old_rows_back(catalog):
    p = plan(catalog, "SELECT u.uid, t.n FROM users u JOIN "
                      "(SELECT grp, COUNT(*) AS n FROM cdc GROUP BY grp) t ON u.accountId = t.grp")
    sub = p.changelog.inputs[1].plan
    assert isinstance(sub.stage, Aggregation) and sub.output == RETRACT  # a native update-mode count has no old rows
    assert stage_tree(p)[-1] == [("u", ["accountId"]), ("t", ["grp"])]


def test_a_column_two_joined_tables_have_is_ambiguous_before_any_split(catalog):
    with pytest.raises(CatalogError, match="'userUid' is ambiguous"):
        plan(catalog, "SELECT userUid FROM colors c JOIN cheeses h ON c.userUid = h.userUid "
                      "JOIN users u ON c.color = u.uid")


# ---- views and WITH (planner/inline_views.py) -------------------------------------------------------------------


def test_a_view_of_a_view_over_an_upsert_table_is_planned_as_stages(catalog):
    p = plan(catalog, "SELECT c.color, a.n FROM users_per_account a JOIN colors c ON a.accountId = c.userUid")
    counted = p.changelog.inputs[0].plan
    assert isinstance(counted.stage, Aggregation) and counted.output == RETRACT  # its old rows go back into the join
    assert [i.table.name for i in counted.inputs] == ["named_users"]
    filtered = counted.inputs[0].plan  # the filtered upsert table: a stage that turns a failing row into a delete
    assert filtered.inputs[0].table.name == "users" and filtered.keyed


def test_with_is_planned_as_the_subqueries_it_names(catalog):
    p = plan(catalog, "WITH per AS (SELECT grp, MAX(v) AS m FROM cdc GROUP BY grp), "
                      "top AS (SELECT grp, m FROM per WHERE m > 1) SELECT t.grp, t.m FROM top t")
    assert p.path == "changelog" and p.changelog.inputs[0].plan is not None


def test_an_aggregate_over_a_view_of_append_only_rows_reads_it_as_spark_runs_it(catalog):
    p = plan(catalog, "SELECT grp, COUNT(*) AS n FROM red_events GROUP BY grp")
    assert p.path == "changelog" and p.changelog.inputs[0].derived is not None and p.views == []


def test_a_query_over_views_that_only_appends_stays_native_with_its_views(catalog):
    p = plan(catalog, "SELECT id FROM red_events WHERE grp = 'a'")
    assert p.path == NATIVE and [name for name, _ in p.views] != []


def test_a_subquery_that_aggregates_without_a_window_takes_the_changelog_path(catalog):
    p = plan(catalog, "WITH c AS (SELECT grp, COUNT(*) AS n FROM events GROUP BY grp) SELECT grp, n FROM c")
    assert p.path == "changelog"


def test_order_by_limit_over_a_join_ranks_the_joined_rows_as_a_stage_of_their_own(catalog):
    p = plan(catalog, "SELECT u.uid, c.color FROM users u JOIN colors c ON u.uid = c.userUid ORDER BY c.color LIMIT 3")
    assert p.changelog.stage.limit == 3 and p.changelog.inputs[0].key == []  # one key: all rows
    assert stage_tree(p)[0] == [("users", ["uid"]), ("colors", ["userUid"])]


def test_a_top_n_ranked_by_an_aggregate_ranks_the_aggregate_s_output_column(catalog):
    p = plan(catalog, "SELECT grp, n FROM (SELECT grp, COUNT(*) AS n, ROW_NUMBER() OVER "
                      "(ORDER BY COUNT(*) DESC) AS rn FROM cdc GROUP BY grp) WHERE rn <= 2")
    below = p.changelog.inputs[0].plan
    assert isinstance(below.stage, Aggregation)
    assert [o[0] for o in p.changelog.stage.order] == ["__ranked__n"]


def test_union_all_of_changelogs_is_their_weighted_rows_together_under_the_first_branch_s_names(catalog):
    p = plan(catalog, "SELECT uid AS k, accountId AS v FROM users UNION ALL SELECT userUid, color FROM colors")
    cl = p.changelog
    assert isinstance(cl.stage, UnionAll) and not cl.keyed and [i.columns for i in cl.inputs] == [["k", "v"], ["k", "v"]]
    assert all(i.plan is not None for i in cl.inputs)  # each branch normalizes its upsert table
    assert "union all" in "\n".join(cl.describe())


def test_union_all_of_append_only_tables_grows_only_and_union_distinct_groups(catalog):
    grows = plan(catalog, "SELECT id FROM events UNION ALL SELECT id FROM clicks WHERE grp = 'a'")
    assert grows.path == NATIVE
    distinct = plan(catalog, "SELECT id FROM events UNION SELECT id FROM clicks").changelog
    assert distinct.output == UPSERTS and distinct.inputs[0].derived is not None  # Spark's UNION ALL, then grouped


def test_a_union_with_other_numbers_of_columns_is_an_error(catalog):
    with pytest.raises(CatalogError, match="different numbers of columns"):
        plan(catalog, "SELECT uid, accountId FROM users UNION ALL SELECT userUid FROM colors")


def test_select_distinct_in_a_subquery_is_a_grouping_that_gives_old_rows_back(catalog):
    p = plan(catalog, "SELECT d.grp, c.color FROM (SELECT DISTINCT grp FROM cdc) d JOIN colors c ON d.grp = c.userUid")
    below = p.changelog.inputs[0].plan
    assert isinstance(below.stage, Aggregation) and below.stage.functions == [] and below.output == RETRACT



def test_a_comma_join_takes_its_keys_from_the_where(catalog):
    p = plan(catalog, "SELECT u.uid, c.color FROM users u, colors c WHERE u.uid = c.userUid AND c.color <> 'red'")
    assert stage_tree(p) == [[("users", ["uid"]), ("colors", ["userUid"])]]
    assert "WHERE" in p.changelog.sql and "<> 'red'" in p.changelog.sql


def test_an_inner_join_s_other_conditions_filter_the_joined_rows(catalog):
    p = plan(catalog, "SELECT u.uid FROM users u JOIN colors c ON u.uid = c.userUid AND c.color <> u.fullName")
    assert stage_tree(p) == [[("users", ["uid"]), ("colors", ["userUid"])]]
    assert "<> `u__fullName`" in p.changelog.sql


def test_a_left_join_s_condition_on_the_joined_table_filters_that_table_first(catalog):
    p = plan(catalog, "SELECT u.uid, c.color FROM users u LEFT JOIN colors c ON u.uid = c.userUid AND c.color = 'red'")
    right = p.changelog.inputs[1]
    assert right.join == "left" and right.plan is not None and "'red'" in right.plan.sql


def test_explain_draws_the_operators_with_their_changelog_modes_as_flink_does(catalog):
    p = plan(catalog, "SELECT u.accountId, COUNT(*) AS n FROM users u JOIN colors c ON u.accountId = c.userUid "
                      "GROUP BY u.accountId")
    assert p.changelog.operator_tree() == [
        "GroupAggregate(upsertKey=[accountId], changelogMode=[I,UA,D])",
        "+- Join(joinType=[InnerJoin], key=[accountId = userUid], changelogMode=[I,D])",
        "   :- Subquery(alias=[u], fields=[accountId], changelogMode=[I,D])",
        "   :  +- Calc(changelogMode=[I,D])",
        "   :     +- ChangelogNormalize(key=[uid], changelogMode=[I,D])",
        "   :        +- TableSourceScan(table=[users], fields=[accountId], changelogMode=[UA,D])",
        "   +- TableSourceScan(table=[colors], fields=[], changelogMode=[UA,D])",
    ]
    assert "  +- Join(joinType=[InnerJoin]" in "\n".join(p.describe())


def test_rollup_is_the_union_all_of_a_group_by_per_grouping_set(catalog):
    p = plan(catalog, "SELECT grp, id, COUNT(*) AS n, GROUPING(id) AS g FROM cdc GROUP BY ROLLUP (grp, id)")
    cl = p.changelog
    assert isinstance(cl.stage, UnionAll) and len(cl.inputs) == 3 and all(isinstance(i.plan.stage, Aggregation) for i in cl.inputs)
    assert [i.plan.stage.group for i in cl.inputs] == [["cdc__grp", "cdc__id"], ["cdc__grp"], []]


def test_cube_and_grouping_sets_expand_to_their_sets():
    from shell.planner.rules.grouping_sets import expanded
    from shell.sql.parse import parse_query

    cube = expanded(parse_query("SELECT a, b, COUNT(*) AS n FROM t GROUP BY CUBE (a, b)"))
    assert cube.sql().count("UNION ALL") == 3 and 'NULL AS "b"' in cube.sql()
    sets = expanded(parse_query("SELECT a, COUNT(*) AS n FROM t GROUP BY c, GROUPING SETS ((a), ())"))
    assert sets.sql() == ('SELECT a AS "a", COUNT(*) AS "n" FROM t GROUP BY c, a UNION ALL '
                          'SELECT NULL AS "a", COUNT(*) AS "n" FROM t GROUP BY c')
    assert expanded(parse_query("SELECT a, COUNT(*) AS n FROM t GROUP BY a")) is None



def test_a_subquery_s_columns_keep_their_declared_types_so_avg_of_integers_stays_an_integer(catalog):
    p = plan(catalog, "SELECT auction, AVG(price) AS a FROM bids GROUP BY auction")
    derived = p.changelog.inputs[0]
    assert [(c.name, c.data_type) for c in derived.table.columns] == [("auction", "BIGINT"), ("price", "BIGINT")]
    assert "CAST(AVG(`bids__price`) AS BIGINT)" in p.changelog.sql  # an integer, as Flink's AVG
    nested = plan(catalog, "SELECT q.auction, AVG(q.top) AS a FROM (SELECT auction, MAX(price) AS top FROM bids "
                           "GROUP BY auction) q JOIN colors c ON q.auction = c.userUid GROUP BY q.auction")
    assert "DIV" in nested.changelog.sql


def test_an_over_aggregation_is_an_event_time_stage_keyed_by_its_partition(catalog):
    p = plan(catalog, "SELECT grp, ts, SUM(v) OVER w AS s, COUNT(*) OVER w AS n FROM events WHERE v > 0 "
                      "WINDOW w AS (PARTITION BY grp ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)")
    stage = p.changelog
    assert p.path == "changelog" and p.output == APPEND_ONLY
    assert stage.inputs[0].key == ["grp"] and stage.inputs[0].filter == "`v` > 0"
    assert (stage.stage.time, stage.stage.rows, stage.stage.preceding) == ("events__ts", True, 2)
    assert stage.stage.functions == [("__over0", "sum", "events__v"), ("__over1", "count", None)]
    assert any(line.startswith("+- OverAggregate(partitionBy=[grp]") for line in stage.operator_tree())


@pytest.mark.parametrize("frame,rows,preceding", [
    ("", False, None),
    ("RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND CURRENT ROW", False, 600_000_000),
    ("ROWS UNBOUNDED PRECEDING", True, None),
    ("ROWS BETWEEN CURRENT ROW AND CURRENT ROW", True, 0),
])
def test_over_frames_are_read_as_rows_or_microseconds_before_the_current_row(catalog, frame, rows, preceding):
    p = plan(catalog, f"SELECT id, MAX(v) OVER (PARTITION BY grp ORDER BY ts {frame}) AS m FROM events")
    assert (p.changelog.stage.rows, p.changelog.stage.preceding) == (rows, preceding)


@pytest.mark.parametrize("sql,message", [
    ("SELECT SUM(v) OVER (PARTITION BY grp ORDER BY ts ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM events",
     "the frame 'ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING'"),
    ("SELECT SUM(v) OVER (PARTITION BY grp ORDER BY v) FROM events", "an OVER window ordered by v"),
    ("SELECT SUM(v) OVER (PARTITION BY grp ORDER BY ts), COUNT(*) OVER (ORDER BY ts) FROM events",
     "OVER aggregations over different windows in one SELECT"),
    ("SELECT SUM(v) OVER (PARTITION BY grp ORDER BY id) FROM cdc", "an OVER aggregation over 'cdc', whose rows change"),
    ("SELECT COUNT(id) OVER (PARTITION BY grp ORDER BY pt) FROM clicks", "an OVER window ordered by pt"),
    ("SELECT SUM(v + 1) OVER (PARTITION BY grp ORDER BY ts) FROM events", "'SUM(v + 1)' in an OVER aggregation"),
    ("SELECT SUM(v) OVER w FROM events", "OVER w, a window the WINDOW clause does not define"),
])
def test_over_aggregations_flink_or_the_stage_cannot_run_are_named(catalog, sql, message):
    with pytest.raises((UnsupportedFeatureError, CatalogError), match=re.escape(message)):
        plan(catalog, sql)


def test_a_window_top_n_ranks_each_window_once_as_it_closes_and_is_insert_only(catalog):
    rows = plan(catalog, """SELECT * FROM (
        SELECT id, v, window_start, window_end, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn
        FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn <= 2""")
    assert rows.output == APPEND_ONLY and rows.changelog.grows_only
    rank = rows.changelog.stage
    assert rank.window_end == rows.changelog.inputs[0].stage_column("window_end") and rank.drop_late
    assert any("WindowRank" in line and "[I]" in line for line in tree_lines(rows.changelog))
    aggregated = plan(catalog, """SELECT * FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY n DESC) AS rn FROM (
          SELECT window_start, window_end, grp, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
          GROUP BY window_start, window_end, grp)) WHERE rn <= 1""")
    assert aggregated.output == APPEND_ONLY and aggregated.changelog.stage.window_end and not aggregated.changelog.stage.drop_late
    # partitioned by something else than the window, it is a Top-N that updates (Flink's Rank, not WindowRank)
    updating = plan(catalog, """SELECT * FROM (
        SELECT id, grp, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY v DESC) AS rn
        FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn <= 2""")
    assert updating.output != APPEND_ONLY and updating.changelog.stage.window_end is None


@pytest.mark.parametrize("call", ["STDDEV_POP(v)", "VAR_SAMP(v)", "LISTAGG(grp)", "COLLECT(grp)", "FIRST_VALUE(v)",
                                  "LAST_VALUE(v)", "ARRAY_AGG(v)"])
def test_aggregates_read_as_plain_calls_are_refused_over_rows_that_can_be_taken_back(catalog, call):
    # sqlglot parses these as function calls: Spark would aggregate every version of a changed row
    name = call.split("(")[0]
    with pytest.raises(UnsupportedFeatureError, match=f"{name} over rows that can be updated or deleted"):
        plan(catalog, f"SELECT grp, {call} AS x FROM cdc GROUP BY grp")
    assert plan(catalog, f"SELECT grp, {call} AS x FROM events GROUP BY grp").path is not None  # append-only: runs


def test_a_scalar_subquery_over_changelog_inputs_is_an_input_of_the_stage_not_read_once(catalog):
    # its changes reach the result: its aggregate is joined like any other input (rules/scalar_subqueries.py)
    p = plan(catalog, "SELECT id FROM events WHERE v > (SELECT COUNT(*) FROM users)")
    assert [(i.alias, i.join) for i in p.changelog.inputs] == [("events", ""), ("__sq1", "left")]
    q = plan(catalog, "SELECT uid, (SELECT COUNT(*) FROM colors) AS n FROM users")
    assert [(i.alias, i.join) for i in q.changelog.inputs] == [("users", ""), ("__sq1", "left")]


def test_a_query_over_values_alone_is_static_whatever_it_computes(catalog):
    # no table, so nothing changes: Spark computes the result at once (no keyed stage, no changelog)
    for sql in ("SELECT k, COUNT(*) AS n FROM (VALUES ('a'), ('a'), ('b')) AS t(k) GROUP BY k",
                "SELECT a.k, b.v FROM (VALUES ('a')) AS a(k) LEFT JOIN (VALUES ('a', 1)) AS b(k, v) ON a.k = b.k",
                "SELECT DISTINCT k FROM (VALUES ('a'), ('a')) AS t(k)"):
        p = plan(catalog, sql)
        assert p.path == NATIVE and p.changelog is None and p.bounded, sql


def test_an_in_subquery_that_aggregates_is_a_semi_join_of_its_own_stage(catalog):
    p = plan(catalog, "SELECT id FROM events WHERE grp IN (SELECT grp FROM cdc WHERE v > 0 GROUP BY grp "
                      "HAVING COUNT(*) > 1)")
    outer, semi = p.changelog.inputs
    assert semi.join == "semi" and outer.key == ["grp"] and semi.key == ["__key0"]
    assert isinstance(semi.plan.stage, Aggregation) and semi.plan.output == RETRACT  # the aggregate's old rows too
    assert semi.plan.inputs[0].filter == "`v` > 0"


def test_an_exists_correlated_on_a_grouped_column_joins_on_it(catalog):
    p = plan(catalog, "SELECT e.id FROM events e WHERE NOT EXISTS (SELECT 1 FROM cdc c WHERE c.grp = e.grp "
                      "GROUP BY c.grp HAVING MAX(c.v) > 3)")
    outer, anti = p.changelog.inputs
    assert anti.join == "anti" and anti.key == ["__key0"] and isinstance(anti.plan.stage, Aggregation)


def test_an_exists_correlated_on_a_column_the_subquery_does_not_group_by_is_refused(catalog):
    with pytest.raises(UnsupportedFeatureError, match="the condition on 'c.id' in a subquery with GROUP BY") as refused:
        plan(catalog, "SELECT e.id FROM events e WHERE EXISTS (SELECT 1 FROM cdc c WHERE c.id = e.id "
                      "GROUP BY c.grp HAVING COUNT(*) > 1)")
    assert "group the subquery by id too" in refused.value.hint


def test_aggregates_over_a_window_aggregation_take_the_changelog_path(catalog):
    p = plan(catalog, "SELECT grp, MAX(n) AS busiest FROM (SELECT window_start, window_end, grp, COUNT(*) AS n FROM "
                      "TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
                      "GROUP BY window_start, window_end, grp) GROUP BY grp")
    assert p.path == "changelog" and p.changelog.inputs[0].window_results and p.changelog.reads_window_results


@pytest.mark.parametrize(("sql", "said"), [
    ("SELECT * FROM events FOR SYSTEM_TIME AS OF TIMESTAMP '2026-01-01 00:00:00'", "(time travel) is not supported"),
    ("SELECT e.id FROM events e JOIN rates FOR SYSTEM_TIME AS OF TIMESTAMP '2026-01-01 00:00:00' AS r "
     "ON e.grp = r.grp", "(time travel) is not supported"),
    ("SELECT id FROM events LIMIT 2 OFFSET 3", "OFFSET over a stream"),
    ("SELECT id FROM events OFFSET 3 ROWS FETCH NEXT 2 ROWS ONLY", "OFFSET over a stream"),
])  # fmt: skip
def test_what_would_be_dropped_on_the_way_to_spark_is_refused(catalog, sql, said):
    """The translator drops FOR SYSTEM_TIME AS OF (a join's), and Spark refuses OFFSET in its own words: a time
    travel read would run as a read of the whole table, so both are refused by the planner, with the reason."""
    with pytest.raises(UnsupportedFeatureError) as refused:
        plan(catalog, sql)
    assert said in str(refused.value) and refused.value.hint


def test_offset_over_values_alone_is_no_stream_and_runs(catalog):
    assert plan(catalog, "SELECT * FROM (VALUES (1), (2), (3)) AS t(a) LIMIT 1 OFFSET 1").path == NATIVE


def test_a_using_join_of_changelogs_plans_and_its_unqualified_key_is_ambiguous_as_in_flink(catalog):
    cl = plan(catalog, "SELECT c.userUid, c.color, h.cheese FROM colors AS c JOIN cheeses AS h USING (userUid)").changelog
    assert [i.key for i in cl.inputs] == [["userUid"], ["userUid"]]
    with pytest.raises(CatalogError, match="column 'userUid' is ambiguous"):
        plan(catalog, "SELECT userUid FROM colors AS c JOIN cheeses AS h USING (userUid)")


def test_with_a_state_ttl_a_regular_join_anywhere_takes_the_keyed_stage(catalog):
    from shell.planner.planner import plan_query as plan_with

    def path(sql: str, ttl: bool = True) -> str:
        return plan_with(parse_query(sql), catalog, state_ttl=ttl).path

    join = "SELECT e.id, k.grp FROM events e JOIN clicks k ON e.grp = k.grp"
    assert path(join, ttl=False) == NATIVE  # Spark's stream-stream join, which keeps its rows for ever
    assert path(join) == "changelog"
    assert path("SELECT e.id FROM events e JOIN clicks k USING (id)") == "changelog"
    assert path(f"SELECT * FROM ({join}) AS s WHERE s.id > 1") == "changelog"  # in a FROM subquery
    assert path("SELECT r.id, k.grp FROM red_events r JOIN clicks k ON r.grp = k.grp") == "changelog"  # a view's
    interval = ("SELECT e.id FROM events e JOIN events f ON e.grp = f.grp "
                "WHERE e.ts BETWEEN f.ts - INTERVAL '1' MINUTE AND f.ts")
    assert path(interval) == NATIVE  # an interval join: its time bounds drop rows, and Flink gives it no TTL
    assert path("SELECT id, grp FROM events") == NATIVE


def test_an_outer_join_on_keys_with_other_conditions_is_a_changelog_not_sparks_refusal(catalog):
    # Spark refuses a stream-stream outer join without a watermark; Flink runs it as a regular join
    p = plan(catalog, "SELECT e.id, k.grp FROM events e LEFT JOIN clicks k ON e.grp = k.grp AND k.id <> 3")
    assert p.path == "changelog" and [i.join for i in p.changelog.inputs] == ["", "left"]
    interval = plan(catalog, "SELECT e.id FROM events e LEFT JOIN events f ON e.grp = f.grp "
                             "AND e.ts BETWEEN f.ts - INTERVAL '1' MINUTE AND f.ts")
    assert interval.path == NATIVE  # an interval join: Spark's, its rows dropped by the watermark
