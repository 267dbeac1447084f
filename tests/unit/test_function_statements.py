"""CREATE/DROP/DESCRIBE FUNCTION ... LANGUAGE PYTHON without Spark: parsing, the registry, persistence across
sessions, the job record, the translation of calls, and a one-line error for each way a function can be wrong."""

from __future__ import annotations

import json

import pytest

from shell.catalog.function_def import FunctionDef
from shell.errors import CatalogError, StreamshellError, UnsupportedFeatureError
from shell.functions import calls
from shell.jobs.record import JobRecord
from shell.results import Message, Rows
from shell.session import Session
from shell.sql import statements as st
from shell.sql.parse import parse_script
from shell.sql.translate import to_spark_sql
from tests.sessions import embedded_options

MODULE = '''
from shell.udf import udf, udtf, udaf

@udf(result_type="BIGINT")
def count_char(text, char):
    return 0 if text is None else text.count(char[0])

@udf(result_type="STRING", func_type="pandas")
def shout(s):
    return s.str.upper()

@udtf(result_types=["STRING", "INT"])
def split_words(line):
    for w in (line or "").split():
        yield w, len(w)

@udtf(result_type="ROW<word STRING>")
def words(line):
    yield from (line or "").split()

@udaf(result_type="DOUBLE")
def median(values):
    return float(values.median())

def plain(x):
    return x

def typed(x):
    return x
typed.result_type = "INT"

NOT_CALLABLE = 3

@udf(result_type="NO_SUCH_TYPE")
def badly_typed(x):
    return x
'''


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "mods" / "unit_udfs.py"
    path.parent.mkdir()
    path.write_text(MODULE)
    return path


def new_session(home, module=None) -> Session:
    settings = {"python.files": str(module)} if module else {}
    return Session(embedded_options(home=home, settings=settings))


def run(session: Session, sql: str):
    result = None
    for statement in parse_script(sql):
        result = session.execute(statement)
    return result


def test_parse_create_drop_and_describe_function():
    (create,) = parse_script("CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS f AS 'a.b.c' LANGUAGE PYTHON;")
    assert create == st.CreateFunction("f", "a.b.c", "PYTHON", if_not_exists=True, temporary=True)
    (drop,) = parse_script("DROP TEMPORARY FUNCTION IF EXISTS f;")
    assert drop == st.DropFunction("f", if_exists=True, temporary=True)
    assert parse_script("DESCRIBE FUNCTION f;") == [st.DescribeFunction("f")]
    assert parse_script("DESC FUNCTION EXTENDED db.f;") == [st.DescribeFunction("db.f", extended=True)]
    assert parse_script("DESCRIBE function;") == [st.Describe("function")], "a table named function"


def test_describe_function_prints_back():
    from shell.sql.dialect import Streamshell

    for text in ("DESCRIBE FUNCTION f", "DESCRIBE FUNCTION EXTENDED f"):
        (statement,) = parse_script(text + ";")
        assert statement.node.sql(dialect=Streamshell) == text


def test_create_show_describe_and_drop(tmp_path, module):
    session = new_session(tmp_path / "home", module)
    assert run(session, "CREATE FUNCTION count_char AS 'unit_udfs.count_char' LANGUAGE PYTHON;") == \
        Message("Function has been created.")
    run(session, "CREATE TEMPORARY FUNCTION split_words AS 'unit_udfs.split_words' LANGUAGE PYTHON;")
    shown = [r[0] for r in run(session, "SHOW FUNCTIONS;").rows]
    assert {"count_char", "split_words", "UPPER"} <= set(shown)
    described = dict(run(session, "DESCRIBE FUNCTION split_words;").rows)
    assert described == {"name": "split_words", "kind": "TABLE", "language": "PYTHON",
                         "target": "unit_udfs.split_words", "result type": "f0 STRING, f1 INT",
                         "temporary": "TRUE", "system function": "FALSE"}
    extended = dict(run(session, "DESCRIBE FUNCTION EXTENDED count_char;").rows)
    assert extended["kind"] == "SCALAR" and extended["result type"] == "BIGINT" and extended["arguments"] == "2"
    assert extended["temporary"] == "FALSE" and extended["vectorised"] == "FALSE"
    assert run(session, "DROP TEMPORARY FUNCTION split_words;") == Message("Function has been removed.")
    assert run(session, "DROP FUNCTION IF EXISTS split_words;") == Message("Function 'split_words' does not exist; skipped.")
    with pytest.raises(CatalogError, match="unknown function 'split_words'"):
        run(session, "DESCRIBE FUNCTION split_words;")


def test_a_persistent_function_survives_a_new_session_and_a_temporary_one_does_not(tmp_path, module):
    home = tmp_path / "home"
    first = new_session(home, module)
    run(first, "CREATE FUNCTION count_char AS 'unit_udfs.count_char' LANGUAGE PYTHON;"
               "CREATE TEMPORARY FUNCTION shout AS 'unit_udfs.shout' LANGUAGE PYTHON;")
    stored = json.loads((home / "catalog" / "functions" / "count_char.json").read_text())
    assert stored["target"] == "unit_udfs.count_char" and stored["language"] == "PYTHON"
    second = new_session(home, module)
    assert second.functions.find("COUNT_CHAR") is not None
    assert second.functions.find("shout") is None
    run(second, "DROP FUNCTION count_char;")
    assert not (home / "catalog" / "functions" / "count_char.json").exists()
    assert new_session(home, module).functions.find("count_char") is None


def test_creating_again_and_another_definition(tmp_path, module):
    session = new_session(tmp_path / "home", module)
    sql = "CREATE TEMPORARY FUNCTION f AS 'unit_udfs.count_char' LANGUAGE PYTHON;"
    run(session, sql)
    assert "unchanged" in run(session, sql).text
    with pytest.raises(CatalogError, match="already exists as 'unit_udfs.count_char'"):
        run(session, "CREATE TEMPORARY FUNCTION f AS 'unit_udfs.typed' LANGUAGE PYTHON;")
    assert "skipped" in run(session, sql.replace("FUNCTION f", "FUNCTION IF NOT EXISTS f")).text
    with pytest.raises(CatalogError, match="function 'f' is temporary"):
        run(session, "DROP FUNCTION f;")


@pytest.mark.parametrize("target, message", [
    ("no_such_module.f", "cannot import module 'no_such_module'"),
    ("unit_udfs.missing", "module 'unit_udfs' has no 'missing'"),
    ("unit_udfs.NOT_CALLABLE", "'unit_udfs.NOT_CALLABLE' is a int, not a callable"),
    ("unit_udfs.plain", "'unit_udfs.plain' has no result type"),
    ("unit_udfs.badly_typed", "result type 'NO_SUCH_TYPE'"),
    ("nodots", "'nodots' is not 'module.name'"),
])
def test_a_wrong_target_is_one_line_error_at_create(tmp_path, module, target, message):
    session = new_session(tmp_path / "home", module)
    with pytest.raises(CatalogError) as caught:
        run(session, f"CREATE FUNCTION f AS '{target}' LANGUAGE PYTHON;")
    assert message in caught.value.message and "\n" not in caught.value.message
    assert caught.value.hint
    assert session.functions.find("f") is None
    assert not (tmp_path / "home" / "catalog" / "functions").exists() or \
        not list((tmp_path / "home" / "catalog" / "functions").iterdir())


def test_a_module_that_fails_to_import_and_a_missing_python_file(tmp_path):
    broken = tmp_path / "broken_mod.py"
    broken.write_text("def f(:\n")
    session = new_session(tmp_path / "home", broken)
    with pytest.raises(CatalogError, match=r"module 'broken_mod' failed to import: SyntaxError"):
        run(session, "CREATE FUNCTION f AS 'broken_mod.f' LANGUAGE PYTHON;")
    with pytest.raises(CatalogError, match="python.files: '/no/such.py' does not exist"):
        run(session, "SET 'python.files' = '/no/such.py'; CREATE FUNCTION g AS 'x.g' LANGUAGE PYTHON;")


def test_other_languages_are_refused(tmp_path):
    session = new_session(tmp_path / "home")
    with pytest.raises(UnsupportedFeatureError, match="LANGUAGE JAVA is not supported"):
        run(session, "CREATE FUNCTION f AS 'com.example.F';")


def test_calls_translate_to_the_registered_names_and_arity_is_checked(tmp_path, module):
    session = new_session(tmp_path / "home", module)
    run(session, "CREATE TEMPORARY FUNCTION count_char AS 'unit_udfs.count_char' LANGUAGE PYTHON;"
                 "CREATE TEMPORARY FUNCTION split_words AS 'unit_udfs.split_words' LANGUAGE PYTHON;"
                 "CREATE TEMPORARY FUNCTION median AS 'unit_udfs.median' LANGUAGE PYTHON;"
                 "CREATE TEMPORARY FUNCTION upper AS 'unit_udfs.typed' LANGUAGE PYTHON;")

    def spark_sql(sql: str) -> str:
        (select,) = parse_script(sql)
        with calls.active(session.functions):
            return to_spark_sql(select.query)

    assert "udf__count_char(`line`, 'c')" in spark_sql("SELECT count_char(line, 'c') FROM t").lower()
    assert "udf__upper" not in spark_sql("SELECT UPPER(line) FROM t").lower(), "a built-in wins over a catalog function"
    lateral = spark_sql("SELECT w.word FROM t, LATERAL TABLE(split_words(t.line)) AS w(word, n)").lower()
    assert "lateral udf__split_words(`t`.`line`) as `w`(`word`, `n`)" in lateral
    outer = spark_sql("SELECT w.word FROM t LEFT JOIN LATERAL TABLE(split_words(t.line)) AS w(word, n) ON TRUE").lower()
    assert "lateral udf__split_words__outer(" in outer and " on " not in outer and "left" not in outer
    assert "udf__median(collect_list(struct(`x`)))" in spark_sql("SELECT median(x) FROM t").lower()
    assert session.functions.used == {"count_char", "split_words", "median"}
    assert session.functions.outer == {"split_words"}
    with pytest.raises(CatalogError, match="function 'count_char' takes 2 arguments, not 1"):
        spark_sql("SELECT count_char(line) FROM t")
    with pytest.raises(StreamshellError, match="table function split_words called as a scalar function"):
        with calls.active(session.functions):
            from shell.planner.user_aggregates import plan_query

            plan_query(parse_script("SELECT split_words(line) FROM t")[0].query, session.catalog)


def test_the_job_record_keeps_the_functions(tmp_path):
    functions = [FunctionDef("f", "m.f", temporary=True).to_dict()]
    record = JobRecord("job1", "n", "INSERT INTO t SELECT 1", "t", "cp", functions=functions)
    folder = tmp_path / "job1"
    folder.mkdir()
    record.write(folder)
    assert JobRecord.read(folder).functions == functions
    session = new_session(tmp_path / "home")
    session.functions.restore(functions)
    assert session.functions.find("F") == FunctionDef("f", "m.f", temporary=True)


def test_a_damaged_function_file_is_a_warning_not_a_failure(tmp_path):
    folder = tmp_path / "home" / "catalog" / "functions"
    folder.mkdir(parents=True)
    (folder / "bad.json").write_text("{not json")
    (folder / "other.json").write_text(json.dumps({"name": "x"}))
    session = new_session(tmp_path / "home")
    assert len([w for w in session.warnings if "functions" in w]) == 2
    assert session.functions.names() == []


def test_show_functions_without_user_functions_lists_the_built_ins(tmp_path):
    rows = run(new_session(tmp_path / "home"), "SHOW FUNCTIONS;")
    assert isinstance(rows, Rows) and ("COUNT",) in rows.rows
