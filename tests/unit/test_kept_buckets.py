"""What a job's state was built with stays with it: the keyed stage's bucket layout and whether its stage over one
upsert table and join runs on the JVM (kept in its directory, reused on restart) and bounded datagen start times, all
copied with a savepoint."""

from __future__ import annotations

import pytest

from shell.engine.state_layout import BUCKETS_FILE, OPERATORS_FILE, kept_jvm_stages, kept_layout
from shell.errors import ExecutionError
from shell.jobs.savepoint import restore

pytestmark = pytest.mark.unit


def test_the_first_start_keeps_the_settings_and_later_starts_ignore_new_ones(tmp_path):
    job = tmp_path / "job"
    assert kept_layout(job, (8, 32)) == (8, 32)
    assert kept_layout(job, (16, 64)) == (8, 32), "a key's bucket must not move under the state built with 8 x 32"
    assert (job / BUCKETS_FILE).read_text().split() == ["8", "32"]


def test_a_job_started_from_a_savepoint_keeps_the_savepoints_layout(tmp_path):
    saved = tmp_path / "saved"
    (saved / "checkpoint" / "offsets").mkdir(parents=True)
    kept_layout(saved, (8, 32))
    new = tmp_path / "new"
    restore(str(saved), new)
    assert kept_layout(new, (16, 64)) == (8, 32)


def test_a_job_keeps_where_its_keyed_stages_first_ran(tmp_path):
    job = tmp_path / "job"
    assert kept_jvm_stages(job, True, loaded=True) is True
    assert kept_jvm_stages(job, False, loaded=True) is True, "its state is the JVM stage's: the setting cannot move it"
    other = tmp_path / "other"
    assert kept_jvm_stages(other, False, loaded=True) is False
    assert kept_jvm_stages(other, True, loaded=True) is False
    assert (other / OPERATORS_FILE).read_text() == "python\n"


def test_a_job_from_before_the_jvm_stage_keeps_the_python_one(tmp_path):
    job = tmp_path / "job"
    kept_layout(job, (16, 64))  # a job that ran before the choice was kept
    assert kept_jvm_stages(job, True, loaded=True) is False


def test_without_the_jvm_stage_the_python_one_runs_and_state_of_the_jvm_one_is_refused(tmp_path):
    assert kept_jvm_stages(tmp_path / "new", True, loaded=False) is False
    job = tmp_path / "job"
    job.mkdir()
    (job / OPERATORS_FILE).write_text("jvm\n")
    with pytest.raises(ExecutionError) as raised:
        kept_jvm_stages(job, True, loaded=False)
    assert "scripts/jvm-deps stages" in raised.value.hint


def test_a_savepoint_copy_keeps_where_its_keyed_stages_ran(tmp_path):
    saved = tmp_path / "saved"
    (saved / "checkpoint" / "offsets").mkdir(parents=True)
    kept_jvm_stages(saved, True, loaded=True)
    kept_layout(saved, (16, 64))
    new = tmp_path / "new"
    restore(str(saved), new)
    assert kept_jvm_stages(new, False, loaded=True) is True


def test_a_savepoint_copy_keeps_the_first_event_time_of_bounded_datagen_tables(tmp_path):
    saved = tmp_path / "saved"
    (saved / "checkpoint" / "offsets").mkdir(parents=True)
    (saved / "datagen").mkdir()
    (saved / "datagen" / "orders.start").write_text("1700000000000")
    new = tmp_path / "new"
    restore(str(saved), new)
    assert (new / "datagen" / "orders.start").read_text() == "1700000000000"


def test_a_layout_from_before_sub_buckets_is_refused_with_a_way_out(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / BUCKETS_FILE).write_text("1024")
    with pytest.raises(ExecutionError) as raised:
        kept_layout(job, (16, 64))
    assert "older keyed stage" in raised.value.message and "without this savepoint" in raised.value.hint
