"""The class-data archives in the cache are those of live environments: each environment writes its own
(shell/engine/cds.py), and writing one removes those whose pyspark installation is gone or has changed, so removed
checkouts and venvs made again do not fill the disk, while other live checkouts keep theirs."""

from __future__ import annotations

import os

import pytest

from shell.engine import cds

pytestmark = pytest.mark.unit


def fake_pyspark(folder):
    (folder / "jars").mkdir(parents=True)
    (folder / "jars" / "spark-core.jar").write_bytes(b"jar")
    return folder


def test_archives_of_removed_or_changed_environments_go_and_live_ones_stay(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMSHELL_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "cds"
    folder.mkdir(parents=True)
    live, removed, changed = (fake_pyspark(tmp_path / name / "pyspark") for name in ("live", "removed", "changed"))
    archives = {}
    for name, home in (("live", live), ("removed", removed), ("changed", changed)):
        archives[name] = cds.archive_path(home)
        archives[name].write_bytes(b"archive")
        cds._source(archives[name]).write_text(f"{home}\n")
    orphan = folder / "spark-driver-0000000000000000.jsa"  # written before archives named their source
    orphan.write_bytes(b"archive")
    (tmp_path / "removed" / "pyspark" / "jars" / "spark-core.jar").unlink()
    (tmp_path / "removed" / "pyspark" / "jars").rmdir()
    (tmp_path / "removed" / "pyspark").rmdir()
    os.utime(changed / "jars" / "spark-core.jar", ns=(1, 1))  # the venv made again: new jars, new times
    (folder / "build.log").write_text("kept")

    cds.remove_stale_archives(folder)

    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["build.log", archives["live"].name, cds._source(archives["live"]).name]
    )
