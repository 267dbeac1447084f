"""Python user functions through the real command line: a persistent function is there after a restart of the
shell, and a detached job (a process of its own) calls a temporary function the shell that started it created."""

from __future__ import annotations

import json

import pytest

from tests.e2e.cli import ROOT, streamshell

pytestmark = pytest.mark.e2e

EXAMPLE = ROOT / "examples" / "functions" / "text_functions.py"


def test_a_persistent_function_survives_a_restart(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.properties").write_text(f"python.files={EXAMPLE}\n")
    created = streamshell("-e", "CREATE FUNCTION count_char AS 'text_functions.count_char' LANGUAGE PYTHON;",
                          home=home)
    assert created.code == 0, created.err
    again = streamshell("-e", "SELECT count_char('cocoa', 'c') AS n; DESCRIBE FUNCTION count_char;",
                        "--result-mode", "json", home=home)
    assert again.code == 0, again.err
    assert again.out.splitlines()[0] == json.dumps({"op": "+I", "row": {"n": 2}})
    assert "text_functions.count_char" in again.out and "SCALAR" in again.out


def test_a_detached_job_calls_the_functions_of_its_shell(tmp_path):
    home = tmp_path / "home"
    source, out = tmp_path / "lines.json", tmp_path / "out"
    source.write_text("".join(json.dumps({"id": i, "line": line}) + "\n"
                              for i, line in enumerate(["a cat", "the cool cats", None])))
    script = tmp_path / "job.sql"
    script.write_text(f"""
SET 'table.dml-sync' = 'true';
SET 'python.files' = '{EXAMPLE}';
CREATE TEMPORARY FUNCTION split_words AS 'text_functions.split_words' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION count_char AS 'text_functions.count_char' LANGUAGE PYTHON;
CREATE TABLE lines (id INT, line STRING) WITH ('connector' = 'filesystem', 'path' = '{source}', 'format' = 'json');
CREATE TABLE words (id INT, word STRING, c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO words SELECT l.id, w.word, count_char(w.word, 'c')
  FROM lines AS l, LATERAL TABLE(split_words(l.line)) AS w(word, n);
""")
    run = streamshell("-f", str(script), home=home, timeout=600)
    assert run.code == 0, run.err
    (record,) = [json.loads(p.read_text()) for p in (home / "jobs").glob("*/job.json")]
    assert {f["name"] for f in record["functions"]} == {"split_words", "count_char"}
    written = sorted(tuple(json.loads(x).values()) for f in out.rglob("part-*") for x in f.read_text().splitlines())
    assert written == sorted([(0, "a", 0), (0, "cat", 1), (1, "the", 0), (1, "cool", 1), (1, "cats", 1)])
