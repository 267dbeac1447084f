"""CAST and TRY_CAST of text to INT, BIGINT, DECIMAL, DOUBLE, BOOLEAN, DATE and TIMESTAMP with Flink's rules.

Why it exists: Spark's cast reads text by rules of its own, and for much text the answer differs from Flink's with
no error: Spark trims tabs and newlines before a number, a boolean or a timestamp and accepts `'2024-01-05T10:00'`
as a timestamp, where Flink fails; Flink reads `'1.9'` as the INT 1, `'2024-02-30 10:00:00'` as February 29th and
`'00001.50'` as too wide for a DECIMAL(5, 2). Each target type gets one Spark SQL expression that reads the text
as Flink 2.3 does (its BinaryStringDataUtil and DateTimeUtils, checked against Flink itself by the
`cast_text_*` differential cases; docs/differential.md). No Python runs per row.

What Flink does, by target type (text that is not read gives TRY_CAST's NULL, and makes a CAST fail the query):

- TINYINT/SMALLINT/INT/BIGINT: spaces (only U+0020) trimmed at both ends; an optional sign, digits, and an
  optional `.` with digits after it that are dropped (`'1.9'` is 1, `'-1.9'` is -1, `'.'` is 0); nothing else
  (no tabs, no exponent); out of the type's range fails.
- DECIMAL(p, s): spaces, tabs and newlines trimmed; rounded half up to s digits. With p <= 18 and text of at
  most 18 bytes, Flink's own parser: every digit written counts toward p, leading zeros too (`'00001.50'`
  overflows DECIMAL(5, 2)), `'.'` is 0, and one stray character after the number is ignored (`'12a'` is 12).
  Otherwise Java's BigDecimal syntax. A value that rounding carries past p digits (`'999.995'` to DECIMAL(5, 2)):
  Flink gives 1000.00, which the type cannot hold; here NULL (a CAST fails), the one known difference.
- DOUBLE/FLOAT: Java's Double.valueOf: characters up to U+0020 trimmed, `NaN` and `Infinity` spelled exactly so
  (Spark also takes `nan`, `inf`, ...).
- BOOLEAN: not trimmed; true, t, yes, y, 1 and false, f, no, n, 0 in any case.
- DATE: the text up to its first space (when that is not the first character); year, month and day as digits
  separated by `-`, each trimmed; month and day may be left out (`'2024'` is 2024-01-01); an impossible date
  (February 30th) is not read.
- TIMESTAMP(p), TIMESTAMP_LTZ(p): `yyyy-M-d[ H:m:s[.fraction]]` exactly (no trimming, no `T`, seconds
  required), one or two digits per field, up to nine fraction digits, cut (not rounded) to p digits (at most
  Spark's six); a day past the month's end is its last day (2024-02-30 is 2024-02-29) and 24:00:00 is the next
  day's midnight.

The operand must be text. The translator knows that for literals, text functions and catalog columns; for
anything else (a column of a view, say) the expression asks Spark for the operand's type (typeof, folded by
Spark's optimizer) and keeps Spark's own cast for what is not a string.
"""

from __future__ import annotations

import functools
import re

import sqlglot
from sqlglot import exp

from shell.sql.operand_types import ColumnTypes, base_type, column_type

__all__ = ["failed_literal_cast", "text_cast", "text_operand"]

_TEXT = "__flink_text"  # the placeholder of the operand in the templates below
_DONE = "flink_text_cast"  # the meta key of a CAST this module wrote
_INTEGRAL = {exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.BIGINT}
_FLOATING = {exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT}
_TIMESTAMPS = {exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPLTZ}
_TEXT_TYPES = {"STRING", "VARCHAR", "CHAR"}
# Functions whose value is text whatever their arguments (Flink's names, as the parser keeps them).
_TEXT_FUNCTIONS = {
    "UPPER", "LOWER", "TRIM", "LTRIM", "RTRIM", "CONCAT", "CONCAT_WS", "SUBSTRING", "SUBSTR", "REPLACE",
    "REGEXP_REPLACE", "REGEXP_EXTRACT", "LPAD", "RPAD", "INITCAP", "REVERSE", "REPEAT", "SPLIT_INDEX", "JSON_VALUE",
    "DATE_FORMAT", "FROM_UNIXTIME", "OVERLAY", "TRANSLATE",
}
_TEXT_NODES = (exp.Concat, exp.DPipe, exp.Upper, exp.Lower, exp.Trim, exp.Substring, exp.Initcap, exp.ConcatWs)
# Expressions whose type the translator cannot tell and that may be text: Spark is asked (typeof).
_MAYBE_TEXT = (exp.Dot, exp.Bracket, exp.Anonymous, exp.Coalesce, exp.Case, exp.If, exp.Nullif, exp.Min, exp.Max,
               exp.Subquery, exp.Placeholder, exp.Parameter)


def text_operand(node: exp.Expr, types: ColumnTypes) -> bool | None:
    """True when an expression is surely text, False when it surely is not, None when the translator cannot tell."""
    if isinstance(node, exp.Paren):
        return text_operand(node.this, types)
    if isinstance(node, exp.Literal):
        return node.is_string
    if isinstance(node, (exp.Null, exp.Boolean, exp.Predicate, exp.Connector, exp.Not)):
        return False
    if isinstance(node, exp.Cast):
        return node.to.is_type(*exp.DataType.TEXT_TYPES)
    if isinstance(node, _TEXT_NODES):
        return True
    if isinstance(node, exp.Anonymous) and node.name.upper() in _TEXT_FUNCTIONS:
        return True
    if isinstance(node, exp.Column):
        declared = base_type(column_type(node, types))
        return None if declared is None else declared in _TEXT_TYPES
    if isinstance(node, _MAYBE_TEXT):
        return None
    return False  # arithmetic, FLOOR, aggregates of numbers, ...: what the translator itself writes casts of, too


def text_cast(node: exp.Cast, flink_type: exp.DataType, types: ColumnTypes) -> exp.Expr | None:
    """Flink's CAST/TRY_CAST of text for `node` (already mapped: its `to` is Spark's type, `flink_type` the type
    written), or None when Spark's own cast is Flink's too (the operand is not text, or the type is another)."""
    if node.meta.get(_DONE):
        return None
    kind = text_operand(node.this, types)
    if kind is False:
        return None
    rule = _rule(flink_type, node.to)
    if rule is None:
        return None
    template, target = rule
    strict = not isinstance(node, exp.TryCast)
    if kind and strict and isinstance(node.this, exp.Literal):
        # Text written in the statement: a failure Spark can fold, so that VALUES (an inline table, which takes
        # only expressions Spark can fold) may hold it.
        value = _fill(_strict_literal(template, target, node.this.name, node.to), node.this)
    elif kind:
        value = _fill(_strict(template, target) if strict else template, node.this)
    else:
        # Unknown type: Flink's rule when Spark says the value is a string, Spark's cast otherwise (typeof is folded).
        text = exp.Cast(this=node.this.copy(), to=exp.DataType.build("STRING"))
        flink = _fill(_strict(template, target) if strict else template, text)
        spark = node.copy()  # Spark's own CAST/TRY_CAST, its operand and type already mapped
        is_string = exp.EQ(this=exp.Anonymous(this="typeof", expressions=[node.this.copy()]),
                           expression=exp.Literal.string("string"))
        value = exp.If(this=is_string, true=flink, false=spark)
    # A CAST to the type still: what reads the tree after (SUM(DISTINCT CAST(s AS BIGINT)), INT / INT) sees the
    # type, and Spark drops a cast to the type a value has. Marked, so that a second translation leaves it alone.
    typed = exp.Cast(this=value, to=node.to.copy())
    typed.meta[_DONE] = True
    return typed


def _rule(flink_type: exp.DataType, spark_type: exp.DataType) -> tuple[str, str] | None:
    """(Spark SQL template of TRY_CAST over the placeholder, the type's name for messages), or None."""
    kind = flink_type.this
    spark = spark_type.sql(dialect="spark")
    if kind in _INTEGRAL:
        return _integral(spark), spark
    if kind in _FLOATING:
        return _floating(spark), spark
    if kind == exp.DataType.Type.BOOLEAN:
        return _BOOLEAN, "BOOLEAN"
    if kind == exp.DataType.Type.DATE:
        return _DATE, "DATE"
    if kind == exp.DataType.Type.DECIMAL:
        params = [int(p.this.name) for p in flink_type.expressions if isinstance(p.this, exp.Literal)]
        precision = params[0] if params else 10
        scale = params[1] if len(params) > 1 else 0
        if len(params) != len(flink_type.expressions) or not (0 <= scale <= precision <= 38):
            return None
        return _decimal(precision, scale), f"DECIMAL({precision}, {scale})"
    if kind in _TIMESTAMPS:
        params = [int(p.this.name) for p in flink_type.expressions if isinstance(p.this, exp.Literal)]
        precision = params[0] if params else 6
        if len(params) != len(flink_type.expressions):
            return None
        name = "TIMESTAMP_LTZ" if kind == exp.DataType.Type.TIMESTAMPLTZ else "TIMESTAMP"
        return _timestamp(spark, min(precision, 6)), f"{name}({precision})"
    return None


def _strict(template: str, target: str) -> str:
    """CAST: the value, or a failure of the query (Flink's) where TRY_CAST gives NULL for text that is not NULL."""
    message = f"concat('CAST of \\'', {_TEXT}, '\\' to {target} failed: Flink cannot read this text as {target} (TRY_CAST gives NULL)')"
    return f"COALESCE({template}, IF({_TEXT} IS NULL, NULL, raise_error({message})))"


# What Spark says when the cast of `_strict_literal` fails (it quotes the value with \' for each quote in it).
FAILED_LITERAL_CAST = re.compile(r"The value '(CAST of \\'.*? \(TRY_CAST gives NULL\))' of the type")


def failed_literal_cast(spark_message: str) -> str | None:
    """Our message, out of Spark's error for the failure of `_strict_literal`'s cast, or None."""
    found = FAILED_LITERAL_CAST.search(spark_message)
    return found.group(1).replace("\\'", "'").replace("\\\\", "\\") if found else None


def _strict_literal(template: str, target: str, text: str, spark_type: exp.DataType) -> str:
    """CAST of a literal: as `_strict`, failing with a cast of the message itself to the type (ANSI casts fail
    on text they cannot read, and Spark can fold it, where raise_error() it cannot)."""
    message = exp.Literal.string(
        f"CAST of '{text}' to {target} failed: Flink cannot read this text as {target} (TRY_CAST gives NULL)")
    return f"COALESCE({template}, CAST({message.sql(dialect='spark')} AS {spark_type.sql(dialect='spark')}))"


def _fill(template: str, operand: exp.Expr) -> exp.Expr:
    tree = _parsed(template).copy()
    for column in list(tree.find_all(exp.Column)):
        if column.name == _TEXT and not column.table:
            replacement = operand.copy()
            if column is tree:
                return replacement
            column.replace(replacement)
    return tree


@functools.lru_cache(maxsize=256)
def _parsed(template: str) -> exp.Expr:
    tree = sqlglot.parse_one(template, read="spark")
    for cast in tree.find_all(exp.Cast):  # already Spark's casts, with the meaning wanted
        cast.meta[_DONE] = True
    return tree


# --- the rules, as Spark SQL over the placeholder ----------------------------------------------------------------
# Backslashes in these literals are Spark SQL escapes: '\\t' is the two characters \t, which Java's regex reads as
# a tab. X stands for the operand.

X = _TEXT


def _integral(spark_type: str) -> str:
    trimmed = f"trim({X})"  # Spark's trim, like Flink's, removes spaces (U+0020) only
    return (
        f"CASE WHEN {trimmed} RLIKE '^[+-]?[0-9]*([.][0-9]*)?\\\\z' AND {trimmed} NOT IN ('', '+', '-') "
        # the integer part with a 0 in front ('-.5' -> '-0', '.' -> '0'); the fraction is dropped
        f"THEN TRY_CAST(concat(regexp_extract({trimmed}, '^([+-]?)', 1), '0', regexp_extract({trimmed}, '^[+-]?([0-9]*)', 1)) "
        f"AS {spark_type}) END"
    )


def _floating(spark_type: str) -> str:
    # Java's trim (every character up to U+0020); Spark would also trim other white space and read nan, inf, ...
    trimmed = f"regexp_replace({X}, '^[\\\\x00-\\\\x20]+|[\\\\x00-\\\\x20]+\\\\z', '')"
    return (
        f"CASE WHEN {trimmed} RLIKE '(?i)^[+-]?(inf|infinity|nan)\\\\z' AND NOT {trimmed} RLIKE '^[+-]?(Infinity|NaN)\\\\z' "
        f"THEN NULL WHEN {trimmed} RLIKE '^[\\\\p{{javaWhitespace}}\\\\p{{javaISOControl}}]|"
        f"[\\\\p{{javaWhitespace}}\\\\p{{javaISOControl}}]\\\\z' THEN NULL "
        f"ELSE TRY_CAST({trimmed} AS {spark_type}) END"
    )


_BOOLEAN = (
    f"CASE WHEN lower({X}) IN ('true', 't', 'yes', 'y', '1') THEN TRUE "
    f"WHEN lower({X}) IN ('false', 'f', 'no', 'n', '0') THEN FALSE END"
)

# DATE: cut at the first space unless the text starts with one; then y[-m[-d]], each part digits with characters
# up to U+0020 around them (Java's trim of each part).
_W = "[\\\\x00-\\\\x20]*"
_DATE_TEXT = f"IF(instr({X}, ' ') > 1, substring_index({X}, ' ', 1), {X})"
_DATE_SHAPE = f"'^{_W}([0-9]{{1,9}}){_W}(-{_W}([0-9]{{1,9}}){_W}(-{_W}([0-9]{{1,9}}){_W})?)?\\\\z'"


def _date_part(group: int, default: str) -> str:
    return f"COALESCE(CAST({_empty_as_null(f'regexp_extract({_DATE_TEXT}, {_DATE_SHAPE}, {group})')} AS INT), {default})"



def _empty_as_null(value: str) -> str:
    """`NULLIF(value, '')`, spelled so that Spark can fold it (its NULLIF it cannot; see `_within`)."""
    return f"IF({value} = '', NULL, {value})"


def _within(value: str, low: int, high: int) -> str:
    """`value BETWEEN low AND high`, spelled so that Spark can fold it (its BETWEEN it cannot: VALUES, an inline
    table, takes only expressions Spark folds)."""
    return f"({value} >= {low} AND {value} <= {high})"

_DATE = (
    f"CASE WHEN {_DATE_TEXT} RLIKE {_DATE_SHAPE} "
    f"AND {_within(_date_part(1, '0'), 0, 9999)} AND {_within(_date_part(3, '1'), 1, 12)} "
    f"AND {_within(_date_part(5, '1'), 1, 31)} "
    f"THEN TRY_CAST(concat(lpad(CAST({_date_part(1, '0')} AS STRING), 4, '0'), '-', "
    f"lpad(CAST({_date_part(3, '1')} AS STRING), 2, '0'), '-', lpad(CAST({_date_part(5, '1')} AS STRING), 2, '0')) "
    f"AS DATE) END"
)

# TIMESTAMP: Flink's formatter `yyyy-[MM][M]-[dd][d][ [HH][H]:[mm][m]:[ss][s][.fraction(0-9)]]`, resolved SMART.
_TS_SHAPE = (
    "'^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})( ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})([.]([0-9]{0,9}))?)?\\\\z'"
)


def _ts_part(group: int) -> str:
    return f"COALESCE(CAST({_empty_as_null(f'regexp_extract({X}, {_TS_SHAPE}, {group})')} AS INT), 0)"


def _timestamp(spark_type: str, digits: int) -> str:
    year, month, day, hour, minute, second = (_ts_part(g) for g in (1, 2, 3, 5, 6, 7))
    fraction = f"regexp_extract({X}, {_TS_SHAPE}, 9)"
    first = f"TRY_CAST(concat(lpad(CAST({year} AS STRING), 4, '0'), '-', lpad(CAST({month} AS STRING), 2, '0'), '-01') AS DATE)"
    last_day = f"day(last_day({first}))"
    kept = f"rpad(substr({fraction}, 1, {digits}), 6, '0')" if digits > 0 else "'000000'"
    midnight_24 = f"({hour} = 24 AND {minute} = 0 AND {second} = 0 AND {fraction} RLIKE '^0*\\\\z')"
    text = (
        f"concat(lpad(CAST({year} AS STRING), 4, '0'), '-', lpad(CAST({month} AS STRING), 2, '0'), '-', "
        f"lpad(CAST(least({day}, {last_day}) AS STRING), 2, '0'), ' ', "
        f"lpad(CAST(IF({hour} = 24, 0, {hour}) AS STRING), 2, '0'), ':', lpad(CAST({minute} AS STRING), 2, '0'), ':', "
        f"lpad(CAST({second} AS STRING), 2, '0'), '.', {kept})"
    )
    return (
        f"CASE WHEN {X} RLIKE {_TS_SHAPE} AND {year} >= 1 AND {_within(month, 1, 12)} AND {_within(day, 1, 31)} "
        f"AND ({hour} < 24 OR {midnight_24}) AND {minute} < 60 AND {second} < 60 "
        f"THEN TRY_CAST({text} AS {spark_type}) + IF({hour} = 24, INTERVAL 1 DAY, INTERVAL 0 DAY) END"
    )


def _decimal(precision: int, scale: int) -> str:
    spark_type = f"DECIMAL({precision}, {scale})"
    ws = "[ \\\\n\\\\t]"
    trimmed = f"regexp_replace({X}, '^{ws}+|{ws}+\\\\z', '')"
    # Java's BigDecimal(String): Flink's reading of long text and of precisions over 18
    big = (
        f"CASE WHEN {trimmed} RLIKE '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?\\\\z' "
        f"THEN TRY_CAST({trimmed} AS {spark_type}) END"
    )
    if precision > 18:
        return big
    # Flink's own parser of short text (BinaryStringDataUtil.toDecimalFromBytes): leading white space, a sign,
    # digits with at most one point, then either the end, or one more ASCII character (ignored, and an exponent
    # when it is e/E followed by more text) and white space.
    number = "(?<sign>[+-]?)(?<int>[0-9]*)(?:[.](?<frac>[0-9]*))?"
    stray = "[\\\\x00-\\\\x7f&&[^0-9.eE]]"
    exponent = "[eE](?<exp>[+-]?[0-9]*)[\\\\x00-\\\\x7f&&[^0-9]]?"
    shape = f"'^{ws}*(?=[^ \\\\n\\\\t])(?![+-]\\\\z){number}(?:|{stray}|[eE]|{exponent}){ws}*\\\\z'"
    bad_exponent = f"{X} RLIKE '[eE][+-]\\\\z'"  # a sign that ends the text after an e is not read
    # Spark's regexp_extract takes a group's index, not its name: the named groups are numbered in this order
    index = {"sign": 1, "int": 2, "frac": 3, "exp": 4}
    parts = {name: f"regexp_extract({X}, {shape}, {i})" for name, i in index.items()}
    digits = f"(length({parts['int']}) + length({parts['frac']}))"
    written_exp = f"COALESCE(TRY_CAST(IF({parts['exp']} IN ('', '+', '-'), NULL, {parts['exp']}) AS INT), 0)"
    exponent_value = f"({written_exp} - length({parts['frac']}))"
    value = (
        f"TRY_CAST(concat({parts['sign']}, '0', {parts['int']}, '.', {parts['frac']}, '0E', "
        f"CAST({written_exp} AS STRING)) AS {spark_type})"
    )
    short = (
        f"CASE WHEN {X} RLIKE {shape} AND NOT {bad_exponent} "
        f"AND {digits} + {exponent_value} + {scale} <= {precision} THEN {value} END"
    )
    return f"IF(octet_length({X}) > 18, {big}, {short})"
