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


def test_the_same_definition_again_is_accepted_and_a_different_one_says_what_differs(tmp_path):
    catalog = Catalog.open(tmp_path)
    catalog.add(orders())
    assert catalog.add(orders(), if_not_exists=True) is False
    assert Catalog.open(tmp_path).add(orders()) is False  # a script run twice: the stored table, unchanged
    other = orders()
    other.options = {"connector": "datagen", "rows-per-second": "5", "password": "hunter2"}
    other.watermark = None
    with pytest.raises(CatalogError) as info:
        catalog.add(other)
    message = info.value.message
    assert message.startswith("table 'Orders' already exists with another definition:")
    assert "option 'password' is new" in message and "option 'rows-per-second' is new" in message
    assert "watermark differs" in message and "hunter2" not in message  # values are named, never shown
    assert "DROP TABLE Orders" in info.value.hint
    with pytest.raises(CatalogError, match="the stored one is not TEMPORARY"):
        catalog.add(orders(), temporary=True)
    assert catalog.table("orders").watermark is not None  # the stored definition stays as it was


@pytest.mark.parametrize(
    ("columns", "said"),
    [
        ("id BIGINT, v STRING", ["column 'v' is stored as INT, not STRING"]),
        ("id BIGINT, v INT, w INT", ["column 'w' is new"]),
        ("id BIGINT", ["column 'v' is missing"]),
        ("id BIGINT, v INT NOT NULL", ["column 'v' differs"]),
        ("v INT, id BIGINT", ["the columns' order (id, v stored)"]),
        ("id INT, x INT", ["column 'id' is stored as BIGINT, not INT", "column 'x' is new", "column 'v' is missing"]),
    ],
)
def test_another_definition_names_each_column_that_differs_and_its_types(tmp_path, columns, said):
    from shell.sql import parse_script

    catalog = Catalog.open(tmp_path)
    [stored] = parse_script("CREATE TABLE gen (id BIGINT, v INT) WITH ('connector' = 'datagen')")
    catalog.add(stored.table)
    [again] = parse_script(f"CREATE TABLE gen ({columns}) WITH ('connector' = 'datagen')")
    with pytest.raises(CatalogError) as info:
        catalog.add(again.table)
    assert info.value.message == "table 'gen' already exists with another definition: " + "; ".join(said)


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


@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("x.json", b"{not json", "not valid JSON (line 1, column 2: Expecting property name enclosed in double quotes); "
                                 "fix the file or move it away"),
        ("x.json", b'{"name": 5}', "'name' is a number, expected a string; fix the file or move it away"),
        ("x.json", b"[1, 2]", "expected a JSON object, found list; fix the file or move it away"),
        ("x.json", b'{"name": "x", "options": {"a": 5}}', "an option's value is not a string; fix the file or move it away"),
        ("x.json", b'{"name": "x", "columns": [{"name": "a", "kind": "SOMETHING"}]}',
         "not a table definition (ValueError); fix the file or move it away"),
        ("x.json", b'{"name": "caf\xe9"}', "not UTF-8 text: byte 0xe9 at byte offset 13; save the file as UTF-8"),
        ("x.json", b"[" * 100_000, "not valid JSON (nested too deeply); fix the file or move it away"),
    ],
)  # fmt: skip
def test_a_bad_file_is_skipped_with_a_warning_and_left_as_it_is(tmp_path, name, content, reason):
    (tmp_path / "tables").mkdir()
    bad = tmp_path / "tables" / name
    bad.write_bytes(content)
    Catalog.open(tmp_path).add(orders())
    catalog = Catalog.open(tmp_path)
    assert catalog.table("orders") == orders()  # the others are read
    where = f"{bad}:1:14" if "UTF-8" in reason else str(bad)
    assert catalog.warnings == [f"skipped catalog file {where}: {reason} (left as it is)"]
    assert bad.read_bytes() == content


def test_a_directory_in_place_of_a_file_is_skipped_and_never_overwritten(tmp_path):
    (tmp_path / "tables" / "t.json").mkdir(parents=True)
    catalog = Catalog.open(tmp_path)
    assert catalog.warnings == [
        f"skipped catalog file {tmp_path / 'tables' / 't.json'}: it is a directory, not a file; move it away (left as it is)"
    ]
    with pytest.raises(CatalogError, match="could not be read when the shell started; fix the file or move it away first"):
        catalog.add(TableDef("T", [Column("a", "INT")], {"connector": "datagen"}))
    assert catalog.find("t") is None and (tmp_path / "tables" / "t.json").is_dir()
    assert catalog.add(TableDef("T", [Column("a", "INT")], {"connector": "datagen"}), temporary=True)


def test_a_skipped_file_is_not_overwritten_by_create(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "orders.json").write_text('{"name": 5}')
    with pytest.raises(CatalogError, match=r"cannot save table 'Orders': .*orders\.json could not be read"):
        Catalog.open(tmp_path).add(orders())
    assert (tmp_path / "tables" / "orders.json").read_text() == '{"name": 5}'


def leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


def test_a_write_the_disk_refuses_changes_nothing(tmp_path, monkeypatch):
    import errno
    import os

    catalog = Catalog.open(tmp_path)
    catalog.add(orders())

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    changed = TableDef("Orders", orders().columns, {"connector": "datagen", "rows-per-second": "5"})
    with pytest.raises(CatalogError) as info:
        catalog.replace(changed)
    path = tmp_path / "tables" / "orders.json"
    assert info.value.message == f"cannot save table 'Orders' to {path}: No space left on device; the catalog is unchanged"
    with pytest.raises(CatalogError, match="No space left on device"):
        catalog.add(ViewDef("v", "SELECT 1"))
    monkeypatch.undo()
    assert catalog.table("orders") == orders() and catalog.find("v") is None
    assert Catalog.open(tmp_path).objects == catalog.objects  # memory equals disk
    assert leftovers(tmp_path) == []


def test_a_folder_the_shell_may_not_write_to_is_an_error_and_changes_nothing(tmp_path, monkeypatch):
    import tempfile

    catalog = Catalog.open(tmp_path)
    catalog.add(orders())

    def read_only(*args, **kwargs):  # what mkstemp meets in a read-only folder (chmod means nothing to root)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(CatalogError, match="to .*b.json: Permission denied; the catalog is unchanged"):
        catalog.add(TableDef("b", [Column("a", "INT")], {"connector": "datagen"}))
    monkeypatch.undo()
    assert catalog.names(TableDef) == ["Orders"]
    assert Catalog.open(tmp_path).objects == catalog.objects
    assert leftovers(tmp_path) == []


def test_a_failed_removal_drops_nothing(tmp_path, monkeypatch):
    from pathlib import Path

    catalog = Catalog.open(tmp_path)
    catalog.add(orders())

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "unlink", refuse)
    with pytest.raises(CatalogError, match="cannot remove .*orders.json: Permission denied; nothing was dropped"):
        catalog.drop("orders", TableDef)
    monkeypatch.undo()
    assert catalog.table("orders") == orders()
    assert Catalog.open(tmp_path).objects == catalog.objects


def test_files_are_plain_json(tmp_path):
    Catalog.open(tmp_path).add(orders())
    data = json.loads((tmp_path / "tables" / "orders.json").read_text())
    assert data["options"] == {"connector": "datagen"}


def test_a_script_of_create_statements_runs_twice_on_the_same_home(tmp_path):
    import io

    from shell.script import ScriptRunner
    from shell.session import Session, SessionOptions

    script = b"""CREATE TABLE t (id INT) WITH ('connector' = 'datagen');
CREATE VIEW v AS SELECT id FROM t;
"""
    outputs = []
    for _ in range(2):
        out, err = io.StringIO(), io.StringIO()
        assert ScriptRunner(Session(SessionOptions(home=tmp_path)), out=out, err=err).run_bytes(script, "s.sql") == 0
        outputs.append(out.getvalue())
    assert "already exists with this definition; unchanged" in outputs[1]
    changed = b"CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen');"
    err = io.StringIO()
    assert ScriptRunner(Session(SessionOptions(home=tmp_path)), out=io.StringIO(), err=err).run_bytes(changed, "s.sql") != 0
    assert "s.sql:1:" in err.getvalue()
    assert "already exists with another definition: column 'id' is stored as INT, not BIGINT" in err.getvalue()
