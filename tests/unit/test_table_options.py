"""Flink's dynamic table options, `/*+ OPTIONS(...) */` after a table: carried out for the statement that writes them,
checked as ALTER TABLE SET checks options, refused where they cannot apply, never dropped."""

from __future__ import annotations

import pytest

from shell.catalog.store import Catalog
from shell.errors import StreamshellError
from shell.planner.planner import plan_query
from tests.sessions import catalog_after
from shell.planner.table_options import hinted_target, written_options
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit

KAFKA = "'connector' = 'kafka', 'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'json'"
DDL = f"""
CREATE TABLE orders (id INT, amount INT) WITH ({KAFKA}, 'topic' = 'orders', 'scan.startup.mode' = 'latest-offset');
CREATE TABLE totals (id INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
  'topic' = 'totals', 'properties.bootstrap.servers' = 'localhost:9092', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE out (id INT, amount INT) WITH ({KAFKA}, 'topic' = 'out');
CREATE VIEW big AS SELECT id, amount FROM orders /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */ WHERE amount > 9;
CREATE VIEW plain AS SELECT id FROM orders;
CREATE VIEW aliased AS SELECT x.id FROM orders /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */ AS x;
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Catalog:
    return catalog_after(DDL, tmp_path_factory.mktemp("home"))


def sources(catalog: Catalog, sql: str) -> dict[str, dict[str, str]]:
    return {t.name: t.options for t in plan_query(parse_script(sql)[0].query, catalog).sources}


def refusal(catalog: Catalog, sql: str) -> StreamshellError:
    with pytest.raises(StreamshellError) as caught:
        plan_query(parse_script(sql)[0].query, catalog)
    return caught.value


def test_the_hint_is_read_with_quotes_doubled_and_blanks_anywhere():
    [statement] = parse_script("SELECT * FROM t /*+ OPTIONS( 'a.b'='it''s' ,'c' = '' ) */")
    table = next(statement.query.find_all(type(statement.query.args["from_"].this)))
    assert written_options(table) == {"a.b": "it's", "c": ""}


def test_a_query_reads_its_table_with_the_hint_over_the_declared_options(catalog):
    read = sources(catalog, "SELECT id FROM orders /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */")
    assert read["orders"]["scan.startup.mode"] == "earliest-offset" and read["orders"]["topic"] == "orders"
    assert catalog.table("orders").options["scan.startup.mode"] == "latest-offset"  # the table itself is unchanged


def test_a_changelog_query_and_an_aliased_table_take_the_hint_too(catalog):
    read = sources(catalog, "SELECT o.id, COUNT(*) AS n FROM orders /*+ OPTIONS('scan.startup.mode' = "
                            "'earliest-offset') */ AS o GROUP BY o.id")
    assert read["orders"]["scan.startup.mode"] == "earliest-offset"


def test_a_hint_inside_a_view_applies_where_the_view_is_read(catalog):
    assert sources(catalog, "SELECT id FROM big")["orders"]["scan.startup.mode"] == "earliest-offset"
    # the view's text is stored as sqlglot prints it, the hint after the alias: read there too
    assert sources(catalog, "SELECT id FROM aliased")["orders"]["scan.startup.mode"] == "earliest-offset"
    assert sources(catalog, "SELECT id FROM plain")["orders"]["scan.startup.mode"] == "latest-offset"


@pytest.mark.parametrize("sql, says", [
    ("SELECT id FROM orders /*+ OPTIONS('scan.startup.mod' = 'earliest-offset') */",
     "in the OPTIONS hint after 'orders': unsupported option 'scan.startup.mod'"),
    ("SELECT id FROM orders /*+ OPTIONS('scan.startup.mode' = 'sometime') */", "in the OPTIONS hint after 'orders'"),
    ("SELECT id FROM orders /*+ OPTIONS('connector' = 'datagen') */", "cannot change the connector of 'orders'"),
    ("SELECT id FROM orders /*+ OPTIONS(scan.startup.mode = 'x') */", "cannot read the OPTIONS hint after 'orders'"),
    ("SELECT id FROM orders /*+ OPTIONS() */", "names no option"),
    ("SELECT id FROM plain /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */", "'plain' is a view"),
    ("SELECT a.id FROM orders /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */ AS a JOIN orders AS b "
     "ON a.id = b.id", "'orders' is read with two different OPTIONS hints"),
    ("SELECT id FROM big UNION ALL SELECT id FROM orders", "'orders' is read with two different OPTIONS hints"),
])  # fmt: skip
def test_a_hint_that_cannot_apply_is_refused_at_its_table(catalog, sql, says):
    error = refusal(catalog, sql)
    assert says in error.message and (error.hint or "must be one of" in error.message), (error.message, error.hint)
    assert error.line == 1 and error.col is not None  # under the table's name


def test_a_hint_written_after_the_alias_is_read_too(catalog):
    read = sources(catalog, "SELECT o.id FROM orders AS o /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */")
    assert read["orders"]["scan.startup.mode"] == "earliest-offset"


def test_the_same_hint_twice_is_one_reading(catalog):
    hint = "/*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */"
    read = sources(catalog, f"SELECT a.id FROM orders {hint} AS a JOIN orders {hint} AS b ON a.id = b.id")
    assert read["orders"]["scan.startup.mode"] == "earliest-offset"


def test_an_insert_writes_its_target_with_the_hint(catalog):
    [insert] = parse_script("INSERT INTO out /*+ OPTIONS('topic' = 'elsewhere') */ SELECT id, amount FROM orders")
    target = hinted_target(catalog.table("out"), insert.node)
    assert target.options["topic"] == "elsewhere" and catalog.table("out").options["topic"] == "out"
    [insert] = parse_script("INSERT INTO out /*+ OPTIONS('topic' = 'elsewhere') */ (id) SELECT id FROM orders")
    assert hinted_target(catalog.table("out"), insert.node).options["topic"] == "elsewhere"
    [insert] = parse_script("INSERT INTO out /*+ OPTIONS('sink.nothing' = '1') */ SELECT id, amount FROM orders")
    with pytest.raises(StreamshellError) as caught:
        hinted_target(catalog.table("out"), insert.node)
    assert "in the OPTIONS hint after 'out': unsupported option 'sink.nothing'" in caught.value.message
