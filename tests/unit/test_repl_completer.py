"""Completion: what belongs at the cursor (sqlcontext) and the candidates offered for it (completer)."""

from __future__ import annotations

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from shell.catalog.model import Column, TableDef, ViewDef
from shell.catalog.store import Catalog
from shell.repl import sqlcontext as sc
from shell.repl.completer import SqlCompleter


@pytest.fixture
def catalog() -> Catalog:
    catalog = Catalog.open(None)
    catalog.add(
        TableDef(
            "orders",
            [Column("order_id", "BIGINT"), Column("amount", "DECIMAL(10, 2)"), Column("customer", "STRING")],
            {"connector": "datagen"},
        )
    )
    catalog.add(TableDef("rates", [Column("currency", "STRING"), Column("rate", "DOUBLE")], {"connector": "datagen"}))
    catalog.add(ViewDef("big_orders", "SELECT * FROM orders"))
    return catalog


def complete(catalog: Catalog, text: str, cursor: int | None = None, typing: bool = False) -> list[str]:
    document = Document(text, cursor if cursor is not None else len(text))
    event = CompleteEvent(text_inserted=typing, completion_requested=not typing)
    return [c.text for c in SqlCompleter(catalog).get_completions(document, event)]


def test_statement_start_offers_statement_keywords(catalog):
    assert {"SELECT", "CREATE", "SHOW"} <= set(complete(catalog, ""))
    assert complete(catalog, "sel") == ["select"], "keywords follow the case being typed"


def test_table_name_after_from_and_describe(catalog):
    assert complete(catalog, "SELECT * FROM ord") == ["orders"]
    assert complete(catalog, "SELECT * FROM b") == ["big_orders"]
    assert complete(catalog, "DESCRIBE ra") == ["rates"]
    assert complete(catalog, "INSERT INTO ord") == ["orders"]
    assert complete(catalog, "DROP TABLE r") == ["rates"]
    assert complete(catalog, "SHOW CREATE TABLE o") == ["orders"]


def test_no_completion_for_a_new_name(catalog):
    assert complete(catalog, "CREATE TABLE ord") == []


def test_columns_after_an_alias_even_when_from_follows_the_cursor(catalog):
    text = "SELECT o. FROM orders o"
    assert complete(catalog, text, cursor=len("SELECT o.")) == ["order_id", "amount", "customer"]
    assert complete(catalog, "SELECT r.ra FROM rates AS r", cursor=len("SELECT r.ra")) == ["rate"]
    assert complete(catalog, "SELECT orders.cu FROM orders", cursor=len("SELECT orders.cu")) == ["customer"]


def test_columns_of_referenced_tables_come_first(catalog):
    found = complete(catalog, "SELECT * FROM orders WHERE am")
    assert found[0] == "amount"


def test_connector_names_and_option_keys_inside_with(catalog):
    assert complete(catalog, "CREATE TABLE t (id BIGINT) WITH ('") == ["connector"]
    assert complete(catalog, "CREATE TABLE t (id BIGINT) WITH ('connector' = 'da") == ["datagen"]
    keys = complete(catalog, "CREATE TABLE t (id BIGINT, name STRING) WITH ('connector' = 'datagen', '")
    assert "rows-per-second" in keys and "number-of-rows" in keys
    assert "fields.name.length" in keys and "fields.id.kind" in keys, "'#' expands to the declared columns"
    assert "connector" not in keys, "keys already given are not offered again"
    assert complete(catalog, "CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen', 'number-of-r") == [
        "number-of-rows"
    ]


def test_option_keys_on_several_lines_and_enum_values(catalog):
    text = "CREATE TABLE t (\n  id BIGINT\n) WITH (\n  'connector' = 'datagen',\n  'fields.id.kind' = '"
    assert complete(catalog, text) == ["random", "sequence"]


def test_alter_table_completes_keys_of_the_existing_table(catalog):
    keys = complete(catalog, "ALTER TABLE orders SET ('fields.am")
    assert keys and all(k.startswith("fields.amount.") for k in keys)


def test_set_keys_quoted_or_inside_quotes(catalog):
    assert "'sql-client.execution.result-mode'" in complete(catalog, "SET ")
    assert complete(catalog, "SET 'sql-client.execution.res") == ["sql-client.execution.result-mode"]
    assert "sql-client.verbose" in complete(catalog, "RESET 'sql")


def test_follow_words_after_show(catalog):
    assert set(complete(catalog, "SHOW ")) == {"CREATE", "ERRORS", "FUNCTIONS", "JOBS", "TABLES", "VIEWS", "CATALOGS",
                                               "DATABASES", "COLUMNS", "CURRENT"}
    assert complete(catalog, "show ta") == ["tables"]


def test_while_typing_no_menu_after_a_blank(catalog):
    assert complete(catalog, "SELECT * FROM orders ", typing=True) == []
    assert complete(catalog, "SELECT * FROM or", typing=True) == ["orders"]


def test_a_later_statement_has_its_own_context(catalog):
    assert complete(catalog, "SHOW TABLES; SELECT * FROM ra") == ["rates"]
    assert {"SELECT", "SHOW"} <= set(complete(catalog, "SHOW TABLES; "))


def test_completion_never_raises_on_odd_input(catalog):
    for text in ["'", "`", "/*", "SELECT ')", "WITH (", "((((", "SELECT `a`.", "123", "x.'"]:
        complete(catalog, text)


def test_scan_keeps_open_strings_and_escapes():
    tokens = sc.scan("SET 'it''s")
    assert tokens[-1].kind == "string" and not tokens[-1].closed and tokens[-1].value == "it's"
    closed = sc.scan("'a''b' x")
    assert closed[0].closed and closed[0].value == "a'b"


def test_declared_columns_skip_constraints_and_watermarks():
    tokens = sc.scan(
        "CREATE TABLE t (id BIGINT, ts TIMESTAMP(3), total AS price * 2, WATERMARK FOR ts AS ts, "
        "PRIMARY KEY (id) NOT ENFORCED) WITH ("
    )
    assert sc.declared_columns(tokens) == ["id", "ts", "total"]


def test_table_references_with_aliases():
    refs = sc.table_references(sc.scan("SELECT * FROM orders o JOIN rates AS r ON o.c = r.c"))
    assert refs == {"orders": "orders", "o": "orders", "rates": "rates", "r": "rates"}


def test_format_names_and_options_for_connectors_that_carry_bytes(catalog):
    from shell.connectors.registry import CONNECTORS

    carriers = sorted(n for n, c in CONNECTORS.items() if getattr(c, "has_formats", False))
    if not carriers:
        pytest.skip("no connector with formats registered")
    head = f"CREATE TABLE k (id INT) WITH ('connector' = '{carriers[0]}', "
    assert "json" in complete(catalog, head + "'value.format' = '")
    keys = complete(catalog, head + "'format' = 'json', 'json.")
    assert keys and all(k.startswith("json.") for k in keys)
