"""The case folders are well formed, and the shared rules (splitting, normalizing, materializing, diffing) hold.

Fast: no Flink and no Spark. A broken case or helper would otherwise show up as a confusing engine difference.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from differential import compare
from differential.cases import (
    CASES_DIR,
    DATA_PLACEHOLDER,
    load_cases,
    materialize,
    normalize_value,
    split_statements,
)

CASES = load_cases()


def test_there_are_cases_and_a_small_default_set():
    assert len(CASES) >= 15
    assert 3 <= sum(c.default for c in CASES) <= 6


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_is_well_formed(case):
    assert case.description
    assert case.ddl, "a case creates its tables"
    # tables and views; a Python function the case ships (its module in the case folder, on 'python.files')
    assert all(s.upper().startswith(("CREATE TABLE", "CREATE VIEW", "CREATE TEMPORARY FUNCTION", "SET 'PYTHON.FILES'"))
               for s in case.ddl)  # fmt: skip
    for statement in (s for s in case.ddl if s.upper().startswith("CREATE TABLE")):
        assert "'connector' = 'filesystem'" in statement
        assert DATA_PLACEHOLDER + "/" in statement, "data paths use the ${data} placeholder"
    for name in (p.name for p in case.files() if p.suffix == ".json" and p.name != "case.json"):
        assert f"{DATA_PLACEHOLDER}/{name}" in case.sql, f"{name} is not used by case.sql"
        lines = (case.folder / name).read_text().splitlines()
        if name == "nexmark.json":  # generated (differential/nexmark_events.py; checked below), not written by hand
            continue
        assert 5 <= len(lines) <= 40
        changelog = "'format' = 'debezium-json'" in _table_with(case, name)
        for line in lines:
            row = json.loads(line)
            if changelog:
                assert set(row) == {"before", "after", "op"} and row["op"] in ("c", "u", "d")
            else:
                assert isinstance(row, dict) and "op" not in row
    if not (case.known_difference or case.meta.get("wall_clock")):  # the wall clock makes results differ run to run
        assert "PROCTIME" not in case.sql.upper() and "CURRENT_TIMESTAMP" not in case.sql.upper()
    assert "${data}" not in case.script()


def test_a_known_difference_from_flink_is_rare_and_documented():
    """An expected failure hides nothing only while docs/differential.md names it with its reason."""
    known = [c for c in CASES if c.known_difference]
    assert len(known) <= 2, "a known difference is the exception"
    docs = (Path(__file__).parents[2] / "docs" / "differential.md").read_text()
    for case in known:
        assert f"| `{case.name}` |" in docs, f"{case.name}: its difference is not in docs/differential.md"


def _table_with(case, filename):
    """The statement that names the file: a CREATE TABLE, or the view or query whose OPTIONS hint points at it."""
    return next(s for s in [*case.ddl, case.query] if f"/{filename}'" in s)


def test_split_statements_respects_quotes_and_comments():
    sql = "CREATE TABLE t (a STRING) WITH ('k' = 'a;b'); -- c;d\nSELECT ';' AS x /* ; */ FROM t;"
    assert split_statements(sql) == ["CREATE TABLE t (a STRING) WITH ('k' = 'a;b')", "SELECT ';' AS x   FROM t"]


def test_numbers_and_timestamps_normalize_alike():
    import datetime as dt
    import decimal

    assert normalize_value(1.0) == normalize_value(1) == normalize_value(decimal.Decimal("1.00")) == 1
    assert normalize_value(decimal.Decimal("12.50")) == normalize_value(12.5) == 12.5
    assert normalize_value(0.1 + 0.2) == normalize_value(0.3)
    assert normalize_value(True) is True
    ts = dt.datetime(2024, 1, 1, 10, 0, 0, 500000)
    assert normalize_value(ts) == normalize_value("2024-01-01 10:00:00.5") == "2024-01-01 10:00:00.500"
    assert normalize_value("2024-01-01T10:00:00") == "2024-01-01 10:00:00.000"


def test_multiset_materialization():
    changes = [("+I", {"a": 1}), ("+I", {"a": 1}), ("-U", {"a": 1}), ("+U", {"a": 2}), ("-D", {"a": 3})]
    final = materialize(changes)
    assert final.rows == [{"a": 1}, {"a": 2}]
    assert len(final.anomalies) == 1


def test_keyed_materialization_takes_upserts():
    changes = [
        ("+I", {"k": "x", "n": 1}),
        ("+U", {"k": "x", "n": 2}),  # no -U before it: an upsert
        ("+I", {"k": None, "n": 1}),
        ("+I", {"k": "y", "n": 1}),
        ("-D", {"k": "y", "n": 1}),
    ]
    final = materialize(changes, ["k"])
    assert sorted(final.rows, key=str) == sorted([{"k": None, "n": 1}, {"k": "x", "n": 2}], key=str)
    assert final.anomalies == []


def test_parse_and_diff():
    changes, bad = compare.parse_json_changes('{"op": "+I", "row": {"x": 1}}\nnoise\n')
    assert changes == [("+I", {"x": 1})] and bad == ["noise"]
    assert compare.compare_rows([{"x": 1}], [{"x": 1.0}]).equal
    diff = compare.compare_rows([{"x": 1}, {"x": 2}], [{"x": 1}, {"x": 3}])
    assert not diff.equal
    assert '- {"x": 2}' in diff.text and '+ {"x": 3}' in diff.text
    wide = compare.compare_rows([{"id": 1, "a": "x", "b": 2}], [{"id": 1, "a": "y", "b": 2}])
    assert '~ {"id": 1, "b": 2}  a: flink "x", streamshell "y"' in wide.text
    keyed = compare.compare_rows([{"k": 1, "n": 2}], [{"k": 1, "n": 3}], key=("k",))
    assert '~ {"k": 1}  n: flink 2, streamshell 3' in keyed.text


def test_cache_key_changes_with_the_case(tmp_path, monkeypatch):
    import shutil

    from differential.cases import load_case

    folder = tmp_path / "c"
    shutil.copytree(CASES[0].folder, folder)
    before = compare.cache_file(load_case(folder)).name
    (folder / "case.sql").write_text((folder / "case.sql").read_text() + "\n")
    assert compare.cache_file(load_case(folder)).name != before


def test_every_nexmark_case_reads_the_file_the_generator_writes(tmp_path):
    """The Nexmark cases' input is what `python -m differential.nexmark_events` writes with its defaults (so it can
    be made again, and a change to the generator shows here), the same file in every case."""
    from differential import nexmark_events

    assert nexmark_events.main([str(tmp_path / "nexmark.json")]) == 0
    made = (tmp_path / "nexmark.json").read_bytes()
    folders = sorted(CASES_DIR.glob("nexmark_q*/nexmark.json"))
    assert len(folders) >= 18 and all(f.read_bytes() == made for f in folders)


def test_split_statements_keeps_hints_for_both_engines():
    sql = "SELECT a FROM t /*+ OPTIONS('path' = 'x;y') */ /* a comment */;"
    assert split_statements(sql) == ["SELECT a FROM t /*+ OPTIONS('path' = 'x;y') */"]
