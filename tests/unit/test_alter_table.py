"""ALTER TABLE and ALTER VIEW in all of Flink's forms, through the session (no Spark: only the catalog changes)."""

from __future__ import annotations

import pytest

from shell.errors import CatalogError, OptionError
from shell.results import Message
from shell.session import Session, SessionOptions
from shell.sql.ddl import create_table_sql
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit

ORDERS = """CREATE TABLE orders (id BIGINT, qty INT, price DOUBLE, ts TIMESTAMP(3),
  total AS qty * price, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'upsert-kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json', 'value.format' = 'json');"""


@pytest.fixture
def session(tmp_path):
    session = Session(SessionOptions(home=tmp_path / "home"))
    run(session, ORDERS)
    yield session
    session.close()


def run(session, sql: str):
    result = None
    for statement in parse_script(sql):
        result = session.execute(statement)
    return result


def columns(session, name="orders") -> list[str]:
    return session.catalog.table(name).column_names()


def test_add_puts_columns_where_asked_and_persists(session, tmp_path):
    assert isinstance(run(session, "ALTER TABLE orders ADD note STRING;"), Message)
    run(session, "ALTER TABLE orders ADD (region STRING FIRST, discount DOUBLE AFTER price);")
    assert columns(session) == ["region", "id", "qty", "price", "discount", "ts", "total", "note"]
    again = Session(SessionOptions(home=tmp_path / "home"))
    assert columns(again) == columns(session), "the change is on disk"
    again.close()


def test_modify_changes_a_column_in_place_or_moves_it(session):
    run(session, "ALTER TABLE orders MODIFY qty BIGINT NOT NULL;")
    table = session.catalog.table("orders")
    qty = table.column("qty")
    assert (qty.data_type, qty.nullable) == ("BIGINT", False) and columns(session).index("qty") == 1
    run(session, "ALTER TABLE orders MODIFY (price DOUBLE FIRST, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);")
    table = session.catalog.table("orders")
    assert columns(session)[0] == "price" and table.watermark.expression == "ts - INTERVAL '5' SECOND"


def test_drop_and_rename_keep_the_table_whole(session):
    with pytest.raises(OptionError, match="upsert table 'orders' needs a primary key"):
        run(session, "ALTER TABLE orders DROP PRIMARY KEY;")  # the changed table is validated as CREATE would
    assert session.catalog.table("orders").primary_key == ["id"]
    run(session, "ALTER TABLE orders DROP WATERMARK; ALTER TABLE orders DROP (total); ALTER TABLE orders RENAME ts TO at;")
    table = session.catalog.table("orders")
    assert table.watermark is None and columns(session) == ["id", "qty", "price", "at"]
    run(session, "ALTER TABLE orders RENAME id TO order_id;")
    assert session.catalog.table("orders").primary_key == ["order_id"], "the key follows its column"


@pytest.mark.parametrize(
    "sql, message",
    [("ALTER TABLE orders ADD qty INT;", "already has a column 'qty'"),
     ("ALTER TABLE orders MODIFY nope INT;", "has no column 'nope' to modify"),
     ("ALTER TABLE orders DROP qty;", "column 'qty' cannot be dropped: computed column 'total' use it"),
     ("ALTER TABLE orders DROP id;", "the primary key use it"),
     ("ALTER TABLE orders RENAME price TO cost;", "computed column 'total' read it"),
     ("ALTER TABLE orders ADD PRIMARY KEY (qty) NOT ENFORCED;", r"already has a primary key \(id\)"),
     ("ALTER TABLE orders ADD x INT AFTER nope;", "AFTER nope: table 'orders' has no column 'nope'"),
     ("ALTER TABLE ordres ADD x INT;", "unknown table 'ordres'")],
)
def test_a_change_flink_refuses_is_refused_with_the_reason_and_changes_nothing(session, sql, message):
    before = create_table_sql(session.catalog.table("orders"))
    with pytest.raises(CatalogError, match=message):
        run(session, sql)
    assert create_table_sql(session.catalog.table("orders")) == before


def test_reset_removes_options_and_the_result_is_validated(session):
    run(session, "ALTER TABLE orders SET ('properties.group.id' = 'g');")
    run(session, "ALTER TABLE orders RESET ('properties.group.id');")
    assert "properties.group.id" not in session.catalog.table("orders").options
    with pytest.raises(OptionError, match="topic"):
        run(session, "ALTER TABLE orders RESET ('topic');")
    assert session.catalog.table("orders").options["topic"] == "orders", "a table that would not run is not kept"


def test_rename_to_moves_the_table_and_if_exists_skips_a_missing_one(session):
    run(session, "ALTER TABLE orders RENAME TO sales;")
    assert session.catalog.find("orders") is None and columns(session, "sales")[0] == "id"
    assert "does not exist; skipped" in run(session, "ALTER TABLE IF EXISTS orders ADD x INT;").text
    run(session, "CREATE DATABASE archive; ALTER TABLE sales RENAME TO archive.sales_2026;")
    assert columns(session, "archive.sales_2026")[0] == "id"


def test_alter_view_renames_it_or_changes_its_query(session):
    run(session, "CREATE VIEW big AS SELECT id FROM orders WHERE qty > 10;")
    run(session, "ALTER VIEW big AS SELECT id, qty FROM orders WHERE qty > 100;")
    assert "qty > 100" in session.catalog.view("big").query_sql
    run(session, "ALTER VIEW big RENAME TO huge;")
    assert session.catalog.find("big") is None and "qty > 100" in session.catalog.view("huge").query_sql
    with pytest.raises(CatalogError, match="unknown table 'nope'"):
        run(session, "ALTER VIEW huge AS SELECT id FROM nope;")
