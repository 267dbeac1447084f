"""Catalogs and databases: Flink's statements, names resolved with catalog and database parts, what persists."""

from __future__ import annotations

import json

import pytest

from shell.catalog.model import Column, TableDef, ViewDef
from shell.catalog.names import dotted, name_parts, object_path
from shell.catalogs import commands
from shell.catalogs.catalogs import Catalogs
from shell.errors import CatalogError, OptionError
from shell.planner.planner import resolve
from shell.results import Message, Rows
from shell.sql.parse import parse_query, parse_script

pytestmark = pytest.mark.unit


def table(name: str, *columns: str) -> TableDef:
    return TableDef(name=name, columns=[Column(c, "BIGINT") for c in columns or ("id",)],
                    options={"connector": "datagen"})  # fmt: skip


def run(catalogs: Catalogs, sql: str):
    """Run catalog statements (and CREATE TEMPORARY TABLE) against `catalogs`; the last result."""
    result = None
    for statement in parse_script(sql):
        handler = commands.HANDLERS.get(type(statement))
        if handler is not None:
            result = handler(catalogs, statement)
        elif type(statement).__name__ == "Show":
            result = commands.show(catalogs, statement)
        elif type(statement).__name__ == "CreateTable":
            result = catalogs.add(statement.table, temporary=statement.temporary)
        else:
            raise AssertionError(f"not a catalog statement: {statement}")
    return result


def listed(result: Rows) -> list[str]:
    assert isinstance(result, Rows), result
    return [row[0] for row in result.rows]


@pytest.mark.parametrize(
    "name, parts",
    [("t", ["t"]), ("db.t", ["db", "t"]), ("c.db.t", ["c", "db", "t"]), ("db.`public.orders`", ["db", "public.orders"]),
     ("c.public/default.topic", ["c", "public/default", "topic"]), ("`a``b`.t", ["a`b", "t"])],
)
def test_a_dotted_name_splits_into_its_parts_and_back(name, parts):
    assert name_parts(name) == parts
    assert name_parts(dotted(parts)) == parts


def test_names_are_made_whole_with_the_current_catalog_and_database():
    assert str(object_path("t", "c", "db")) == "c.db.t"
    assert str(object_path("other.t", "c", "db")) == "c.other.t"
    assert str(object_path("k.other.t", "c", "db")) == "k.other.t"
    with pytest.raises(CatalogError, match="not a table name"):
        object_path("a.b.c.d", "c", "db")


def test_the_built_in_catalog_starts_in_default_database_and_lists_what_flink_lists(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    assert listed(run(catalogs, "SHOW CATALOGS;")) == ["default_catalog"]
    assert listed(run(catalogs, "SHOW CURRENT CATALOG;")) == ["default_catalog"]
    assert listed(run(catalogs, "SHOW DATABASES;")) == ["default_database"]
    assert listed(run(catalogs, "SHOW CURRENT DATABASE;")) == ["default_database"]


def test_databases_hold_their_own_tables_and_qualified_names_reach_them(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    run(catalogs, "CREATE DATABASE sales COMMENT 'orders and such'; CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen');")
    run(catalogs, "USE sales; CREATE TABLE t (a BIGINT, b BIGINT) WITH ('connector' = 'datagen');")
    assert listed(run(catalogs, "SHOW CURRENT DATABASE;")) == ["sales"]
    assert catalogs.table("t").column_names() == ["a", "b"]
    assert catalogs.table("default_database.t").column_names() == ["id"]
    assert catalogs.table("default_catalog.sales.t").column_names() == ["a", "b"]
    assert catalogs.table("default_database.t").name == "default_database.t", "it goes by the name it was given"
    assert listed(run(catalogs, "SHOW TABLES FROM default_database;")) == ["t"]
    assert sorted(listed(run(catalogs, "SHOW DATABASES;"))) == ["default_database", "sales"]
    with pytest.raises(CatalogError, match="unknown database 'sale' in catalog 'default_catalog'") as error:
        catalogs.table("sale.t")
    assert "did you mean" in (error.value.hint or "")


def test_databases_and_their_tables_survive_a_restart(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    run(catalogs, "CREATE DATABASE sales; USE sales; CREATE TABLE orders (id BIGINT) WITH ('connector' = 'datagen');")
    run(catalogs, "CREATE TABLE default_database.kept (id BIGINT) WITH ('connector' = 'datagen');")
    again = Catalogs.open(tmp_path)
    assert again.current_database == "default_database", "a new shell starts where Flink's does"
    assert again.table("sales.orders").column_names() == ["id"]
    assert listed(run(again, "SHOW TABLES;")) == ["kept"]


def test_a_generic_in_memory_catalog_keeps_its_definition_but_not_its_tables(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    run(catalogs, "CREATE CATALOG mem WITH ('type' = 'generic_in_memory');")
    run(catalogs, "USE CATALOG mem;")
    assert listed(run(catalogs, "SHOW CURRENT DATABASE;")) == ["default"]
    run(catalogs, "CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen');")
    assert catalogs.table("mem.default.t")
    assert json.loads((tmp_path / "catalogs" / "mem.json").read_text())["options"] == {"type": "generic_in_memory"}
    again = Catalogs.open(tmp_path)
    assert "mem" in listed(run(again, "SHOW CATALOGS;"))
    assert listed(run(again, "SHOW TABLES IN mem.default;")) == []


def test_a_streamshell_catalog_keeps_its_tables_on_disk(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    run(catalogs, "CREATE CATALOG lake WITH ('type' = 'streamshell'); CREATE DATABASE lake.raw;")
    run(catalogs, "CREATE TABLE lake.raw.events (id BIGINT) WITH ('connector' = 'datagen');")
    again = Catalogs.open(tmp_path)
    assert again.table("lake.raw.events").column_names() == ["id"]
    run(again, "USE lake.raw;")
    assert listed(run(again, "SHOW TABLES;")) == ["events"]
    assert (again.current_catalog, again.current_database) == ("lake", "raw")


def test_drops_refuse_what_would_lose_work_and_say_what_to_do(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    run(catalogs, "CREATE DATABASE d; CREATE TABLE d.t (id BIGINT) WITH ('connector' = 'datagen');")
    with pytest.raises(CatalogError, match="not empty") as error:
        run(catalogs, "DROP DATABASE d;")
    assert "CASCADE" in error.value.hint
    assert isinstance(run(catalogs, "DROP DATABASE d CASCADE;"), Message)
    assert catalogs.find("d.t") is None and not (tmp_path / "catalog" / "databases" / "d").exists()
    assert "does not exist" in run(catalogs, "DROP DATABASE IF EXISTS d;").text
    run(catalogs, "CREATE CATALOG c WITH ('type' = 'generic_in_memory'); USE CATALOG c;")
    with pytest.raises(CatalogError, match="catalog 'c' is in use"):
        run(catalogs, "DROP CATALOG c;")
    with pytest.raises(CatalogError, match="default_catalog cannot be dropped"):
        run(catalogs, "DROP CATALOG default_catalog;")
    run(catalogs, "USE CATALOG default_catalog; DROP CATALOG c;")
    assert not (tmp_path / "catalogs" / "c.json").exists()
    with pytest.raises(CatalogError, match="unknown catalog 'c'"):
        run(catalogs, "USE CATALOG c;")


@pytest.mark.parametrize(
    "sql, message",
    [("CREATE CATALOG c WITH ('type' = 'generic_in_memroy');", "unknown catalog type 'generic_in_memroy'"),
     ("CREATE CATALOG c WITH ('default-database' = 'x');", "catalog 'c' needs a 'type'"),
     ("CREATE CATALOG c WITH ('type' = 'generic_in_memory', 'colour' = 'x');", "unknown option 'colour'")],
)
def test_a_catalog_with_wrong_options_is_refused_and_nothing_is_kept(tmp_path, sql, message):
    catalogs = Catalogs.open(tmp_path)
    with pytest.raises(OptionError, match=message):
        run(catalogs, sql)
    assert listed(run(catalogs, "SHOW CATALOGS;")) == ["default_catalog"]


def test_show_like_filters_as_flink_does(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    for name in ("orders", "order_lines", "users"):
        catalogs.add(table(name))
    assert listed(run(catalogs, "SHOW TABLES LIKE 'order%';")) == ["order_lines", "orders"]
    assert listed(run(catalogs, "SHOW TABLES NOT LIKE 'order%';")) == ["users"]
    assert listed(run(catalogs, "SHOW TABLES LIKE 'user_';")) == ["users"]
    catalogs.add(table("wide", "id", "price", "user_id"))
    assert listed(run(catalogs, "SHOW COLUMNS FROM wide LIKE '%id';")) == ["id", "user_id"]
    with pytest.raises(CatalogError, match="unknown table 'wid'"):
        run(catalogs, "SHOW COLUMNS IN wid;")


def test_describe_catalog_shows_its_options_with_secrets_hidden(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    run(catalogs, "CREATE CATALOG lake COMMENT 'the lake' WITH ('type' = 'streamshell', 'path' = '" + str(tmp_path / "lake") + "');")
    rows = dict(run(catalogs, "DESCRIBE CATALOG EXTENDED lake;").rows)
    assert rows["type"] == "streamshell" and rows["comment"] == "the lake"
    assert rows["option:path"] == str(tmp_path / "lake") and rows["databases"] == "default_database"


def test_a_query_reads_two_tables_of_one_name_from_two_databases_apart(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    catalogs.add(table("t", "id"))
    run(catalogs, "CREATE DATABASE other;")
    catalogs.add(table("other.t", "id", "extra"))
    query = parse_query("SELECT a.id, b.extra FROM t AS a JOIN other.t AS b ON a.id = b.id")
    tables, _, names, _ = resolve(query, catalogs, "q")
    assert sorted(t.name for t in tables) == ["other.t", "t"]
    assert len(set(names.values())) == 2, names


def test_views_resolve_in_their_database(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    run(catalogs, "CREATE DATABASE d;")
    catalogs.add(table("d.base", "id"))
    catalogs.add(ViewDef(name="d.v", query_sql="SELECT id FROM d.base"))
    tables, views, _, _ = resolve(parse_query("SELECT id FROM d.v"), catalogs, "q")
    assert [t.name for t in tables] == ["default_catalog.d.base"] and len(views) == 1


def test_a_jobs_snapshot_plans_the_same_names_in_its_own_process(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    run(catalogs, "CREATE CATALOG mem WITH ('type' = 'generic_in_memory'); CREATE DATABASE mem.d;")
    catalogs.add(table("mem.d.t", "id", "x"))
    catalogs.add(table("t", "id"), temporary=True)
    run(catalogs, "USE mem.d;")
    copy = Catalogs.from_snapshot(json.loads(json.dumps(catalogs.snapshot())))
    assert (copy.current_catalog, copy.current_database) == ("mem", "d")
    assert copy.table("t").column_names() == ["id", "x"]
    assert copy.table("default_catalog.default_database.t").column_names() == ["id"]
    old_record = [{"kind": "table", "definition": table("legacy").to_dict()}]  # a record written before catalogs
    assert Catalogs.from_snapshot(old_record).table("legacy")


def test_catalog_statements_print_back_as_flink_sql():
    from shell.sql.parse import generate

    for sql in ("CREATE CATALOG IF NOT EXISTS c COMMENT 'x' WITH ('type' = 'generic_in_memory')", "USE CATALOG c",
                "USE c.db", "SHOW TABLES IN c.db NOT LIKE 'a%'", "SHOW COLUMNS FROM t LIKE '%id'",
                "DROP DATABASE IF EXISTS db CASCADE", "DESCRIBE CATALOG EXTENDED c", "SHOW CURRENT DATABASE",
                "ALTER CATALOG c SET ('default-database' = 'x')", "CREATE DATABASE c.db COMMENT 'y'"):
        [statement] = parse_script(sql + ";")
        assert generate(statement.node) == sql


def test_a_views_own_names_are_read_in_its_database_wherever_it_is_used(tmp_path):
    catalogs = Catalogs.open(tmp_path)
    catalogs.add(table("base", "id"))  # default_database.base: one column
    run(catalogs, "CREATE DATABASE d; USE d;")
    catalogs.add(table("base", "id", "extra"))  # d.base: two
    catalogs.add(ViewDef(name="v", query_sql="SELECT * FROM base"))  # d.v reads d.base
    run(catalogs, "USE default_database;")
    tables, _, _, _ = resolve(parse_query("SELECT * FROM d.v"), catalogs, "q")
    assert [(t.name, t.column_names()) for t in tables] == [("default_catalog.d.base", ["id", "extra"])]
    tables, _, _, _ = resolve(parse_query("SELECT * FROM base"), catalogs, "q")
    assert [t.column_names() for t in tables] == [["id"]], "the query's own names stay in the current database"
