"""The bounded front end (shell/sql/limits.py): nesting and size limits with their own positioned message,
nothing within them meets Python's recursion limit, and 1 MB inputs of each shape get their answer.

Speed is measured by `python -m benchmarks.frontend_limits`, not here: these tests check answers only.
"""

from __future__ import annotations

import sys

import pytest

from shell.catalog.store import Catalog
from shell.errors import InputLimitError, SqlSyntaxError
from shell.planner.planner import plan_query
from shell.sql import limits
from shell.sql import statements as st
from shell.sql.fragments import to_sql
from shell.sql.grammar import StreamshellParser
from shell.sql.parse import parse_script
from shell.sql.translate import to_spark_sql

pytestmark = pytest.mark.unit

MB = 1_000_000


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    store = Catalog()
    ddl = "CREATE TABLE t (x INT, s STRING, a ARRAY<INT>) WITH ('connector' = 'datagen');"
    store.add(parse_script(ddl)[0].table, temporary=True)  # type: ignore[attr-defined]
    return store


def nest(depth: int, opening: str, inner: str, closing: str) -> str:
    return opening * depth + inner + closing * depth


# Each shape nests `depth` levels (as limits.nesting_fault counts them) inside a statement that adds none.
NESTED = {
    "parentheses": lambda d: "SELECT " + nest(d, "(", "1", ")"),
    "subqueries in FROM": lambda d: "SELECT x FROM " + nest(d, "(SELECT x FROM ", "t", ")"),
    "function calls": lambda d: "SELECT " + nest(d, "ABS(", "x", ")") + " FROM t",
    "CASE": lambda d: "SELECT " + nest(d, "CASE WHEN x > 0 THEN ", "1", " ELSE 0 END") + " FROM t",
    "NOT": lambda d: "SELECT s FROM t WHERE " + "NOT " * d + "x > 1",
    "unary minus": lambda d: "SELECT " + "- " * d + "1",
    "NOT (": lambda d: "SELECT s FROM t WHERE " + nest(d, "NOT (", "x > 1", ")"),
    "IN subqueries": lambda d: "SELECT s FROM t WHERE " + nest(d, "x IN (SELECT x FROM t WHERE ", "x > 1", ")"),
    "scalar subqueries": lambda d: "SELECT " + nest(d, "(SELECT ", "1", ")"),
    "array constructors": lambda d: "SELECT " + nest(d, "ARRAY[", "1", "]"),
    "array types": lambda d: "SELECT CAST(NULL AS " + nest(d - 1, "ARRAY<", "INT", ">") + ")",
    "row types": lambda d: "SELECT CAST(NULL AS " + nest(d - 1, "ROW<a ", "INT", ">") + ")",
}


def run_everything(sql: str, catalog: Catalog) -> None:
    """What the shell does with a query before Spark: parse, plan, print back as Flink SQL and as Spark SQL."""
    (statement,) = parse_script(sql + ";")
    assert isinstance(statement, st.Select)
    plan_query(statement.query, catalog)
    to_sql(statement.query, pretty=True)
    to_spark_sql(statement.query)


@pytest.mark.parametrize("shape", sorted(NESTED))
def test_nesting_up_to_the_limit_parses_plans_and_prints_without_meeting_the_recursion_limit(shape, catalog):
    run_everything(NESTED[shape](limits.MAX_NESTING), catalog)


@pytest.mark.parametrize("shape", sorted(NESTED))
def test_one_level_more_is_refused_where_the_limit_is_crossed(shape):
    sql = "\n" + NESTED[shape](limits.MAX_NESTING + 1) + ";"
    with pytest.raises(InputLimitError) as info:
        parse_script(sql)
    error = info.value
    assert error.message == f"nesting deeper than {limits.MAX_NESTING} levels (parentheses, brackets, CASE, types or prefix operators)"
    assert error.hint == limits.NESTING_HINT
    assert error.line == 2 and error.col > 1  # never 1:1: the token that opens the level past the limit
    assert "\n" not in str(error)


def test_the_caret_is_under_the_opening_that_crosses_the_limit():
    sql = "SELECT " + nest(limits.MAX_NESTING + 5, "(", "1", ")") + ";"
    with pytest.raises(InputLimitError) as info:
        parse_script(sql)
    assert (info.value.line, info.value.col) == (1, len("SELECT ") + limits.MAX_NESTING + 1)
    assert info.value.render().splitlines()[2] == " " * (len("SELECT ") + limits.MAX_NESTING) + "^"


def test_closed_levels_do_not_count():
    levels = "SELECT " + " + ".join([nest(150, "(", "1", ")")] * 3) + ";"
    parse_script(levels)


def mixed_chain(operators: int) -> str:
    """`1 + 2 - 3 + 4 ...`: flat text, but each change of operator is one more level of its tree."""
    return "SELECT 1" + "".join(f" {'+-'[i % 2]} {i + 2}" for i in range(operators))


def test_a_chain_of_mixed_operators_up_to_the_tree_limit_is_planned_and_printed(catalog):
    run_everything(mixed_chain(limits.MAX_TREE_DEPTH - 10), catalog)


def test_a_deeper_chain_is_refused_with_its_own_message_inside_the_statement():
    sql = mixed_chain(limits.MAX_TREE_DEPTH + 50) + ";"
    with pytest.raises(InputLimitError) as info:
        parse_script(sql)
    error = info.value
    assert error.message.startswith(f"expression deeper than {limits.MAX_TREE_DEPTH} levels")
    assert error.hint == limits.TREE_HINT
    assert error.line == 1 and len("SELECT ") < error.col <= len(sql)


def test_a_long_chain_of_one_operator_is_one_level(catalog):
    run_everything("SELECT " + " + ".join(["x"] * (3 * limits.MAX_TREE_DEPTH)) + " FROM t", catalog)
    run_everything("SELECT s FROM t WHERE " + " OR ".join(f"x = {i} AND s <> 'a'" for i in range(3000)), catalog)


def test_a_statement_too_deep_for_the_parser_says_where_the_parser_was(monkeypatch):
    # The safety net behind the token count: should a shape slip past it, the parser's RecursionError is still a
    # positioned one-line error (it was "1:1: could not parse this statement (RecursionError: ...)").
    monkeypatch.setattr(limits, "MAX_NESTING", 10**9)
    sql = "SELECT s FROM t WHERE " + nest(5000, "NOT (", "x > 1", ")") + ";"
    with pytest.raises(InputLimitError) as info:
        parse_script(sql)
    assert info.value.message == "statement nested too deeply to parse"
    assert info.value.col > 1


def test_python_s_recursion_limit_leaves_room_for_everything_within_the_limits():
    assert sys.getrecursionlimit() >= limits.RECURSION_LIMIT


def test_nested_array_constructors_are_read_once_per_level(monkeypatch):
    # sqlglot read `ARRAY[...]` as a type first and then again as a value, at every level: 20 levels took minutes.
    calls = []
    original = StreamshellParser._parse_types

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(StreamshellParser, "_parse_types", counted)
    (statement,) = parse_script("SELECT " + nest(14, "ARRAY[", "1", "]") + ";")
    assert len(calls) <= 4 * 14
    assert to_sql(statement.query) == "SELECT " + nest(14, "ARRAY[", "1", "]")


# --- statement size ---------------------------------------------------------------------------------------------


def test_a_statement_over_the_size_limit_is_refused_where_it_crosses_it():
    line = "x + 1 +\n"
    body = line * (limits.MAX_STATEMENT_CHARS // len(line) + 2)
    sql = "SHOW TABLES;\nSELECT " + body + "1;"
    with pytest.raises(InputLimitError) as info:
        parse_script(sql)
    error = info.value
    # The statement starts at line 2, column 1; the limit is crossed `MAX_STATEMENT_CHARS` characters into it.
    into_body = limits.MAX_STATEMENT_CHARS - len("SELECT ")
    assert (error.line, error.col) == (2 + into_body // len(line), into_body % len(line) + 1)
    chars = len("SELECT " + body + "1")
    assert error.message == f"statement longer than {limits.MAX_STATEMENT_CHARS:,} characters: it has {chars:,}"
    assert error.hint == limits.SIZE_HINT
    assert isinstance(error, SqlSyntaxError)


def test_a_statement_at_the_size_limit_parses_and_a_script_may_hold_many():
    literal = "SELECT '" + "a" * (limits.MAX_STATEMENT_CHARS - len("SELECT ''")) + "'"
    assert len(literal) == limits.MAX_STATEMENT_CHARS
    statements = parse_script(f"{literal};\n{literal};\nSELECT 1;")
    assert len(statements) == 3


def test_a_statement_at_the_token_limit_parses_and_one_more_token_is_refused(monkeypatch, catalog):
    monkeypatch.setattr(limits, "MAX_STATEMENT_TOKENS", 50)
    at_limit = "SELECT " + " + ".join(["x"] * 23) + " FROM t"  # 50 tokens: SELECT, 23 x and 22 +, FROM t,
    at_limit += " WHERE x"  # WHERE x
    (statement,) = parse_script(at_limit + ";")
    plan_query(statement.query, catalog)  # type: ignore[attr-defined]
    with pytest.raises(InputLimitError) as info:
        parse_script("SHOW TABLES;\n" + at_limit + " > 1;")
    error = info.value
    assert (error.line, error.col) == (2, len(at_limit) + 2)  # under `>`, the 51st token
    assert error.message == "statement of more than 50 tokens (names, numbers, operators, commas): it has 52"
    assert error.source_line == at_limit + " > 1;"


def test_nesting_is_counted_before_tokens(monkeypatch):
    monkeypatch.setattr(limits, "MAX_STATEMENT_TOKENS", 10)
    with pytest.raises(InputLimitError) as info:
        parse_script("SELECT " + nest(limits.MAX_NESTING + 1, "(", "1", ")") + ";")
    assert info.value.message == limits.nesting_message()


# --- 1 MB of each shape: the answer (time is the benchmark's: benchmarks/frontend_limits.py) --------------------


def one_mb(make_item, head: str, separator: str, tail: str) -> str:
    items, size, i = [], len(head) + len(tail), 0
    while size < MB:
        item = make_item(i)
        items.append(item)
        size += len(item) + len(separator)
        i += 1
    return head + separator.join(items) + tail


def test_1_mb_of_nesting_is_refused_at_the_first_level_past_the_limit():
    sql = "SELECT " + nest(MB // 2 - 8, "(", "1", ")") + ";"
    with pytest.raises(InputLimitError) as info:
        parse_script(sql)
    assert (info.value.line, info.value.col) == (1, len("SELECT ") + limits.MAX_NESTING + 1)


def test_1_mb_flat_expression_is_refused_at_the_first_token_past_the_limit():
    sql = one_mb(lambda i: "1", "SELECT ", "+", ";")
    with pytest.raises(InputLimitError) as info:
        parse_script(sql)
    error = info.value
    # SELECT, then one token per character: token n (n >= 1) is at offset 7 + n - 1.
    assert (error.line, error.col) == (1, len("SELECT ") + limits.MAX_STATEMENT_TOKENS)
    assert error.message == limits.tokens_message(len(sql) - len("SELECT ;") + 1)
    assert error.hint == limits.TOKENS_HINT


def test_1_mb_in_list_parses_and_plans(catalog):
    (statement,) = parse_script(one_mb(str, "SELECT s FROM t WHERE x IN (", ",", ");"))
    plan = plan_query(statement.query, catalog)  # type: ignore[attr-defined]
    assert plan.spark_sql.count(",") > 100_000


def test_1_mb_select_list_parses():
    (statement,) = parse_script(one_mb(lambda i: f"x + {i} AS c{i}", "SELECT ", ", ", " FROM t;"))
    assert len(statement.query.expressions) > 40_000  # type: ignore[attr-defined]


def test_1_mb_string_identifier_and_comment_parse():
    text = "it''s " * (MB // 7)
    (literal,) = parse_script(f"SELECT '{text}';")
    assert literal.query.expressions[0].name == text.replace("''", "'")  # type: ignore[attr-defined]
    name = "n" * MB
    (identifier,) = parse_script(f"SELECT x AS {name} FROM t;")
    assert identifier.query.expressions[0].alias == name  # type: ignore[attr-defined]
    comment = "-- a line of a long comment; with 'quotes'\n" * (MB // 44)
    (commented,) = parse_script(f"SELECT x\n{comment}FROM t;")
    assert commented.source.text.startswith("SELECT x")


def test_1_mb_of_statements_parses_each():
    script = one_mb(lambda i: f"SELECT s, x + {i} FROM t WHERE x > {i};", "", "\n", "")
    assert len(parse_script(script)) == script.count(";")


def test_2_mb_statement_is_refused_after_1_mib():
    sql = one_mb(lambda i: "1", "SELECT ", "+", "") + "+" + one_mb(lambda i: "1", "", "+", ";")
    with pytest.raises(InputLimitError) as info:
        parse_script(sql)
    assert (info.value.line, info.value.col) == (1, limits.MAX_STATEMENT_CHARS + 1)
