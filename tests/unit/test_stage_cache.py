"""Local copies of the keyed stage's sub-buckets: a copy is read only when it is the version the state store holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell.engine import stage_cache as sc


def written(directory: Path, values: dict, versions: bytes | None = None) -> bytes:
    """Write `values` (sub-bucket -> value) as one call would, and return the versions it leaves in state."""
    copies = sc.Copies(directory, 7, versions)
    for sub, value in values.items():
        copies.write(sub, value)
    return copies.state_value(3)[0]


def test_a_copy_reads_back_as_written(tmp_path):
    versions = written(tmp_path, {0: (b"rows", None, b""), 1: None})
    copies = sc.Copies(tmp_path, 7, versions)
    assert copies.read(0) == (b"rows", None, b"")
    assert copies.read(1) is None, "a sub-bucket left without rows"
    assert copies.read(2) is sc.MISS, "never written"


def test_nothing_is_read_without_versions_in_state(tmp_path):
    written(tmp_path, {0: (b"rows", None, None)})
    assert sc.Copies(tmp_path, 7, None).read(0) is sc.MISS


def test_an_older_version_in_state_is_a_miss(tmp_path):
    """State rolled back (a failed batch, an older checkpoint) names a version whose copy is gone."""
    first = written(tmp_path, {0: (b"old", None, None)})
    written(tmp_path, {0: (b"new", None, None)}, first)
    assert sc.Copies(tmp_path, 7, first).read(0) is sc.MISS
    assert len(list(tmp_path.iterdir())) == 1, "the replaced copy is deleted"


def test_another_bucket_does_not_read_this_ones_copies(tmp_path):
    versions = written(tmp_path, {0: (b"rows", None, None)})
    assert sc.Copies(tmp_path, 8, versions).read(0) is sc.MISS


@pytest.mark.parametrize("cut", [1, 9, 20, -1])
def test_a_copy_cut_short_is_a_miss(tmp_path, cut):
    versions = written(tmp_path, {0: (b"rows of the sub-bucket", b"more", None)})
    (path,) = tmp_path.iterdir()
    path.write_bytes(path.read_bytes()[:cut])
    assert sc.Copies(tmp_path, 7, versions).read(0) is sc.MISS


def test_a_copy_that_cannot_be_written_is_left_out(tmp_path):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    versions = written(blocked, {0: (b"rows", None, None)})
    assert sc.Copies(blocked, 7, versions).read(0) is sc.MISS


def test_each_job_directory_has_its_own_scope(tmp_path):
    assert sc.scope_of(tmp_path / "a") == sc.scope_of(tmp_path / "a")
    assert sc.scope_of(tmp_path / "a") != sc.scope_of(tmp_path / "b")
