"""Flink's query hints and dynamic table options are refused where they are written, never run as if absent."""

from __future__ import annotations

import pytest

from shell.errors import UnsupportedFeatureError
from shell.planner.query_hints import refuse_hints
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("sql, says", [
    ("SELECT /*+ STATE_TTL('o' = '1d') */ a\nFROM o", "state TTL is not carried out"),
    ("SELECT /*+ BROADCAST(c) */ o.a FROM o JOIN c ON o.a = c.a", "join hint BROADCAST"),
    ("SELECT /*+ LOOKUP('table' = 'c') */ a FROM o", "lookup hints"),
    ("INSERT INTO s SELECT /*+ STATE_TTL('o' = '1d') */ a FROM o", "state TTL"),
])  # fmt: skip
def test_a_query_hint_is_refused(sql, says):
    [statement] = parse_script(sql)
    with pytest.raises(UnsupportedFeatureError) as caught:
        refuse_hints(statement.query)
    assert says in str(caught.value) and caught.value.hint  # positioned at its statement by the session


@pytest.mark.parametrize("sql, line, col", [
    ("SELECT a FROM o\n  /*+ OPTIONS('scan.startup.mode' = 'latest-offset') */", 1, 15),
    ("SELECT a FROM (SELECT a FROM o /*+ OPTIONS('k' = 'v') */) AS t", 1, 30),
])  # fmt: skip
def test_dynamic_table_options_are_refused_at_their_table(sql, line, col):
    [statement] = parse_script(sql)
    with pytest.raises(UnsupportedFeatureError) as caught:
        refuse_hints(statement.query)
    assert "dynamic table options" in str(caught.value) and "ALTER TABLE o SET" in caught.value.hint
    assert (caught.value.line, caught.value.col) == (line, col)


def test_plain_comments_are_left_alone():
    [statement] = parse_script("SELECT /* the amount */ a FROM o /* orders, with OPTIONS(...) elsewhere */")
    refuse_hints(statement.query)  # no error
