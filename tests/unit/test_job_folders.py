"""A job's folder and what is read from it, without Spark: records, states checked against the process that runs
the job, a statement set's combined status, the metrics a job process serves, its printed rows passed on."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid

import pytest

from shell.catalog.model import TableDef, ViewDef
from shell.catalog.store import Catalog
from shell.jobs.batch_log import BATCH_LOG, BatchLog, every_batch, read_batches
from shell.jobs.job import Job, JobSet
from shell.jobs.metrics import JobMetrics, serve
from shell.jobs.output import PrintedRows
from shell.jobs.process import StopRequests
from shell.jobs.record import (
    FAILED,
    FINISHED,
    RUNNING,
    STARTING,
    STOPPED,
    JobRecord,
    JobState,
    describe_exit,
    process_alive,
    process_start,
)
from shell.jobs.stored import StoredJob
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit


def record(tmp_path, **fields) -> tuple[JobRecord, object]:
    directory = tmp_path / "jobs" / "j1"
    directory.mkdir(parents=True, exist_ok=True)
    values = dict(job_id="j1", name="copy", statement="INSERT INTO out SELECT * FROM src;", target="out",
                  checkpoint=str(directory / "checkpoint"), started_at="2026-11-27T10:00:00Z")  # fmt: skip
    values.update(fields)
    return JobRecord(**values), directory


def test_a_record_keeps_settings_and_catalog_and_is_readable_by_its_owner_only(tmp_path):
    (table,) = parse_script("CREATE TEMPORARY TABLE src (id INT, v AS id + 1) WITH ('connector' = 'datagen');")
    catalog = Catalog.open(None)
    catalog.add(table.table, temporary=True)
    catalog.add(ViewDef(name="v", query_sql="SELECT id FROM src"))
    written, directory = record(tmp_path, settings={"pipeline.name": "copy"}, catalog=catalog.snapshot(),
                                master="local[2]")  # fmt: skip
    written.write(directory)
    assert oct((directory / "job.json").stat().st_mode & 0o777) == "0o600"
    read = JobRecord.read(directory)
    assert read == written
    again = Catalog.from_snapshot(read.catalog)
    assert isinstance(again.table("src"), TableDef) and again.table("src") == catalog.table("src")
    assert again.view("v").query_sql == "SELECT id FROM src"


def test_a_record_from_before_states_is_a_savepoint(tmp_path):
    old, directory = record(tmp_path)
    data = {k: v for k, v in old.__dict__.items() if k not in ("started_at", "settings", "catalog", "master")}
    data["stopped_at"] = "2026-11-20T10:00:00Z"
    (directory / "job.json").write_text(json.dumps({"version": 1, **data}))
    job = StoredJob(directory, JobRecord.read(directory))
    assert job.status == STOPPED and job.record.catalog is None and job.record.started_at == "2026-11-20T10:00:00Z"


@pytest.mark.parametrize(
    "state, status, failure",
    [
        (lambda me: JobState(RUNNING, pid=me, pid_start=process_start(me)), RUNNING, None),
        (lambda me: JobState(RUNNING, pid=me, pid_start=1), FAILED, "is gone"),  # the pid was given to another
        (lambda me: JobState(RUNNING, pid=2**22 + 11), FAILED, "is gone"),
        (lambda me: JobState(STARTING), STARTING, None),  # the shell is spawning it
        (lambda me: JobState(STARTING, updated_at=time.time() - 3600), FAILED, "is gone"),
        (lambda me: JobState(FINISHED, pid=2**22 + 11), FINISHED, None),  # ended: its process is gone, rightly
        (lambda me: JobState(FAILED, failure="the job process (pid 5) killed by signal 9 (SIGKILL)"), FAILED, "SIGKILL"),
    ],
)
def test_a_stored_jobs_status_is_checked_against_its_process(tmp_path, state, status, failure):
    written, directory = record(tmp_path)
    written.write(directory)
    state(os.getpid()).write(directory)
    job = StoredJob(directory, JobRecord.read(directory))
    seen, _, said = job.look()
    assert seen == status
    assert (failure is None and said is None) or failure in said


def test_a_process_is_told_apart_from_a_later_one_with_its_pid_and_a_zombie_is_not_alive():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    started = process_start(child.pid)
    assert process_alive(child.pid, started) and not process_alive(child.pid, started + 1)
    child.send_signal(signal.SIGKILL)
    time.sleep(0.5)  # ended, not yet reaped: a zombie
    assert not process_alive(child.pid, started)
    _, status = os.waitpid(child.pid, 0)
    assert describe_exit(status) == "killed by signal 9 (SIGKILL)"
    assert describe_exit(3 << 8) == "exited with code 3"


class Query:
    def __init__(self, active=True, error=None, reports=()):
        self.isActive, self._error, self.recentProgress = active, error, list(reports)
        self.lastProgress = self.recentProgress[-1] if self.recentProgress else None
        self.status = {"isTriggerActive": False}

    def exception(self):
        return self._error

    def stop(self):
        self.isActive = False


def part(tmp_path, query, name="checkpoint") -> Job:
    return Job("j1", "split", "EXECUTE STATEMENT SET BEGIN ... END;", query, tmp_path, False, checkpoint_name=name)


@pytest.mark.parametrize(
    "first, second, status",
    [
        (Query(), Query(), RUNNING),
        (Query(active=False), Query(), RUNNING),  # one INSERT's input ended, the other runs on
        (Query(active=False), Query(active=False), FINISHED),
        (Query(active=False, error=RuntimeError("x")), Query(), FAILED),  # no restart callable: for good
        (Query(active=False, error=RuntimeError("x")), Query(active=False), FAILED),
    ],
)
def test_a_statement_sets_status_is_its_most_telling_parts(tmp_path, first, second, status):
    job = JobSet([part(tmp_path, first), part(tmp_path, second, "checkpoint-1")])
    assert job.status == status
    assert job.checkpoint == tmp_path / "checkpoint"


def report(run, batch, rows, rate=100.0, late=0, state_rows=0, watermark=None, at="2026-11-27T10:00:00.000Z"):
    return {"runId": run, "batchId": batch, "numInputRows": rows, "inputRowsPerSecond": rate, "timestamp": at,
            "processedRowsPerSecond": rate * 2, "durationMs": {"triggerExecution": 1500, "addBatch": 1200},
            "stateOperators": [{"numRowsTotal": state_rows, "memoryUsedBytes": 4096, "numRowsDroppedByWatermark": late}],
            "eventTime": {"watermark": watermark} if watermark else {}}  # fmt: skip


def test_metrics_count_each_batch_once_across_looks_and_restarts(tmp_path):
    query = Query(reports=[report("r1", 0, 10), report("r1", 1, 20, late=2)])
    job = part(tmp_path, query)
    metrics = JobMetrics("j1", 'split "a"')
    metrics.observe(job)
    query.recentProgress.append(report("r1", 2, 30, state_rows=7, watermark="2026-11-27T10:00:00.000Z"))
    metrics.observe(job)  # batches 0 and 1 again, and 2
    query.recentProgress = [report("r2", 0, 5)]  # restarted: a new run counts its batches from 0 again
    job.restarts = 1
    metrics.observe(job)
    text = metrics.text()
    labels = 'job_id="j1",name="split \\"a\\""'
    assert f"streamshell_job_input_rows_total{{{labels}}} 65" in text
    assert f"streamshell_job_batches_total{{{labels}}} 4" in text
    assert f"streamshell_job_late_rows_total{{{labels}}} 2" in text
    assert f"streamshell_job_restarts_total{{{labels}}} 1" in text
    assert f"streamshell_job_up{{{labels}}} 1" in text
    assert "# TYPE streamshell_job_input_rows_total counter" in text


def test_an_idle_triggers_report_neither_counts_nor_hides_the_batch_that_takes_its_id(tmp_path):
    idle = {"runId": "r1", "batchId": 1, "numInputRows": 0, "timestamp": "2026-11-27T10:00:05.000Z",
            "durationMs": {"latestOffset": 3, "triggerExecution": 4}}  # Spark's report of a look for input, none found
    query = Query(reports=[report("r1", 0, 10), idle])
    job = part(tmp_path, query)
    metrics = JobMetrics("j1", "copy")
    assert [r["batchId"] for _, r in metrics.observe(job)] == [0]
    query.recentProgress.append(report("r1", 1, 34, at="2026-11-27T10:00:09.000Z"))  # then input came: batch 1
    assert [(r["batchId"], r["numInputRows"]) for _, r in metrics.observe(job)] == [(1, 34)]
    assert 'streamshell_job_input_rows_total{job_id="j1",name="copy"} 44' in metrics.text()
    assert 'streamshell_job_batches_total{job_id="j1",name="copy"} 2' in metrics.text()


def test_metrics_are_served_over_http(tmp_path):
    metrics = JobMetrics("j1", "copy")
    metrics.observe(part(tmp_path, Query(reports=[report("r1", 0, 42, watermark="2026-11-27T10:00:00.000Z")])))
    server, url = serve(metrics)
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
            assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    finally:
        server.shutdown()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics")
    assert 'streamshell_job_input_rows_total{job_id="j1",name="copy"} 42' in body
    assert 'streamshell_job_watermark_lag_seconds{job_id="j1",name="copy"} ' in body
    assert 'streamshell_job_state_bytes{job_id="j1",name="copy"} 4096' in body


def test_printed_rows_are_passed_on_a_whole_line_at_a_time_and_once(tmp_path):
    written, directory = record(tmp_path)
    job = StoredJob(directory, written)
    out = io.StringIO()
    printed = PrintedRows(out)
    printed.pass_on([job])  # no print.log yet
    (directory / "print.log").write_text("+I[1, a]\n+I[2, b]\n+I[3")
    printed.pass_on([job])
    printed.pass_on([job])
    assert out.getvalue() == "+I[1, a]\n+I[2, b]\n"
    with open(directory / "print.log", "a") as f:
        f.write(", c]\n")
    printed.pass_on([job])
    assert out.getvalue() == "+I[1, a]\n+I[2, b]\n+I[3, c]\n"


def test_a_statement_sets_savepoint_is_copied_with_every_inserts_checkpoint(tmp_path):
    from shell.jobs.savepoint import restore

    old = tmp_path / "jobs" / "old1"
    for name in ("checkpoint", "checkpoint-1"):
        (old / name / "offsets").mkdir(parents=True)
        (old / name / "metadata").write_text('{"id":"q-%s"}' % name)
    new = tmp_path / "jobs" / "new1"
    new.mkdir(parents=True)
    restore(str(old), new)
    assert sorted(p.name for p in new.iterdir()) == ["checkpoint", "checkpoint-1"]
    ids = {json.loads((new / n / "metadata").read_text())["id"] for n in ("checkpoint", "checkpoint-1")}
    assert len(ids) == 2 and not ids & {"q-checkpoint", "q-checkpoint-1"}, "each copy gets a query id of its own"


def test_a_monitor_records_its_own_childs_death_and_leaves_a_resumed_process_alone(tmp_path):
    from shell.jobs.process import monitor

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)}
    try:
        _monitor_twice(tmp_path, monitor)
    finally:  # the monitor sets the signal handlers of the process it runs in
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def _monitor_twice(tmp_path, monitor) -> None:
    def ended_child(state_pid_is_own: bool) -> int:
        child = os.fork()
        if child == 0:  # the job process: says it runs, or a resumed process in the same folder says so
            JobState(RUNNING, pid=os.getpid() if state_pid_is_own else 1).write(tmp_path)
            os._exit(0)
        return child

    resumed = ended_child(state_pid_is_own=False)
    monitor(tmp_path, resumed)
    assert JobState.read(tmp_path).status == RUNNING, "an old monitor does not overwrite the new process's state"

    mine = ended_child(state_pid_is_own=True)
    monitor(tmp_path, mine)
    ended = JobState.read(tmp_path)
    assert ended.status == FAILED and ended.failure == f"the job process (pid {mine}) exited with code 0", ended


def test_resuming_a_job_whose_state_file_is_a_folder_is_one_line_naming_it(tmp_path, capfd):
    from shell.cli import main

    home = tmp_path / "home"
    folder = home / "jobs" / "abcd1234"
    JobRecord("abcd1234", "insert-into_out", "INSERT INTO out SELECT * FROM t;", "out", str(folder / "checkpoint"),
              "2026-11-27T10:00:00Z", stopped_at="2026-11-27T10:00:00Z").write(folder)  # fmt: skip
    (folder / "state.json").mkdir()
    script = tmp_path / "resume.sql"
    script.write_text("RESUME JOB 'abcd1234';")
    assert main(["--catalog", str(home), "-f", str(script)]) == 1
    err = capfd.readouterr().err
    assert f"cannot start the job's process in {folder}: {folder / 'state.json'}: Is a directory" in err, err
    assert "internal error" not in err and "Traceback" not in err


def test_each_batch_goes_to_the_batch_log_once_and_a_reader_follows_it(tmp_path):
    query = Query(reports=[report("r1", 0, 10), report("r1", 1, 20)])
    job = part(tmp_path, query)
    metrics, log = JobMetrics("j1", "copy"), BatchLog(tmp_path)
    for place, seen in metrics.observe(job):
        log.append(place, seen)
    lines, offset = read_batches(tmp_path)
    assert [(line["query"], line["report"]["batchId"]) for line in lines] == [(0, 0), (0, 1)]
    query.recentProgress.append(report("r1", 2, 30))
    for place, seen in metrics.observe(job):  # batches 0 and 1 again: not logged twice
        log.append(place, seen)
    with (tmp_path / BATCH_LOG).open("a") as out:
        out.write('{"query": 0, "rep')  # a line being written: not read until it is whole
    lines, offset = read_batches(tmp_path, offset)
    assert [line["report"]["batchId"] for line in lines] == [2]
    assert read_batches(tmp_path, offset) == ([], offset)


def test_the_batch_log_rolls_over_and_keeps_one_old_file(tmp_path):
    log = BatchLog(tmp_path, max_bytes=400)
    for batch in range(12):
        log.append(0, {"batchId": batch, "runId": uuid.UUID(int=batch)})  # Spark's run ids are UUIDs
    assert (tmp_path / BATCH_LOG).stat().st_size <= 400
    kept = [line["report"]["batchId"] for line in every_batch(tmp_path)]
    assert kept == sorted(kept) and kept[-1] == 11 and len(kept) < 12
    assert (tmp_path / (BATCH_LOG + ".1")).exists()
    lines, _ = read_batches(tmp_path, offset=10**6)  # a reader past the end of a file that rolled over starts again
    assert lines and lines[-1]["report"]["batchId"] == 11


def test_sigterm_sets_a_flag_that_ends_the_wait_and_asks_for_a_savepoint(tmp_path):
    """The handler takes no lock: a second SIGTERM inside the first one's handler (the monitor forwards one, the end
    of a process session sends another) once left a job process waiting for ever on a lock it held itself."""
    requests = StopRequests(tmp_path)
    assert requests.asked() is None
    requests.on_sigterm()
    requests.on_sigterm()
    started = time.monotonic()
    requests.wait(60)
    assert time.monotonic() - started < 5
    assert requests.asked() is True


def test_a_job_process_stops_waiting_on_two_quick_sigterms(tmp_path):
    code = ("import signal, sys; from pathlib import Path; from shell.jobs.process import StopRequests\n"
            "r = StopRequests(Path(sys.argv[1])); signal.signal(signal.SIGTERM, r.on_sigterm)\n"
            "print('ready', flush=True); r.wait(120); print('asked', r.asked(), flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(signal.SIGTERM)
    child.send_signal(signal.SIGTERM)
    assert child.communicate(timeout=30)[0].strip() == "asked True"


def test_a_job_keeps_the_state_ttl_its_keyed_stage_first_ran_with(tmp_path):
    from shell.engine.state_layout import kept_state_ttl

    assert kept_state_ttl(tmp_path / "job", 3_600_000) == 3_600_000
    assert kept_state_ttl(tmp_path / "job", 0) == 3_600_000, "a TTL set or reset later does not change the job's"
    assert kept_state_ttl(tmp_path / "other", 0) == 0
    assert kept_state_ttl(tmp_path / "older", 60_000, built_before=True) == 0, "its state was built without one"
