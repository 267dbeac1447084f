"""The class-data archives in the cache stay few: each environment writes its own (shell/engine/cds.py), and a
new one removes all but the newest few, so removed checkouts do not fill the disk."""

from __future__ import annotations

import os

import pytest

from shell.engine import cds

pytestmark = pytest.mark.unit


def test_writing_an_archive_keeps_the_newest_few(tmp_path):
    for number in range(5):
        old = tmp_path / f"spark-driver-{number:016d}.jsa"
        old.write_bytes(b"x")
        os.utime(old, (1_700_000_000 + number, 1_700_000_000 + number))
    new = tmp_path / "spark-driver-ffffffffffffffff.jsa"
    new.write_bytes(b"y")
    (tmp_path / "build.log").write_text("kept")
    cds._remove_old_archives(tmp_path, keep=new)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "build.log", "spark-driver-0000000000000003.jsa", "spark-driver-0000000000000004.jsa", new.name,
    ]  # fmt: skip
