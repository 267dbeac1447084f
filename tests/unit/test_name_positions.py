"""An unknown table or column is reported at the name itself (line:col and a caret under it), in the REPL's
buffer and in script mode (`bad.sql:4:8`, not the statement's `bad.sql:3:1`); positions come from the names'
tokens (shell/sql/positions.py), never from another text (a view's stored query)."""

from __future__ import annotations

import io

import pytest

from shell.catalog.model import ViewDef
from shell.catalog.store import Catalog
from shell.errors import CatalogError, UnsupportedFeatureError
from shell.planner.planner import plan_query
from shell.script import ScriptRunner
from shell.session import Session, SessionOptions
from shell.sql import statements as st
from shell.sql.meta import NodeMeta
from shell.sql.parse import parse_query, parse_script, parse_statement
from shell.sql.positions import name_position
from shell.sql.split import split_statements

pytestmark = pytest.mark.unit

DDL = """
CREATE TABLE t (x INT, s STRING, r ROW<a INT, b STRING>, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'datagen');
CREATE TABLE u (x INT, name STRING) WITH ('connector' = 'datagen');
"""


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    store = Catalog()
    for statement in parse_script(DDL):
        store.add(statement.table, temporary=True)  # type: ignore[attr-defined]
    return store


def planning_error(sql: str, catalog: Catalog) -> CatalogError:
    """The error planning the last statement of `sql` raises, with its source line filled in as the shell does."""
    statement = parse_script(sql)[-1]
    assert isinstance(statement, st.Select)
    with pytest.raises(CatalogError) as info:
        plan_query(statement.query, catalog)
    return info.value.with_source(sql)  # type: ignore[return-value]


def caret(error: CatalogError) -> tuple[int | None, int | None, str]:
    lines = error.render().splitlines()
    return error.line, error.col, lines[2].strip() if len(lines) > 2 else ""


@pytest.mark.parametrize(
    ("sql", "line", "col", "underline", "message"),
    [
        ("SELECT nme FROM t;", 1, 8, "^^^", "unknown column 'nme'"),
        ("SHOW TABLES;\nSELECT x,\n  s\nFROM t WHERE nme > 1;", 4, 14, "^^^", "unknown column 'nme'"),
        ("SELECT `n m` FROM t;", 1, 8, "^^^^^", "unknown column 'n m'"),
        ("SELECT t.xx FROM t;", 1, 10, "^^", "unknown column 'xx'"),
        ("SELECT a.x FROM t AS a ORDER BY a.zz;", 1, 35, "^^", "unknown column 'zz'"),
        ("SELECT x FROM t UNION ALL SELECT nam FROM u;", 1, 34, "^^^", "unknown column 'nam'"),
        ("  SELECT x FROM tt;", 1, 17, "^^", "unknown table 'tt'"),
        ("SELECT x FROM t\nJOIN nosuch AS n ON t.x = n.x;", 2, 6, "^^^^^^", "unknown table 'nosuch'"),
        ("SELECT t.x, u.nope FROM t LEFT JOIN u ON t.x = u.x;", 1, 15, "^^^^", "table 'u' has no column 'nope'"),
        ("SELECT s, COUNT(*) FROM t GROUP BY s HAVING SUM(xx) > 1;", 1, 49, "^^", "unknown column 'xx'"),
        ("SELECT s, COUNT(*) FROM t GROUP BY x;", 1, 8, "^", "column 's' is neither in GROUP BY nor inside an aggregate"),
        ("SELECT x FROM t HAVING COUNT(*) > 1;", 1, 8, "^", "column 'x' is neither in GROUP BY nor inside an aggregate"),
        ("SELECT COUNT(*), UPPER(s) FROM t;", 1, 24, "^", "column 's' is neither in GROUP BY nor inside an aggregate"),
        ("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(tss), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end;", 1, 69, "^^^", "unknown column 'tss' in DESCRIPTOR"),
        ("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(x), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end;", 1, 69, "^", "the window's time column 'x' is INT, not a time"),
    ],
)
def test_unknown_names_are_pointed_at(sql, line, col, underline, message, catalog):
    error = planning_error(sql, catalog)
    assert error.message == message
    assert caret(error) == (line, col, underline)


def test_a_close_name_is_suggested(catalog):
    error = planning_error("SELECT nmae FROM u;", catalog)
    assert (error.line, error.col, error.hint) == (1, 8, "did you mean name?")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT x AS y FROM t ORDER BY y LIMIT 3",  # an alias of the SELECT
        "SELECT x AS y, COUNT(*) AS n FROM t GROUP BY y",
        "SELECT x AS a, a + 1 AS b FROM t",  # Spark reads a SELECT's own aliases
        "SELECT r.a, t.r.b FROM t",  # fields of a ROW column
        "SELECT X, S FROM T",  # names ignore case
        "WITH w AS (SELECT x AS y FROM t) SELECT y FROM w",  # a WITH query's columns
        "SELECT y FROM (SELECT x AS y FROM t)",  # a subquery's columns
        "SELECT x FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.x = t.x)",  # a correlated subquery
        "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
        "GROUP BY window_start, window_end",  # a window table function's columns
        "SELECT x + 1, COUNT(*) FROM t GROUP BY x + 1",  # grouped by an expression of it
        "SELECT s, CASE WHEN COUNT(*) > 1 THEN 'many' ELSE s END FROM t GROUP BY s",
        "SELECT COUNT(*) FILTER (WHERE x > 1), MAX(s) FROM t",  # columns inside aggregates
        "SELECT x, SUM(x) OVER (PARTITION BY s ORDER BY ts) FROM t",  # an OVER aggregate groups nothing
        "SELECT s, COUNT(*) FROM t GROUP BY ROLLUP (s, x)",
        "SELECT CAST(x AS STRING), EXTRACT(DAY FROM ts), FLOOR(ts TO HOUR), TIMESTAMPADD(DAY, 1, ts), "
        "CURRENT_TIMESTAMP, LOCALTIMESTAMP, INTERVAL '1' DAY, TRIM(BOTH 'a' FROM s), POSITION('a' IN s) FROM t",
    ],
)
def test_columns_that_are_not_the_tables_are_left_alone(sql, catalog):
    (statement,) = parse_script(sql + ";")
    try:
        plan_query(statement.query, catalog)  # type: ignore[attr-defined]
    except UnsupportedFeatureError:
        pass  # another rule's business (ORDER BY an alias in a Top-N): no name was called unknown



def test_script_mode_names_the_file_line_and_column_of_the_name(tmp_path):
    source = (
        "CREATE TABLE t (x INT, s STRING) WITH ('connector' = 'datagen');\n"
        "-- a view with a typo\n"
        "CREATE VIEW v AS\n"
        "SELECT x, nme\n"
        "FROM t;\n"
    )
    err = io.StringIO()
    session = Session(SessionOptions(home=tmp_path / "home"))
    try:
        code = ScriptRunner(session, out=io.StringIO(), err=err).run_text(source, "bad.sql", wait_for_jobs=False)
    finally:
        session.close()
    assert code != 0
    assert err.getvalue().splitlines()[:3] == ["bad.sql:4:11: unknown column 'nme'", "SELECT x, nme", "          ^^^"]


def test_a_name_in_a_views_stored_query_is_not_pointed_at_in_the_statement(catalog):
    # The view's text is not the statement's: its names carry no positions, and the error keeps none (the shell
    # then points at the statement).
    store = Catalog(objects=dict(catalog.objects))
    store.add(ViewDef(name="v", query_sql="SELECT x FROM gone"), temporary=True)
    error = planning_error("SELECT x FROM v;", store)
    assert error.message == "unknown table 'gone'" and not error.has_position
    assert name_position(parse_query("SELECT x FROM gone").args["from_"].this) is None


def test_positions_are_the_whole_sources_also_for_one_statement_parsed_again():
    source = "SHOW TABLES;\n\n   SELECT a,\n  bb FROM t;"
    statement = split_statements(source)[1]
    for parsed in (parse_script(source)[1], parse_statement(statement)):
        items = parsed.query.expressions  # type: ignore[attr-defined]
        assert [name_position(item) for item in items] == [(3, 11, 1), (4, 3, 2)]


def test_copies_keep_positions_cheaply_and_apart():
    (statement,) = parse_script("SELECT nme FROM t;")
    column = statement.query.expressions[0]  # type: ignore[attr-defined]
    copy = column.copy()
    assert name_position(copy) == name_position(column) == (1, 8, 3)
    assert isinstance(copy.this._meta, NodeMeta) and copy.this._meta is not column.this._meta


def fourth_line_failing(tmp_path, statement: str, u_connector: str) -> str:
    """What a script says when `statement`, its fourth line (indented by two), fails after tables t (datagen) and
    u (`u_connector`), both (x INT, s STRING), are created; the script must fail."""
    source = ("CREATE TEMPORARY TABLE t (x INT, s STRING) WITH ('connector' = 'datagen');\n"
              f"CREATE TEMPORARY TABLE u (x INT, s STRING) WITH ('connector' = '{u_connector}');\n"
              "SHOW TABLES;\n  " + statement + "\n")  # fmt: skip
    err = io.StringIO()
    session = Session(SessionOptions(home=tmp_path / "home"))
    try:
        code = ScriptRunner(session, out=io.StringIO(), err=err).run_text(source, "bad.sql", wait_for_jobs=False)
    finally:
        session.close()
    assert code != 0
    return err.getvalue()


@pytest.mark.parametrize(
    "statement",
    [
        "DESCRIBE ordrs;",
        "DROP TABLE ordrs;",
        "DROP VIEW ordrs;",
        "SHOW CREATE TABLE ordrs;",
        "ALTER TABLE ordrs SET ('rows-per-second' = '5');",
        "INSERT INTO ordrs SELECT x FROM t;",
        "INSERT INTO ordrs VALUES (1);",
        "SHOW ERRORS FOR ordrs;",
        "DELETE FROM ordrs WHERE x = 1;",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO u SELECT x, s FROM t; INSERT INTO ordrs SELECT x FROM t; END;",
    ],
)
def test_the_sessions_unknown_names_are_pointed_at_in_script_mode(tmp_path, statement):
    said = fourth_line_failing(tmp_path, statement, "blackhole")
    line, caret = said.splitlines()[1:3]
    assert said.startswith(f"bad.sql:4:{line.index('ordrs') + 1}: unknown "), said
    assert caret == " " * line.index("ordrs") + "^^^^^", said


@pytest.mark.parametrize(
    ("statement", "pointed", "message"),
    [
        ("CREATE TEMPORARY TABLE k (x INT) WITH ('connector' = 'kafka', 'topic' = 'k', 'format' = 'json',"
         " 'properties.bootstrap.servers' = 'localhost:9092', 'scan.startup.mode' = 'group-offsets');",
         "'scan.startup.mode' = 'group-offsets'", "scan.startup.mode 'group-offsets' is not supported"),
        ("CREATE TEMPORARY TABLE k (x INT) WITH ('connector' = 'datagen', 'rows-per-secnd' = '5');",
         "'rows-per-secnd' = '5'", "unsupported option 'rows-per-secnd'"),
        ("ALTER TABLE t SET ('rows-per-second' = 'many');", "'rows-per-second' = 'many'", "option 'rows-per-second'"),
        ("SELECT x FROM t WHERE x NOT IN (SELECT x FROM u);", "x", "'x NOT IN (SELECT ..)' is not supported"),
        ("SELECT x, s FROM t ORDER BY s, x;", "s", "ORDER BY without LIMIT over a stream is not supported"),
    ],
)
def test_a_refusal_points_at_the_option_or_clause_it_is_about(tmp_path, statement, pointed, message):
    said = fourth_line_failing(tmp_path, statement, "datagen")
    first, line, caret = said.splitlines()[:3]
    at = line.index(pointed, line.index("WHERE") if "NOT IN" in line else line.index("ORDER") if "ORDER" in line else 0)
    assert first.startswith(f"bad.sql:4:{at + 1}: {message}"), said
    assert caret == " " * at + "^" * len(pointed), said
