"""Jobs on local Spark, driven through the session as a user does: restarts after a failure, a stalled batch in
SHOW JOBS, and STOP JOB ... WITH SAVEPOINT / RESUME JOB (also from a new shell) with no row lost or repeated.

A failure is made real and deterministic with the print sink: it writes to the session's print stream on the
driver, inside the micro-batch, so a stream whose first write raises fails the job's query once (and one whose
write blocks holds a batch open).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from tests.sessions import embedded_options
from shell.errors import CatalogError, ExecutionError
from shell.jobs.registry import FINISHED, JOB_COLUMNS, RESTARTING, RUNNING, STOPPED
from shell.results import JobStarted, Message, Rows
from shell.session import Session
from tests.spark.helpers import run, wait_for



def five_rows(folder: Path) -> str:
    """A bounded table `gen` of ids 1 to 5 (files: a restarted job reads the same files again from its checkpoint),
    and a print table `sink`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ids.json").write_text("".join(f'{{"id": {i}}}\n' for i in range(1, 6)), encoding="utf-8")
    return f"""
    CREATE TEMPORARY TABLE gen (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json');
    CREATE TEMPORARY TABLE sink (id BIGINT) WITH ('connector' = 'print');
    """


class FlakyStream:
    """A print stream whose first write fails (the job's query with it); later writes are kept."""

    def __init__(self):
        self.lines: list[str] = []
        self.failed = False

    def write(self, text: str) -> None:
        if not self.failed:
            self.failed = True
            raise OSError("the terminal went away")
        self.lines.append(text)

    def flush(self) -> None:
        pass


class BlockingStream:
    """A print stream whose first write blocks until released: a micro-batch that does not complete."""

    def __init__(self):
        self.release = threading.Event()
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.release.wait(120)
        self.lines.append(text)

    def flush(self) -> None:
        pass


def show_job(session, job_id: str) -> dict:
    result = run(session, "SHOW JOBS;")
    assert isinstance(result, Rows) and result.columns == JOB_COLUMNS
    return next(dict(zip(result.columns, row)) for row in result.rows if row[0] == job_id)


def test_a_failed_job_is_restarted_from_its_checkpoint_and_says_so(tmp_path, spark_runtime):
    out = FlakyStream()
    session = Session(embedded_options(home=tmp_path / "home", print_stream=out), runtime=spark_runtime)
    try:
        run(session, five_rows(tmp_path / "in") + "SET 'restart-strategy.type' = 'fixed-delay'; "
                                                   "SET 'restart-strategy.fixed-delay.delay' = '3 s';")
        started = run(session, "INSERT INTO sink SELECT id FROM gen;")
        seen = wait_for(lambda: (lambda row: row if row["status"] == RESTARTING and row["detail"] != "restarting" else None)(
            show_job(session, started.job_id)), 120, "the job RESTARTING in SHOW JOBS", interval=0.2)  # fmt: skip
        assert seen["last failure"] == "OSError: the terminal went away"  # the cause, not Spark's traceback
        assert seen["restarts"] == 0 and seen["detail"].startswith("restart 1 of 3 in "), seen
        assert session.jobs.wait_all() == []
        done = show_job(session, started.job_id)
        assert (done["status"], done["restarts"], done["last failure"]) == (FINISHED, 1, "OSError: the terminal went away")
        assert sorted(out.lines) == [f"+I[{i}]\n" for i in range(1, 6)]  # the failed batch ran again, once
    finally:
        session.close()


def test_with_restart_strategy_none_a_failed_job_stays_failed(tmp_path, spark_runtime):
    session = Session(embedded_options(home=tmp_path / "home", print_stream=FlakyStream()), runtime=spark_runtime)
    try:
        run(session, five_rows(tmp_path / "in") + "SET 'restart-strategy.type' = 'none';")
        job = session.jobs.get(run(session, "INSERT INTO sink SELECT id FROM gen;").job_id)
        assert session.jobs.wait_all() == [job]
        assert (job.status, job.restarts, job.failure) == ("FAILED", 0, "OSError: the terminal went away")
    finally:
        session.close()


def test_show_jobs_says_when_a_batch_does_not_complete(tmp_path, spark_runtime):
    out = BlockingStream()
    session = Session(embedded_options(home=tmp_path / "home", print_stream=out), runtime=spark_runtime)
    try:
        run(session, five_rows(tmp_path / "in") + "SET 'execution.checkpointing.interval' = '200 ms';")  # reported after 5 s
        started = run(session, "INSERT INTO sink SELECT id FROM gen;")
        row = wait_for(lambda: (lambda r: r if r["detail"] else None)(show_job(session, started.job_id)), 120,
                       "a stall in SHOW JOBS", interval=0.5)  # fmt: skip
        assert row["status"] == RUNNING
        assert row["detail"].startswith("no batch completed for ") and "Spark: Processing new data" in row["detail"]
        out.release.set()
        assert session.jobs.wait_all() == []
        assert show_job(session, started.job_id)["detail"] is None
    finally:
        out.release.set()
        session.close()


# ---- savepoints ----------------------------------------------------------------------------------------------


def put(folder: Path, name: str, ids) -> None:
    """A JSON-lines file of ids, written aside and renamed in (a watched directory sees files whole)."""
    folder.mkdir(parents=True, exist_ok=True)
    hidden = folder / f".{name}.tmp"
    hidden.write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")
    os.rename(hidden, folder / name)


def ids_in(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    ids = []
    for path in folder.rglob("*"):
        if path.is_file() and not any(p.startswith(("_", ".")) for p in path.relative_to(folder).parts):
            ids += [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines() if line]
    return sorted(ids)


def wait_ids(folder: Path, count: int) -> list[int]:
    return wait_for(lambda: (lambda got: got if len(got) >= count else None)(ids_in(folder)), 120,
                    f"{count} rows in {folder}")  # fmt: skip


def tables(inbox: Path, outbox: Path, name: str = "out") -> str:
    return f"""
    CREATE TABLE IF NOT EXISTS src (id INT) WITH ('connector' = 'filesystem', 'path' = '{inbox}', 'format' = 'json',
      'source.monitor-interval' = '1 s');
    CREATE TABLE IF NOT EXISTS {name} (id INT) WITH ('connector' = 'filesystem', 'path' = '{outbox}', 'format' = 'json');
    """


def test_stop_with_savepoint_and_resume_in_a_new_shell_loses_and_repeats_nothing(tmp_path, spark_runtime):
    home, inbox, outbox = tmp_path / "home", tmp_path / "in", tmp_path / "out"
    put(inbox, "a.json", range(0, 100))
    first = Session(embedded_options(home=home), runtime=spark_runtime)
    try:
        run(first, tables(inbox, outbox) + "SET 'pipeline.name' = 'copy-ids';")
        job_id = run(first, "INSERT INTO out SELECT id FROM src;").job_id
        wait_ids(outbox, 100)
        stopped = run(first, f"STOP JOB '{job_id}' WITH SAVEPOINT;")
        assert isinstance(stopped, Message) and str(home / "jobs" / job_id) in stopped.text
        assert f"RESUME JOB '{job_id}'" in stopped.text
        row = show_job(first, job_id)
        assert (row["status"], row["detail"]) == (STOPPED, f"savepoint kept; RESUME JOB '{job_id}' continues it")
        saved = json.loads((home / "jobs" / job_id / "job.json").read_text())
        assert (saved["name"], saved["target"], saved["statement"]) == (
            "copy-ids", "out", "INSERT INTO out SELECT id FROM src")  # fmt: skip
    finally:
        first.close()

    put(inbox, "b.json", range(100, 200))  # arrives while no job runs
    second = Session(embedded_options(home=home), runtime=spark_runtime)  # the shell restarted
    try:
        assert show_job(second, job_id)["status"] == STOPPED
        resumed = run(second, f"RESUME JOB '{job_id}';")
        assert resumed == JobStarted(job_id, "copy-ids")
        wait_ids(outbox, 200)
        put(inbox, "c.json", range(200, 300))
        wait_ids(outbox, 300)
        time.sleep(3)  # a few more (empty) batches: nothing may come twice
        assert ids_in(outbox) == list(range(300))
        assert show_job(second, job_id)["status"] == RUNNING
        run(second, f"STOP JOB '{job_id}';")
        assert not (home / "jobs" / job_id).exists()  # a plain stop keeps no state
    finally:
        second.close()


def test_execution_savepoint_path_starts_a_new_job_where_the_old_one_stopped(tmp_path, spark_runtime):
    home, inbox = tmp_path / "home", tmp_path / "in"
    put(inbox, "a.json", range(0, 10))
    session = Session(embedded_options(home=home), runtime=spark_runtime)
    try:
        run(session, tables(inbox, tmp_path / "out") + tables(inbox, tmp_path / "copy", name="copy"))
        old = run(session, "INSERT INTO out SELECT id FROM src;").job_id
        wait_ids(tmp_path / "out", 10)
        run(session, f"STOP JOB '{old}' WITH SAVEPOINT;")
        run(session, f"SET 'execution.savepoint.path' = '{home / 'jobs' / old}';")
        new = run(session, "INSERT INTO copy SELECT id FROM src;").job_id
        assert new != old and session.settings.get("execution.savepoint.path") is None  # used once
        put(inbox, "b.json", range(10, 15))
        assert wait_ids(tmp_path / "copy", 5) == list(range(10, 15))  # a.json was read before the savepoint
        time.sleep(3)
        assert ids_in(tmp_path / "copy") == list(range(10, 15))
        assert show_job(session, old)["status"] == STOPPED  # the savepoint itself is untouched
    finally:
        session.close()


def test_resume_refuses_what_it_cannot_resume(tmp_path, spark_runtime):
    session = Session(embedded_options(home=tmp_path / "home"), runtime=spark_runtime)
    try:
        run(session, "CREATE TEMPORARY TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1');"
                     "CREATE TEMPORARY TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');")  # fmt: skip
        job_id = run(session, "INSERT INTO hole SELECT id FROM ticks;").job_id
        with pytest.raises(ExecutionError, match=f"job '{job_id}' is running"):
            run(session, f"RESUME JOB '{job_id}';")
        run(session, f"STOP JOB '{job_id}';")
        with pytest.raises(ExecutionError, match="stopped without a savepoint"):
            run(session, f"RESUME JOB '{job_id}';")
        with pytest.raises(CatalogError, match="unknown job 'nope'"):
            run(session, "RESUME JOB 'nope';")
    finally:
        session.close()


# ---- checkpoints -----------------------------------------------------------------------------------------------


def test_a_job_keeps_the_last_ten_batches_of_its_checkpoint_not_a_hundred(tmp_path, spark_runtime):
    """A job restarts from its last batch: older ones are deleted as it goes (Spark's default keeps 100)."""
    session = Session(embedded_options(home=tmp_path / "home"), runtime=spark_runtime)
    try:
        run(session, "CREATE TEMPORARY TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', "
                     "'rows-per-second' = '50'); CREATE TEMPORARY TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');"
                     "SET 'execution.checkpointing.interval' = '200 ms';")  # fmt: skip
        job = session.jobs.get(run(session, "INSERT INTO hole SELECT id FROM ticks;").job_id)
        commits = job.checkpoint / "commits"

        def committed() -> list[int]:
            return sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit()) if commits.is_dir() else []

        ids = wait_for(lambda: (lambda ids: ids if ids and ids[-1] >= 15 else None)(committed()), 120,
                       "16 batches committed")  # fmt: skip
        run(session, f"STOP JOB '{job.job_id}';")
        assert ids[0] > 0 and len(ids) <= 12, ids  # batch 0 is gone; the last ten stay (and one or two in flight)
    finally:
        session.close()


def test_a_static_spark_setting_does_not_stop_a_job_from_starting(tmp_path, spark_runtime):
    """`SET 'spark.eventLog.enabled' = ...` is a setting Spark takes only when it starts (a job process starts its
    own Spark with it); a Spark already running refuses to change it, which once failed every INSERT after it."""
    out = FlakyStream()
    out.failed = True  # every write kept
    session = Session(embedded_options(home=tmp_path / "home", print_stream=out), runtime=spark_runtime)
    try:
        run(session, five_rows(tmp_path / "in") + "SET 'spark.eventLog.enabled' = 'false';"
                                                   "SET 'spark.sql.streaming.pollingDelay' = '50ms';")
        job = session.jobs.get(run(session, "INSERT INTO sink SELECT id FROM gen;").job_id)
        assert session.jobs.wait_all() == []
        assert job.status == FINISHED
        assert sorted(out.lines) == [f"+I[{i}]\n" for i in range(1, 6)]
    finally:
        session.close()
