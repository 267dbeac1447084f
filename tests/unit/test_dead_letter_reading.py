"""Reading the kept bad records of a table while Spark may be writing more of them."""

from __future__ import annotations

import base64
import json

import pytest

from shell.engine.bad_records import read_dead_letters

pytestmark = pytest.mark.unit


def record(position: str, seen_at: str) -> str:
    value = base64.b64encode(b"{not json").decode()
    return json.dumps({"seen_at": seen_at, "position": position, "error": "malformed JSON", "value_base64": value})


def test_files_spark_has_not_committed_yet_are_not_read(tmp_path):
    committed = tmp_path / "src" / "batch-000000000001"
    committed.mkdir(parents=True)
    (committed / "part-00000-a.json").write_text(record("0:7", "2026-11-23 10:00:01") + "\n")
    # a task's output before the commit moves it up: it may be gone by the time it would be read
    pending = committed.parent / "batch-000000000002" / "_temporary" / "0" / "task_1"
    pending.mkdir(parents=True)
    (pending / "part-00000-b.json").write_text(record("0:9", "2026-11-23 10:00:02") + "\n")
    letters = read_dead_letters(tmp_path / "src")
    assert [(d.position, d.value) for d in letters] == [("0:7", "{not json")]
