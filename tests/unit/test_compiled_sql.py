"""The compiled SQL front end is used only when its build matches the sources (shell/compiled_sql.py).

Each case runs a fresh interpreter, since the choice is made once, when `shell` is first imported.
The compiled build itself is exercised by `make test-compiled-sql` (every unit test against it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from shell.compiled_sql import MANIFEST, source_digests

PROBE = (
    "import sys, shell, shell.compiled_sql as c, shell.sql as q;"
    "from shell.sql import parse_script;"
    "s = parse_script('SELECT a FROM t;')[0];"
    "print(type(s).__name__, c.active_dir, sys.path[0] == str(c.active_dir), q.__path__[0], c.reason, sep='|')"
)


def _run(build: Path, mode: str = "auto") -> subprocess.CompletedProcess:
    env = {**os.environ, "STREAMSHELL_COMPILED_SQL_DIR": str(build), "STREAMSHELL_COMPILED_SQL": mode}
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60)


def _manifest(build: Path, **overrides) -> None:
    build.mkdir(parents=True, exist_ok=True)
    manifest = {"cache_tag": sys.implementation.cache_tag, "sources": source_digests(), **overrides}
    (build / MANIFEST).write_text(json.dumps(manifest))


def test_a_build_of_these_sources_goes_first_on_the_import_path(tmp_path):
    build = tmp_path / "lib"
    _manifest(build)
    result = _run(build)
    kind, active, first, sql_path, reason = result.stdout.strip().split("|")
    assert (kind, active, first, reason) == ("Select", str(build), "True", "in use"), result.stderr
    assert sql_path == str(build / "shell" / "sql")


def test_a_stale_build_is_ignored_and_the_sources_parse(tmp_path):
    build = tmp_path / "lib"
    sources = source_digests()
    sources["sql/grammar.py"] = "0" * 64
    _manifest(build, sources=sources)
    kind, active, _, sql_path, reason = _run(build).stdout.strip().split("|")
    assert (kind, active) == ("Select", "None")
    assert sql_path.endswith(os.path.join("shell", "sql")) and not sql_path.startswith(str(build))
    assert "sources changed" in reason


def test_a_build_for_another_interpreter_is_ignored(tmp_path):
    build = tmp_path / "lib"
    _manifest(build, cache_tag="cpython-39")
    kind, active, *_, reason = _run(build).stdout.strip().split("|")
    assert (kind, active) == ("Select", "None")
    assert "cpython-39" in reason


def test_off_ignores_a_fresh_build(tmp_path):
    build = tmp_path / "lib"
    _manifest(build)
    _, active, *_, reason = _run(build, mode="off").stdout.strip().split("|")
    assert active == "None" and reason == "STREAMSHELL_COMPILED_SQL=off"


def test_require_without_a_build_stops_at_import_and_says_why(tmp_path):
    result = _run(tmp_path / "missing", mode="require")
    assert result.returncode != 0
    assert "CompiledSqlUnavailable: STREAMSHELL_COMPILED_SQL=require: no compiled build in" in result.stderr
