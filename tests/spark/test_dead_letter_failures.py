"""Keeping bad records can fail (a folder that cannot be written): the job, or the SELECT, says so with the reason
instead of running on as if nothing happened. The failures are real: a dead-letter folder whose parent is a
regular file (the tests run as root, so permissions would not stop a write)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.sessions import embedded_options
from shell.jobs.registry import DEGRADED, FAILED, JOB_COLUMNS
from shell.results import Rows
from shell.session import Session
from tests.spark.helpers import changes, run, wait_for


class Lines:
    """A print stream that keeps what the print sink writes."""

    def __init__(self):
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.lines.append(text)

    def flush(self) -> None:
        pass


def write(path: Path, *lines: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    hidden = path.with_name(f".{path.name}.tmp")
    hidden.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    hidden.rename(path)  # a watched directory sees the file whole


def not_a_folder(tmp_path: Path) -> Path:
    """A path no folder can be made at: its parent is a regular file."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    return blocker / "errors"


def show_job(session, job_id: str) -> dict:
    result = run(session, "SHOW JOBS;")
    assert isinstance(result, Rows)
    return next(dict(zip(JOB_COLUMNS, row)) for row in result.rows if row[0] == job_id)


def test_a_dead_letter_query_that_fails_makes_its_job_degraded_and_the_job_goes_on(tmp_path, spark_runtime):
    """A grouped job over a watched directory keeps the directory's bad records with a second query. Its folder
    is replaced by a file while it runs: its next batch fails, and SHOW JOBS says DEGRADED with the reason, while
    the job itself keeps counting."""
    out = Lines()
    session = Session(embedded_options(home=tmp_path / "home", print_stream=out), runtime=spark_runtime)
    folder, errors = tmp_path / "in", tmp_path / "errors"
    write(folder / "a.json", '{"id": 1}', "{not json")
    try:
        run(session, f"""
            SET 'table.exec.errors.interval' = '1 s';
            CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json',
              'source.monitor-interval' = '1 s', 'errors.path' = '{errors}');
            CREATE TEMPORARY TABLE counts (id INT, n BIGINT) WITH ('connector' = 'print');""")
        job_id = run(session, "INSERT INTO counts SELECT id, COUNT(*) FROM t GROUP BY id;").job_id
        job = session.jobs.get(job_id)
        assert [q.table for q in job.side_queries] == ["t"]
        wait_for(lambda: run(session, "SHOW ERRORS FOR t;").rows, 120, "the first bad record kept")
        assert show_job(session, job_id)["status"] == "RUNNING"

        shutil.rmtree(errors / job_id)
        (errors / job_id).write_text("not a folder any more")
        write(folder / "b.json", '{"id": 1}', "{still not json")
        row = wait_for(lambda: (lambda r: r if r["status"] == DEGRADED else None)(show_job(session, job_id)), 120,
                       "the job DEGRADED in SHOW JOBS")  # fmt: skip
        # the cause is Spark's, and depends on which of its writes meets the file first: FileAlreadyExistsException:
        # Destination exists and is not a directory: ..., or a FileNotFoundException of its metadata log
        assert re.fullmatch(r"bad records of table t are not kept: \w+: .+", row["detail"]), row
        assert row["last failure"] is None, "the job itself did not fail"

        write(folder / "c.json", '{"id": 1}')
        wait_for(lambda: "+U[1, 3]\n" in out.lines or "+I[1, 3]\n" in out.lines, 120, "the job still counting")
        assert show_job(session, job_id)["status"] == DEGRADED
    finally:
        session.close()


def test_a_job_that_cannot_write_its_bad_records_fails_with_the_reason(tmp_path, spark_runtime):
    """A filtering job keeps its bad records in its own micro-batch: it cannot go on without losing them, so the
    batch fails, and the job is FAILED (here without restarts) with the folder and the cause."""
    session = Session(embedded_options(home=tmp_path / "home", print_stream=Lines()), runtime=spark_runtime)
    folder, errors = tmp_path / "in", not_a_folder(tmp_path)
    write(folder / "a.json", '{"id": 1}', "{not json", '{"id": 2}')
    try:
        run(session, f"""
            SET 'restart-strategy.type' = 'none';
            CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json',
              'errors.path' = '{errors}');
            CREATE TEMPORARY TABLE sink (id INT) WITH ('connector' = 'print');""")
        job = session.jobs.get(run(session, "INSERT INTO sink SELECT id FROM t WHERE id > 0;").job_id)
        assert session.jobs.wait_all() == [job]
        assert job.status == FAILED
        assert job.failure.startswith(f"cannot keep the bad records of table t in {errors}: "), job.failure
        assert "Parent path is not a directory" in job.failure
    finally:
        session.close()


def test_a_select_says_when_its_bad_records_are_not_kept(session, tmp_path):
    """A grouped SELECT keeps its bad records with a second query, which cannot start here: the SELECT gives its
    rows and says why the bad records are not kept (the status line in table mode, a warning line otherwise)."""
    folder, errors = tmp_path / "in", not_a_folder(tmp_path)
    write(folder / "a.json", '{"id": 1}', "{not json", '{"id": 1}')
    run(session, f"""CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}',
        'format' = 'json', 'errors.path' = '{errors}');""")
    stream = run(session, "SELECT id, COUNT(*) AS n FROM t GROUP BY id;")
    got = changes(stream)
    assert got[-1] == ("+U", (1, 2)) or got[-1] == ("+I", (1, 2)), got
    note = stream.notes.get("dead-letters:t")
    assert note is not None and note.startswith("bad records of table t are not kept: "), stream.notes
    assert "Parent path is not a directory" in note
