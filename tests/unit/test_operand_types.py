"""Expressions whose Spark form differs from Flink's: INT / INT stays an integer division, CAST(boolean AS STRING)
says TRUE/FALSE (an operand whose type is not surely known keeps Spark's meaning), SIMILAR TO becomes an anchored
RLIKE, COUNT(DISTINCT) the size of a set."""

from __future__ import annotations

import re

import pytest

from shell.errors import UnsupportedFeatureError
from shell.sql import parse_script
from shell.sql.translate import similar_to_regex, to_spark_sql

pytestmark = pytest.mark.unit

TYPES = {"t": {"qty": "INT", "big": "BIGINT NOT NULL", "ratio": "DOUBLE", "flag": "BOOLEAN", "name": "STRING"},
         "u": {"qty": "DOUBLE", "n": "SMALLINT"}}


def spark(sql: str, types=TYPES) -> str:
    [statement] = parse_script(sql)
    return to_spark_sql(statement.query, types)


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("qty / 2", "CAST(`qty` DIV 2 AS INT)"),
        ("big / qty", "CAST(`big` DIV `qty` AS BIGINT)"),
        ("(qty + 1) / ABS(qty)", "CAST((`qty` + 1) DIV ABS(`qty`) AS INT)"),
        ("CAST(ratio AS INT) / 2", "CAST(CAST(`ratio` AS INT) DIV 2 AS INT)"),
        ("COUNT(*) / 2", "CAST(COUNT(*) DIV 2 AS BIGINT)"),
        ("ratio / 2", "`ratio` / 2"),
        ("qty / 2.0", "`qty` / 2.0"),
        ("CAST(qty AS DOUBLE) / 2", "CAST(`qty` AS DOUBLE) / 2"),
        ("unknown_column / 2", "`unknown_column` / 2"),
    ],
)
def test_division_of_integers_stays_integral(expression, expected):
    assert spark(f"SELECT {expression} FROM t") == f"SELECT {expected} FROM `t`"


def test_untyped_translation_keeps_sparks_division():
    assert spark("SELECT qty / 2 FROM t", types=None) == "SELECT `qty` / 2 FROM `t`"


def test_a_column_is_typed_by_the_table_it_is_read_from():
    sql = spark("SELECT a.qty / 2, b.qty / 2, n / 2 FROM t AS a JOIN u AS b ON a.qty = b.n")
    assert sql.startswith("SELECT CAST(`a`.`qty` DIV 2 AS INT), `b`.`qty` / 2, CAST(`n` DIV 2 AS INT)")  # SMALLINT / INT is an INT


def test_an_ambiguous_or_derived_column_is_left_alone():
    # qty is in both t and u: unqualified, it is not surely an INT.
    assert "`qty` / 2" in spark("SELECT qty / 2 FROM t, u")
    # The outer qty comes from a subquery that may have computed anything.
    assert spark("SELECT qty / 2 FROM (SELECT ratio AS qty FROM t) AS s").startswith("SELECT `qty` / 2")


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("CAST(qty > 0 AS STRING)", "UPPER(CAST(`qty` > 0 AS STRING))"),
        ("CAST(flag AS VARCHAR)", "UPPER(CAST(`flag` AS STRING))"),
        ("CAST(TRUE AND flag AS STRING)", "UPPER(CAST(TRUE AND `flag` AS STRING))"),
        ("CAST(qty AS STRING)", "CAST(`qty` AS STRING)"),
        ("CAST(name AS STRING)", "CAST(`name` AS STRING)"),
    ],
)
def test_booleans_cast_to_text_are_upper_case(expression, expected):
    assert spark(f"SELECT {expression} FROM t") == f"SELECT {expected} FROM `t`"


def test_similar_to_is_an_anchored_rlike():
    assert spark("SELECT name SIMILAR TO '[A-Z]{2}-%' FROM t") == (
        "SELECT `name` RLIKE '(?s)^(?:[A-Z]{2}-.*)$' FROM `t`"
    )
    assert spark("SELECT name NOT SIMILAR TO 'a_' FROM t") == "SELECT NOT `name` RLIKE '(?s)^(?:a.)$' FROM `t`"


@pytest.mark.parametrize(
    "pattern, matching, other",
    [
        ("a%", "abc", "ba"),
        ("a_c", "abc", "abbc"),
        ("a.c", "a.c", "abc"),  # a dot is a plain character
        ("(ab|cd)+", "abcdab", "abc"),
        ("[_x]y", "_y", "ay"),  # _ in brackets is itself
        ("x$", "x$", "x"),
    ],
)
def test_similar_to_regex_follows_sql(pattern, matching, other):
    regex = re.compile(f"^(?:{similar_to_regex(pattern)})$", re.S)
    assert regex.match(matching) and not regex.match(other)


def test_similar_to_a_computed_pattern_is_refused():
    with pytest.raises(UnsupportedFeatureError, match="SIMILAR TO"):
        spark("SELECT name SIMILAR TO name FROM t")


def test_count_distinct_is_the_size_of_a_set_without_nulls():
    assert spark("SELECT COUNT(DISTINCT name) FROM t") == "SELECT SIZE(COLLECT_SET(`name`)) FROM `t`"
    two = spark("SELECT COUNT(DISTINCT name, qty) FROM t")
    assert two == ("SELECT SIZE(COLLECT_SET(IF((`name`) IS NULL OR (`qty`) IS NULL, NULL, STRUCT(`name`, `qty`)))) "
                   "FROM `t`")
