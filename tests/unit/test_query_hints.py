"""Flink's query hints that are not carried out are refused where they are written, never run as if absent (the
dynamic table options, which are carried out: test_table_options.py)."""

from __future__ import annotations

import pytest

from shell.errors import UnsupportedFeatureError
from shell.planner.query_hints import refuse_hints
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("sql, says", [
    ("SELECT /*+ STATE_TTL('o' = '1d') */ a\nFROM o", "the STATE_TTL hint is not carried out"),
    ("SELECT /*+ BROADCAST(c) */ o.a FROM o JOIN c ON o.a = c.a", "join hint BROADCAST"),
    ("SELECT /*+ LOOKUP('table' = 'c') */ a FROM o", "lookup hints"),
    ("INSERT INTO s SELECT /*+ STATE_TTL('o' = '1d') */ a FROM o", "STATE_TTL"),
])  # fmt: skip
def test_a_query_hint_is_refused(sql, says):
    [statement] = parse_script(sql)
    with pytest.raises(UnsupportedFeatureError) as caught:
        refuse_hints(statement.query)
    assert says in str(caught.value) and caught.value.hint  # positioned at its statement by the session


def test_an_options_hint_on_a_with_query_is_refused_at_its_name():
    [statement] = parse_script("WITH w AS (SELECT a FROM o)\nSELECT a FROM w /*+ OPTIONS('k' = 'v') */")
    with pytest.raises(UnsupportedFeatureError) as caught:
        refuse_hints(statement.query)
    assert "'w' is a WITH query" in str(caught.value) and (caught.value.line, caught.value.col) == (2, 15)


def test_plain_comments_are_left_alone():
    [statement] = parse_script("SELECT /* the amount */ a FROM o /* orders, with OPTIONS(...) elsewhere */")
    refuse_hints(statement.query)  # no error


@pytest.mark.parametrize("sql", [
    "SELECT /*+ STATE_TTL('o' = '1d') */ a FROM o",
    "INSERT INTO s SELECT /*+ SHUFFLE_HASH(o) */ a FROM o",
    "CREATE TEMPORARY VIEW v AS SELECT /*+ NEST_LOOP(o) */ a FROM o",
    "EXECUTE STATEMENT SET BEGIN INSERT INTO s SELECT /*+ LOOKUP('table' = 'o') */ a FROM o; END",
    "EXPLAIN SELECT /*+ SHUFFLE_MERGE(o) */ a FROM o",
])  # fmt: skip
def test_the_session_refuses_a_hint_in_every_statement_that_plans_a_query_before_anything_runs(sql, tmp_path):
    from shell.session import Session, SessionOptions

    session = Session(SessionOptions(home=tmp_path))
    for ddl in parse_script("CREATE TEMPORARY TABLE o (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');"
                            "CREATE TEMPORARY TABLE s (a INT) WITH ('connector' = 'blackhole');"):
        session.execute(ddl)
    [statement] = parse_script(sql)
    with pytest.raises(UnsupportedFeatureError) as caught:
        session.execute(statement)  # planned before Spark starts: no Spark in the unit tier
    assert "not carried out" in str(caught.value) or "not supported" in str(caught.value)
    assert caught.value.hint  # what to do instead
    session.close()
