"""What a job's state was built with stays with it: the key-bucket count (kept in its directory, reused on restart)
and bounded datagen start times, both copied with a savepoint."""

from __future__ import annotations

import pytest

from shell.engine.changelog import BUCKETS_FILE, kept_buckets
from shell.jobs.savepoint import restore

pytestmark = pytest.mark.unit


def test_the_first_start_keeps_the_setting_and_later_starts_ignore_a_new_one(tmp_path):
    job = tmp_path / "job"
    assert kept_buckets(job, 64) == 64
    assert kept_buckets(job, 1024) == 64, "a key's bucket must not move under the state built with 64"
    assert (job / BUCKETS_FILE).read_text() == "64"


def test_a_job_started_from_a_savepoint_keeps_the_savepoints_buckets(tmp_path):
    saved = tmp_path / "saved"
    (saved / "checkpoint" / "offsets").mkdir(parents=True)
    kept_buckets(saved, 64)
    new = tmp_path / "new"
    restore(str(saved), new)
    assert kept_buckets(new, 1024) == 64


def test_a_savepoint_copy_keeps_the_first_event_time_of_bounded_datagen_tables(tmp_path):
    saved = tmp_path / "saved"
    (saved / "checkpoint" / "offsets").mkdir(parents=True)
    (saved / "datagen").mkdir()
    (saved / "datagen" / "orders.start").write_text("1700000000000")
    new = tmp_path / "new"
    restore(str(saved), new)
    assert (new / "datagen" / "orders.start").read_text() == "1700000000000"
