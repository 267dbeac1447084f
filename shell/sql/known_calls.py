"""Every function a statement calls is known before anything runs: a name that is neither Flink's (as the
translator maps it), nor Spark's, nor a user function is refused where it is written, with the closest name.

Why it exists: the translator passes a call it does not know to Spark as written, so that Spark's own functions
run. A misspelt name then failed only when Spark analysed the query: a view was created and failed at every later
query, a script stopped at a SELECT with Spark's "Cannot resolve routine ... on search path [...]". Spark's
built-in names come from spark_functions.py, written from Spark itself and checked against it by a Spark test.
"""

from __future__ import annotations

from sqlglot import exp

from shell.errors import CatalogError, UnsupportedFeatureError
from shell.sql.functions import AGGREGATES_AS_CALLS, FUNCTION_MAP, SAME_IN_SPARK
from shell.sql.positions import at_name
from shell.sql.spark_functions import SPARK_FUNCTIONS
from shell.sql.user_calls import user_function_names
from shell.suggestions import closest

# Flink's names the translator reads as syntax rather than calls (window functions and their helpers, DESCRIPTOR,
# table functions' wrappers): each is planned where it may appear, and refused with its reason elsewhere
FLINK_SYNTAX = frozenset({
    "TUMBLE", "HOP", "SESSION", "CUMULATE", "TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME", "TUMBLE_PROCTIME",
    "HOP_START", "HOP_END", "HOP_ROWTIME", "HOP_PROCTIME", "SESSION_START", "SESSION_END", "SESSION_ROWTIME",
    "SESSION_PROCTIME", "DESCRIPTOR", "TABLE", "LATERAL", "UNNEST",
})


# Flink's built-in functions that neither the translator nor Spark has (Flink's reference, "System (Built-in)
# Functions"): said to be Flink's, so that a Flink user is not told a misspelling of theirs
FLINK_NOT_YET = frozenset({
    "CONVERT_TZ", "DATE_FORMAT_TZ", "JSON_STRING", "JSON_QUOTE", "JSON_UNQUOTE", "JSON_ARRAY", "JSON_OBJECT",
    "IS_ALPHA", "IS_DECIMAL", "IS_DIGIT", "ARRAY_SLICE", "ARRAY_CONCAT", "ARRAY_REVERSE", "MAP_UNION",
})


def known(name: str) -> bool:
    upper = name.upper()
    return (upper in FUNCTION_MAP or upper in SAME_IN_SPARK or upper in AGGREGATES_AS_CALLS or upper in FLINK_SYNTAX
            or name.lower() in SPARK_FUNCTIONS or upper in user_function_names())


def check_calls(query: exp.Expr) -> None:
    """Raise for the first call in `query` to a function nobody has, pointed at its name."""
    for call in query.find_all(exp.Anonymous):
        name = call.name
        if not name or known(name):
            continue
        if name.upper() in FLINK_NOT_YET:
            raise at_name(UnsupportedFeatureError(
                f"Flink's function {name.upper()} is not supported yet",
                hint="SHOW FUNCTIONS lists the functions there are; CREATE FUNCTION adds one written in Python"), call)
        candidates = [*FUNCTION_MAP, *SAME_IN_SPARK, *AGGREGATES_AS_CALLS, *SPARK_FUNCTIONS, *user_function_names()]
        match = closest(name, candidates)
        raise at_name(CatalogError(
            f"unknown function '{name}'",
            hint=f"did you mean {match.upper()}? (SHOW FUNCTIONS lists them)" if match else
            "SHOW FUNCTIONS lists the built-in and user functions; CREATE FUNCTION adds one written in Python",
        ), call)
