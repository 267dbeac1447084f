"""Flink built-in functions to Spark SQL, by table.

Why it exists: our dialect keeps Flink functions as they were written (exp.Anonymous with the
user's name); translating to Spark looks each name up here. `SAME_IN_SPARK` lists functions
Spark runs unchanged (same name and argument order); `FUNCTION_MAP` rewrites the others. A
function in neither table is passed through unchanged (Spark reports it if unknown), unless it is
a user function (CREATE FUNCTION ... LANGUAGE PYTHON: user_calls.py, shell/functions/calls.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from shell.sql.user_calls import scalar_call

Builder = Callable[[list[exp.Expr]], exp.Expr]

SAME_IN_SPARK = frozenset(
    {
        "TO_TIMESTAMP", "DATE_FORMAT", "CHAR_LENGTH", "CONCAT", "CONCAT_WS", "UNIX_TIMESTAMP",
        "FROM_UNIXTIME", "TO_DATE", "TIMESTAMPADD", "TIMESTAMPDIFF", "IFNULL", "NULLIF",
        "REGEXP_REPLACE", "LOWER", "UPPER", "LTRIM", "RTRIM", "REPLACE", "LPAD", "RPAD",
        "REPEAT", "REVERSE", "SUBSTR", "LOCATE", "INSTR", "ASCII", "CHR", "MD5",
        "SHA1", "ABS", "ROUND", "MOD", "POWER", "SQRT", "EXP", "LN", "LOG10", "LOG2", "SIGN",
        "RAND", "UUID", "YEAR", "QUARTER", "MONTH", "DAYOFMONTH",
        "DAYOFWEEK", "DAYOFYEAR", "HOUR", "MINUTE", "SECOND", "STDDEV_POP", "STDDEV_SAMP",
        "VAR_POP", "VAR_SAMP", "FIRST_VALUE", "LAST_VALUE", "LAG", "LEAD", "NTILE",
        "PERCENT_RANK", "CUME_DIST", "ARRAY_CONTAINS", "ARRAY_DISTINCT", "ARRAY_POSITION",
        "ARRAY_REMOVE", "ARRAY_UNION", "ARRAY_JOIN", "MAP_KEYS", "MAP_VALUES", "SPLIT",
        "REGEXP", "TRANSLATE", "CURRENT_DATABASE", "DATE_ADD", "DATE_SUB", "DATEDIFF",
    }
)


# Flink's aggregate functions that sqlglot parses as plain calls (exp.Anonymous), not as aggregates (exp.AggFunc).
AGGREGATES_AS_CALLS = frozenset(
    {
        "STDDEV_POP", "STDDEV_SAMP", "STDDEV", "VAR_POP", "VAR_SAMP", "VARIANCE", "LISTAGG", "COLLECT",
        "FIRST_VALUE", "LAST_VALUE", "ARRAY_AGG", "BOOL_AND", "BOOL_OR", "JSON_ARRAYAGG", "JSON_OBJECTAGG",
    }
)


def call(name: str, *args: exp.Expr) -> exp.Anonymous:
    """A Spark function call node with exactly this name."""
    return exp.Anonymous(this=name, expressions=list(args))


def _arg(args: list[exp.Expr], index: int) -> exp.Expr | None:
    return args[index] if index < len(args) else None


def _regexp_extract(args: list[exp.Expr]) -> exp.Expr:
    # Flink's default group is 0 (the whole match); Spark's is 1. Without a match Flink gives NULL, Spark ''.
    if len(args) == 2:
        args = [*args, exp.Literal.number(0)]
    matches = call("rlike", args[0].copy(), args[1].copy())
    return call("if", matches, call("regexp_extract", *args), exp.null())


# Flink's INITCAP (Calcite's): a word is a run of ASCII letters and digits; its first letter is upper case, the rest
# lower case; every other character ends a word and stays as it is ("mc-bride" -> "Mc-Bride"). Spark's initcap
# only starts words after a space.
_INITCAP = ("array_join(transform(split(__text, ''), (c, i) -> CASE WHEN c RLIKE '[A-Za-z0-9]' THEN "
            "IF(i = 0 OR NOT (element_at(split(__text, ''), i) RLIKE '[A-Za-z0-9]'), upper(c), lower(c)) ELSE c END), '')")


def _initcap(args: list[exp.Expr]) -> exp.Expr:
    import sqlglot

    template = sqlglot.parse_one(_INITCAP, dialect="spark")
    return template.transform(lambda n: args[0].copy() if isinstance(n, exp.Column) and n.name == "__text" else n)


def any_null(args: list[exp.Expr]) -> exp.Expr:
    """`(a) IS NULL OR (b) IS NULL ...` over copies of the arguments."""
    return exp.or_(*(exp.Is(this=exp.paren(a.copy(), copy=False), expression=exp.null()) for a in args))


def _null_if_any_null(name: str) -> Builder:
    # GREATEST/LEAST: Flink gives NULL when an argument is NULL; Spark skips NULLs.
    def build(args: list[exp.Expr]) -> exp.Expr:
        return call("if", any_null(args), exp.null(), call(name, *args))

    return build


def _truncate(args: list[exp.Expr]) -> exp.Expr:
    # TRUNCATE(x, d): x cut (toward zero) to d decimal places; Spark has no numeric truncate.
    digits = _arg(args, 1) or exp.Literal.number(0)
    scale = call("power", exp.Literal.number(10), digits)
    scaled = exp.Mul(this=exp.paren(args[0].copy(), copy=False), expression=scale)
    positive = exp.GTE(this=exp.paren(args[0].copy(), copy=False), expression=exp.Literal.number(0))
    cut = call("if", positive, call("floor", scaled), call("ceil", scaled.copy()))
    return exp.Div(this=cut, expression=scale.copy())


def _java_regex_quote(text: str) -> str:
    return re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", text)


def _split_index(args: list[exp.Expr]) -> exp.Expr:
    # SPLIT_INDEX(s, sep, i): Flink splits on a literal separator, index from 0, NULL when out of range.
    text, sep, index = (args + [exp.null()] * 3)[:3]
    if isinstance(sep, exp.Literal) and sep.is_string:
        pattern: exp.Expr = exp.Literal.string(_java_regex_quote(sep.name))
    else:
        pattern = call("concat", exp.Literal.string("\\Q"), sep, exp.Literal.string("\\E"))
    position = exp.Add(this=exp.paren(index, copy=False), expression=exp.Literal.number(1))
    return call("try_element_at", call("split", text, pattern), position)


def _listagg(args: list[exp.Expr]) -> exp.Expr:
    separator = _arg(args, 1) or exp.Literal.string(",")
    return call("array_join", call("collect_list", args[0]), separator)


def _to_timestamp_ltz(args: list[exp.Expr]) -> exp.Expr:
    # TO_TIMESTAMP_LTZ(epoch, precision): precision 0 = seconds, 3 = milliseconds.
    precision = _arg(args, 1)
    seconds = isinstance(precision, exp.Literal) and precision.name == "0"
    return call("timestamp_seconds" if seconds else "timestamp_millis", args[0])


def _str_to_map(args: list[exp.Expr]) -> exp.Expr:
    # Flink's defaults are ',' between pairs and '=' between key and value (Spark's: ',' and ':').
    defaults = [exp.Literal.string(","), exp.Literal.string("=")]
    return call("str_to_map", *args, *defaults[len(args) - 1 :])


def _log(args: list[exp.Expr]) -> exp.Expr:
    return call("ln", *args) if len(args) == 1 else call("log", *args)


def _sha2(bits: int) -> Builder:
    return lambda args: call("sha2", args[0], exp.Literal.number(bits))


def _rename(name: str) -> Builder:
    return lambda args: call(name, *args)


FUNCTION_MAP: dict[str, Builder] = {
    "PROCTIME": lambda args: call("current_timestamp"),
    "ROW": lambda args: call("struct", *args),
    "NOW": lambda args: call("current_timestamp"),
    "CURRENT_ROW_TIMESTAMP": lambda args: call("current_timestamp"),
    # Spark never exposes the watermark to expressions: behave as Flink before the first watermark.
    "CURRENT_WATERMARK": lambda args: exp.cast(exp.null(), "TIMESTAMP", dialect="spark"),
    "REGEXP_EXTRACT": _regexp_extract,
    "TRUNCATE": _truncate,
    "GREATEST": _null_if_any_null("greatest"),
    "LEAST": _null_if_any_null("least"),
    "SPLIT_INDEX": _split_index,
    "LISTAGG": _listagg,
    "CHARACTER_LENGTH": _rename("char_length"),
    "CARDINALITY": _rename("size"),
    "COLLECT": _rename("collect_list"),
    "ELEMENT": lambda args: call("element_at", args[0], exp.Literal.number(1)),
    "SHA224": _sha2(224),
    "SHA256": _sha2(256),
    "SHA384": _sha2(384),
    "SHA512": _sha2(512),
    "TO_BASE64": _rename("base64"),
    "INITCAP": _initcap,
    "FROM_BASE64": _rename("unbase64"),
    "HASH_CODE": _rename("hash"),
    "WEEK": _rename("weekofyear"),
    "LOG": _log,
    "TO_TIMESTAMP_LTZ": _to_timestamp_ltz,
    "STR_TO_MAP": _str_to_map,
    "JSON_QUERY": _rename("get_json_object"),
    "JSON_EXISTS": lambda args: exp.Not(this=exp.Is(this=call("get_json_object", *args), expression=exp.null())),
    "RAND_INTEGER": lambda args: exp.cast(
        call("floor", exp.Mul(this=call("rand"), expression=args[-1])), "INT", dialect="spark"
    ),
}


def map_function(name: str, args: list[exp.Expr]) -> exp.Expr | None:
    """The Spark replacement of Flink function `name`, or None to keep the call as written."""
    upper = name.upper()
    user = scalar_call(name, args, builtin=upper in FUNCTION_MAP or upper in SAME_IN_SPARK)  # CREATE FUNCTION's
    if user is not None:
        return user
    builder = FUNCTION_MAP.get(upper)
    return builder(args) if builder else None
