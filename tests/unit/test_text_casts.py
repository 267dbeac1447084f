"""CAST/TRY_CAST of text keeps Flink's rules (shell/sql/text_casts.py): which operands count as text, and the Spark
SQL each target type becomes. What the expressions give for each tricky text is checked against Flink itself by the
`cast_text_*` differential cases, and CAST's failures in tests/spark/test_text_cast_failures.py."""

from __future__ import annotations

import pytest

from shell.sql import parse_script
from shell.sql.text_casts import text_operand
from shell.sql.translate import to_spark_expression, to_spark_sql

pytestmark = pytest.mark.unit

TYPES = {"t": {"s": "STRING", "v": "VARCHAR(20)", "n": "INT", "d": "DATE", "x": "DOUBLE"}}


def spark(select_list: str, types=TYPES) -> str:
    [statement] = parse_script(f"SELECT {select_list} FROM t")
    return to_spark_sql(statement.query, types)


def operand(expression: str, types=TYPES):
    [statement] = parse_script(f"SELECT {expression} FROM t")
    return text_operand(statement.query.expressions[0], types)


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("'1.5'", True),
        ("s", True),
        ("v", True),
        ("UPPER(s)", True),
        ("CONCAT(s, 'x')", True),
        ("s || 'x'", True),
        ("CAST(n AS STRING)", True),
        ("n", False),
        ("d", False),
        ("1.5", False),
        ("n + 1", False),
        ("NULL", False),
        ("TRUE", False),
        ("missing", None),  # not a column of t: its type is not known
    ],
)
def test_operands_known_to_be_text_or_not(expression, expected):
    assert operand(expression) is expected


def test_a_column_of_a_subquery_is_of_unknown_type():
    [statement] = parse_script("SELECT CAST(s AS INT) AS i FROM (SELECT s FROM t)")
    out = to_spark_sql(statement.query, TYPES)
    assert "TYPEOF(`s`) = 'string'" in out


@pytest.mark.parametrize("target", ["INT", "BIGINT", "TINYINT", "SMALLINT"])
def test_text_to_an_integer_keeps_the_integer_part(target):
    out = spark(f"TRY_CAST(s AS {target})")
    assert "TYPEOF" not in out and "RAISE_ERROR" not in out
    assert "TRIM(`s`) RLIKE '^[+-]?[0-9]*([.][0-9]*)?\\\\z'" in out  # spaces only; a fraction allowed, then dropped
    assert f"AS {target})" in out


def test_cast_fails_where_try_cast_gives_null():
    out = spark("CAST(s AS INT)")
    assert out.startswith("SELECT CAST(COALESCE(CASE WHEN TRIM(`s`)") and out.endswith(") AS INT) FROM `t`")
    assert "IF(`s` IS NULL, NULL, RAISE_ERROR(CONCAT('CAST of \\'', `s`, '\\' to INT failed: Flink cannot read" in out


def test_an_operand_that_is_not_text_keeps_sparks_cast():
    assert spark("CAST(n AS BIGINT), TRY_CAST(x AS INT), CAST(d AS TIMESTAMP(3))") == (
        "SELECT CAST(`n` AS BIGINT), TRY_CAST(`x` AS INT), CAST(`d` AS TIMESTAMP) FROM `t`"
    )


def test_casts_to_text_and_other_types_are_left_alone():
    assert spark("CAST(s AS STRING), CAST(s AS VARCHAR(5)), CAST(s AS BYTES)") == (
        "SELECT CAST(`s` AS STRING), CAST(`s` AS STRING), CAST(`s` AS BINARY) FROM `t`"
    )


def test_unknown_operand_asks_spark_for_its_type():
    out = to_spark_expression(parse_script("SELECT TRY_CAST(a AS INT) FROM t")[0].query.expressions[0])
    assert out.startswith("CAST(IF(TYPEOF(`a`) = 'string', CASE WHEN TRIM(CAST(`a` AS STRING))")
    assert out.endswith(", TRY_CAST(`a` AS INT)) AS INT)")
    strict = to_spark_expression(parse_script("SELECT CAST(a AS INT) FROM t")[0].query.expressions[0])
    assert strict.endswith(", CAST(`a` AS INT)) AS INT)") and "RAISE_ERROR" in strict


def test_boolean_words_in_any_case_and_untrimmed():
    out = spark("TRY_CAST(s AS BOOLEAN)")
    assert out == (
        "SELECT CAST(CASE WHEN LOWER(`s`) IN ('true', 't', 'yes', 'y', '1') THEN TRUE "
        "WHEN LOWER(`s`) IN ('false', 'f', 'no', 'n', '0') THEN FALSE END AS BOOLEAN) FROM `t`"
    )


def test_double_refuses_sparks_own_spellings_of_nan_and_infinity():
    out = spark("TRY_CAST(s AS DOUBLE), TRY_CAST(s AS FLOAT)")
    assert "'(?i)^[+-]?(inf|infinity|nan)\\\\z'" in out and "'^[+-]?(Infinity|NaN)\\\\z'" in out
    assert "AS DOUBLE) END" in out and "AS FLOAT) END" in out


def test_decimal_reads_short_text_with_flinks_parser_and_long_text_as_bigdecimal():
    short = spark("TRY_CAST(s AS DECIMAL(5, 2))")
    assert short.startswith("SELECT CAST(IF(OCTET_LENGTH(`s`) > 18,")
    assert "<= 5 THEN TRY_CAST(CONCAT(" in short  # every digit written counts toward the precision
    wide = spark("TRY_CAST(s AS DECIMAL(20, 4))")
    assert "OCTET_LENGTH" not in wide and "AS DECIMAL(20, 4)) END" in wide
    assert "AS DECIMAL(10, 0)) END" in spark("TRY_CAST(s AS DECIMAL)")  # Flink's DECIMAL is DECIMAL(10, 0)


def test_date_is_cut_at_the_first_space_and_read_by_parts():
    out = spark("TRY_CAST(s AS DATE)")
    assert "IF(LOCATE(' ', `s`) > 1, SUBSTRING_INDEX(`s`, ' ', 1), `s`)" in out
    assert "<= 9999)" in out and out.endswith("AS DATE) END AS DATE) FROM `t`")


@pytest.mark.parametrize(
    "target, kept",
    [
        ("TIMESTAMP(3)", "RPAD(SUBSTRING(REGEXP_EXTRACT(`s`, {shape}, 9), 1, 3), 6, '0')"),
        ("TIMESTAMP", "RPAD(SUBSTRING(REGEXP_EXTRACT(`s`, {shape}, 9), 1, 6), 6, '0')"),  # TIMESTAMP is TIMESTAMP(6)
        ("TIMESTAMP(9)", "RPAD(SUBSTRING(REGEXP_EXTRACT(`s`, {shape}, 9), 1, 6), 6, '0')"),  # Spark keeps microseconds
        ("TIMESTAMP(0)", "'.', '000000')"),
        ("TIMESTAMP_LTZ(3)", "RPAD(SUBSTRING(REGEXP_EXTRACT(`s`, {shape}, 9), 1, 3), 6, '0')"),
    ],
)
def test_timestamp_fraction_is_cut_to_the_precision_written(target, kept):
    shape = "'^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})( ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})([.]([0-9]{0,9}))?)?\\\\z'"
    out = spark(f"TRY_CAST(s AS {target})")
    assert kept.format(shape=shape) in out
    assert "+ IF(COALESCE(" in out and "= 24, INTERVAL '1' DAY, INTERVAL '0' DAY)" in out


def test_nested_and_repeated_casts_each_translate_once():
    out = spark("TRY_CAST(CAST(n AS STRING) AS INT) AS a, TRY_CAST(s AS INT) + TRY_CAST(s AS INT) AS b")
    assert "TYPEOF" not in out
    assert out.count("TRIM(CAST(`n` AS STRING)) RLIKE") == 1
    assert out.count("TRIM(`s`) RLIKE") == 2


def test_the_result_is_still_a_cast_to_the_type_and_a_second_translation_leaves_it():
    [statement] = parse_script("SELECT SUM(DISTINCT CAST(s AS BIGINT)) AS total, CAST(s AS INT) / 2 AS half FROM t")
    out = to_spark_sql(statement.query, TYPES)
    assert "CAST(NULL AS BIGINT)" in out  # SUM(DISTINCT ...) saw the cast's type
    assert " DIV 2 AS INT)" in out  # so did INT / INT
    [statement] = parse_script("SELECT CAST(s AS INT) AS i FROM t")
    tree = statement.query.copy()
    once = to_spark_sql(tree, TYPES, consume=True)  # the tree now holds the translation
    assert to_spark_sql(tree, TYPES) == once


def test_the_casts_of_text_use_no_function_spark_cannot_fold():
    """VALUES is an inline table in Spark, which takes only expressions Spark can fold: BETWEEN, NULLIF and
    raise_error() it cannot (INSERT INTO t VALUES (CAST('2024-01-02 03:04:05' AS TIMESTAMP)) failed with them)."""
    for target in ("INT", "BIGINT", "DECIMAL(10, 2)", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP(3)"):
        for cast in ("CAST", "TRY_CAST"):
            out = spark(f"{cast}('1' AS {target})").upper()
            assert not any(name in out for name in ("BETWEEN", "NULLIF", "RAISE_ERROR")), (cast, target, out)
