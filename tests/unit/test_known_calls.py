"""A call to a function nobody has is refused when the statement is planned, under its name, with the closest name:
in a SELECT, and in a CREATE VIEW (which was accepted, then failed at every query of the view)."""

from __future__ import annotations

import pytest

from shell.errors import CatalogError, UnsupportedFeatureError
from shell.session import Session, SessionOptions
from shell.sql.known_calls import check_calls, known
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit


@pytest.fixture
def session(tmp_path):
    s = Session(SessionOptions(home=tmp_path))
    for statement in parse_script("CREATE TEMPORARY TABLE o (a INT, s STRING) WITH ('connector' = 'datagen');"):
        s.execute(statement)
    yield s
    s.close()


def refusal(session, sql: str) -> CatalogError:
    [statement] = parse_script(sql)
    with pytest.raises(CatalogError) as caught:
        session.execute(statement)  # planned before Spark starts: no Spark in the unit tier
    return caught.value


def test_a_misspelt_function_in_a_select_is_refused_under_its_name_with_the_closest_one(session):
    error = refusal(session, "SELECT a,\n  floorr(a) AS f FROM o;")
    assert error.message == "unknown function 'floorr'" and "did you mean FLOOR?" in error.hint
    assert (error.line, error.col, error.length) == (2, 3, 6)


def test_a_view_calling_an_unknown_function_is_not_created(session):
    error = refusal(session, "CREATE TEMPORARY VIEW v AS SELECT no_such_thing(a) AS x FROM o;")
    assert error.message == "unknown function 'no_such_thing'" and error.col == 35
    assert session.catalog.find("v") is None


def test_flink_spark_and_user_functions_are_known(session):
    for name in ("SPLIT_INDEX", "initcap", "CHAR_LENGTH", "LISTAGG", "array_sort", "Transform", "try_add", "TUMBLE"):
        assert known(name), name
    assert not known("floorr")
    [statement] = parse_script("SELECT SPLIT_INDEX(s, ',', 1), array_sort(array(a)), "
                               "REGEXP_EXTRACT(s, 'x', 0) FROM o")
    check_calls(statement.query)  # no error


def test_a_flink_function_that_is_not_carried_out_says_so_rather_than_suggest_a_spelling(session):
    [statement] = parse_script("SELECT CONVERT_TZ(s, 'UTC', 'Europe/Paris') AS t FROM o;")
    with pytest.raises(UnsupportedFeatureError) as caught:
        session.execute(statement)
    assert caught.value.message == "Flink's function CONVERT_TZ is not supported yet" and caught.value.col == 8


def test_a_python_aggregate_is_known_by_its_spark_name_too(session, tmp_path, monkeypatch):
    """planner/user_aggregates.py renames an aggregate's call to its Spark name before the calls are checked."""
    (tmp_path / "aggs.py").write_text(
        "from shell.udf import udaf\n\n@udaf(result_type='INT')\ndef biggest(values):\n    return max(values)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for statement in parse_script("CREATE TEMPORARY FUNCTION biggest AS 'aggs.biggest' LANGUAGE PYTHON;"):
        session.execute(statement)
    from shell.functions import calls
    from shell.planner.user_aggregates import plan_query

    [statement] = parse_script("SELECT s, biggest(a) AS b FROM o GROUP BY s")
    with calls.active(session.functions):
        plan_query(statement.query, session.catalog)  # no "unknown function 'udf__biggest'"
