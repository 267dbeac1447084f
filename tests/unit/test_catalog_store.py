"""The catalog keeps tables and views across restarts, case-insensitively, and temporary ones only in memory."""

import json

import pytest

from shell.catalog.model import Column, TableDef, ViewDef, Watermark
from shell.catalog.store import Catalog
from shell.errors import CatalogError


def orders() -> TableDef:
    return TableDef(
        name="Orders",
        columns=[Column("id", "BIGINT"), Column("ts", "TIMESTAMP(3)")],
        options={"connector": "datagen"},
        watermark=Watermark("ts", "ts - INTERVAL '5' SECOND"),
    )


def test_tables_survive_a_restart(tmp_path):
    Catalog.open(tmp_path).add(orders())
    reopened = Catalog.open(tmp_path)
    assert reopened.table("orders") == orders()
    assert reopened.names(TableDef) == ["Orders"]


def test_temporary_tables_are_not_persisted(tmp_path):
    catalog = Catalog.open(tmp_path)
    catalog.add(orders(), temporary=True)
    assert catalog.table("ORDERS").name == "Orders"
    assert Catalog.open(tmp_path).find("orders") is None


def test_duplicate_and_if_not_exists(tmp_path):
    catalog = Catalog.open(tmp_path)
    catalog.add(orders())
    assert catalog.add(orders(), if_not_exists=True) is False
    with pytest.raises(CatalogError, match="table 'Orders' already exists"):
        catalog.add(orders())


def test_unknown_table_suggests_a_name(tmp_path):
    catalog = Catalog.open(tmp_path)
    catalog.add(orders())
    with pytest.raises(CatalogError) as info:
        catalog.table("ordrs")
    assert info.value.hint == "did you mean Orders?"


def test_drop_removes_the_file(tmp_path):
    catalog = Catalog.open(tmp_path)
    catalog.add(orders())
    catalog.add(ViewDef("big", "SELECT * FROM Orders"))
    assert catalog.drop("orders", TableDef)
    assert not list((tmp_path / "tables").glob("*.json"))
    assert catalog.drop("orders", TableDef, if_exists=True) is False
    with pytest.raises(CatalogError, match="unknown view 'orders'"):
        catalog.drop("orders", ViewDef)
    assert Catalog.open(tmp_path).view("BIG").query_sql == "SELECT * FROM Orders"


def test_a_corrupt_file_is_reported_with_its_path(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "x.json").write_text("{not json")
    with pytest.raises(CatalogError, match=r"x\.json is unreadable"):
        Catalog.open(tmp_path)


def test_files_are_plain_json(tmp_path):
    Catalog.open(tmp_path).add(orders())
    data = json.loads((tmp_path / "tables" / "orders.json").read_text())
    assert data["options"] == {"connector": "datagen"}
