"""Jobs without Spark: restarts with backoff, stalled jobs, savepoints, records and the states of jobs run elsewhere.

Spark's StreamingQuery is replaced by a small fake with the same surface (isActive, exception(), awaitTermination,
stop(), status, lastProgress); the watcher thread runs for real, with a short sampling interval.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from shell.config import Settings
from shell.errors import CatalogError, ExecutionError, OptionError
from shell.jobs import supervisor as supervisor_module
from shell.jobs.registry import (
    CANCELED,
    DEGRADED,
    FAILED,
    FINISHED,
    JOB_COLUMNS,
    RESTARTING,
    RUNNING,
    STOPPED,
    Job,
    JobRegistry,
    stall_threshold_s,
)
from shell.restart import EXPONENTIAL_DELAY, FIXED_DELAY, NONE, RestartStrategy
from shell.jobs.record import JOB_FILE, JobRecord as SavedJob

pytestmark = pytest.mark.unit

IDLE = {"message": "Waiting for next trigger", "isDataAvailable": False, "isTriggerActive": False}


class FakeQuery:
    def __init__(self, fail_with: BaseException | None = None):
        self._ended = threading.Event()
        self._error: BaseException | None = None
        self.status = dict(IDLE)
        self.lastProgress = None
        self.stopped = False
        if fail_with is not None:
            self.fail(fail_with)

    @property
    def isActive(self) -> bool:  # noqa: N802 - Spark's name
        return not self._ended.is_set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._ended.set()

    def finish(self) -> None:
        self._ended.set()

    def stop(self) -> None:
        self.stopped = True
        self._ended.set()

    def exception(self):
        return self._error

    def awaitTermination(self, timeout=None):  # noqa: N802
        ended = self._ended.wait(timeout)
        if ended and self._error is not None:
            raise self._error
        return ended


@pytest.fixture(autouse=True)
def fast_watcher(monkeypatch):
    monkeypatch.setattr(supervisor_module, "SAMPLE_S", 0.02)


def wait_until(predicate, timeout: float = 5.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"{what}: not within {timeout} s")


def make_job(tmp_path: Path, query=None, restart=None, strategy=None, job_id="j1", bounded=False) -> Job:
    directory = tmp_path / "jobs" / job_id
    (directory / "checkpoint").mkdir(parents=True, exist_ok=True)
    return Job(job_id, "insert-into_out", "INSERT INTO out SELECT * FROM src;", query or FakeQuery(), directory,
               bounded, restart=restart, strategy=strategy or RestartStrategy(FIXED_DELAY, 3, 50))  # fmt: skip


def record_of(job: Job, target: str = "out") -> SavedJob:
    """The record a session writes when it starts `job`."""
    return SavedJob(job.job_id, job.name, job.statement, target, str(job.checkpoint), "2026-01-01T00:00:00Z")


def start(registry: JobRegistry, job: Job) -> Job:
    """Register `job` with its record, as the session does."""
    return registry.add(job, record_of(job))


class Restarts:
    """A restart callable: hands out the given queries in turn and counts its calls."""

    def __init__(self, *queries):
        self.queries = list(queries)
        self.calls = 0

    def __call__(self):
        self.calls += 1
        item = self.queries.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item, []


# ---- restarts -------------------------------------------------------------------------------------------------


def test_a_failed_job_restarts_from_its_checkpoint_after_the_delay(tmp_path):
    first, second = FakeQuery(), FakeQuery()
    restart = Restarts(second)
    job = JobRegistry(tmp_path).add(make_job(tmp_path, first, restart, RestartStrategy(FIXED_DELAY, 3, 1500)))
    assert job.status == RUNNING and job.failure is None
    first.fail(ExecutionError("pulsar: cannot reach 127.0.0.1:6650 (Connection refused)"))
    assert job.status == RESTARTING  # at once: the watcher is about to restart it
    wait_until(lambda: (job.detail() or "").startswith("restart 1 of 3 in 1 s"), what="the next restart in SHOW JOBS")
    assert restart.calls == 0 and job.status == RESTARTING  # it waits the delay first
    assert job.failure == "pulsar: cannot reach 127.0.0.1:6650 (Connection refused)"
    wait_until(lambda: job.status == RUNNING, what="running again")
    assert job.query is second and job.restarts == 1 and restart.calls == 1
    assert job.failure == "pulsar: cannot reach 127.0.0.1:6650 (Connection refused)"  # the last failure stays shown
    second.finish()
    job.await_end()
    assert job.status == FINISHED


def test_a_job_that_keeps_failing_is_failed_after_the_attempts(tmp_path):
    restart = Restarts(FakeQuery(ValueError("two")), ExecutionError("three"))
    job = make_job(tmp_path, FakeQuery(ValueError("one")), restart, RestartStrategy(FIXED_DELAY, 2, 10))
    registry = JobRegistry(tmp_path)
    registry.add(job)
    assert registry.wait_all() == [job]
    assert (job.status, job.restarts, restart.calls) == (FAILED, 2, 2)
    assert job.failures == ["ValueError: one", "ValueError: two", "three"]  # a restart that raises counts too
    assert job.detail() == "gave up after 2 restarts"
    row = dict(zip(JOB_COLUMNS, registry.rows()[0]))
    assert (row["status"], row["restarts"], row["last failure"]) == (FAILED, 2, "three")


def test_without_a_restart_callable_or_with_strategy_none_a_failure_is_final(tmp_path):
    for restart, strategy in ((None, RestartStrategy()), (Restarts(FakeQuery()), RestartStrategy(NONE, 0))):
        job = make_job(tmp_path, FakeQuery(), restart, strategy)
        assert job.status == RUNNING
        job.query.fail(RuntimeError("boom"))
        registry = JobRegistry(tmp_path)
        registry.add(job)
        assert registry.wait_all() == [job]
        assert (job.status, job.failure, job.restarts) == (FAILED, "RuntimeError: boom", 0)


def test_stopping_a_restarting_job_cancels_the_restart(tmp_path):
    restart = Restarts(FakeQuery())
    job = JobRegistry(tmp_path).add(make_job(tmp_path, FakeQuery(), restart, RestartStrategy(FIXED_DELAY, 3, 60_000)))
    job.query.fail(ValueError("x"))
    wait_until(lambda: job.status == RESTARTING)
    registry = JobRegistry(tmp_path)
    registry.jobs[job.job_id] = job
    assert registry.running() == [job]  # restarting jobs count as running (quit asks, stop_all stops them)
    registry.stop(job.job_id)
    job.await_end()
    assert (job.status, restart.calls) == (CANCELED, 0)


def test_a_finished_bounded_job_is_not_restarted(tmp_path):
    restart = Restarts()
    job = JobRegistry(tmp_path).add(make_job(tmp_path, FakeQuery(), restart, bounded=True))
    job.query.finish()
    job.await_end()
    assert (job.status, restart.calls, job.failure) == (FINISHED, 0, None)


def test_restart_strategies():
    fixed = RestartStrategy(FIXED_DELAY, attempts=3, delay_ms=10_000)
    assert [fixed.delay_s(n) for n in (1, 2, 3, 4)] == [10, 10, 10, None]
    exp = RestartStrategy(EXPONENTIAL_DELAY, attempts=6, delay_ms=1000, max_backoff_ms=5000, multiplier=2, jitter=0)
    assert [exp.delay_s(n) for n in range(1, 8)] == [1, 2, 4, 5, 5, 5, None]
    jittered = RestartStrategy(EXPONENTIAL_DELAY, attempts=3, delay_ms=1000, jitter=0.1)
    assert jittered.delay_s(1, rand=lambda: 0.0) == pytest.approx(0.9)
    assert jittered.delay_s(1, rand=lambda: 1.0) == pytest.approx(1.1)
    assert exp.resets(3600) and not exp.resets(10) and not fixed.resets(10**6)
    assert RestartStrategy(NONE, 0).delay_s(1) is None


def test_restart_settings_use_flinks_keys_and_defaults():
    settings = Settings()
    default = RestartStrategy.from_settings(settings.get)
    assert (default.kind, default.attempts, default.delay_ms, default.max_backoff_ms) == (EXPONENTIAL_DELAY, 15, 1000, 60_000)
    waits = [default.delay_s(n, rand=lambda: 0.5) for n in range(1, default.attempts + 1)]
    assert sum(waits[:10]) > 100 and sum(waits) > 300, "a broker down 108 s took ten restarts: the default has room"
    settings.set("restart-strategy.type", "exponentialdelay")  # Flink's other spelling
    settings.set("restart-strategy.exponential-delay.initial-backoff", "2 s")
    settings.set("restart-strategy.exponential-delay.max-backoff", "30 s")
    strategy = RestartStrategy.from_settings(settings.get)
    assert (strategy.kind, strategy.delay_ms, strategy.max_backoff_ms, strategy.multiplier) == (
        EXPONENTIAL_DELAY, 2000, 30_000, 1.5)  # fmt: skip
    settings.set("restart-strategy.type", "NONE")
    assert RestartStrategy.from_settings(settings.get).kind == NONE
    with pytest.raises(OptionError, match="must be one of none, fixed-delay, exponential-delay"):
        settings.set("restart-strategy.type", "failure-rate")
    with pytest.raises(OptionError, match="restart-strategy.fixed-delay.delay"):
        settings.set("restart-strategy.fixed-delay.delay", "soon")
    with pytest.raises(OptionError, match="from 0 to 1"):
        settings.set("restart-strategy.exponential-delay.jitter-factor", "2")


def test_the_registry_gives_new_jobs_the_sessions_strategy(tmp_path):
    settings = Settings()
    settings.set("restart-strategy.type", "fixed-delay")
    settings.set("restart-strategy.fixed-delay.attempts", "7")
    settings.set("execution.checkpointing.interval", "2 s")
    job = JobRegistry(tmp_path, settings).add(make_job(tmp_path))
    assert job.strategy.attempts == 7 and job.stall_after_s == 20
    job.stop()


# ---- stalled jobs ---------------------------------------------------------------------------------------------


def test_a_batch_that_does_not_complete_is_reported_with_sparks_message(tmp_path):
    query = FakeQuery()
    job = make_job(tmp_path, query)
    job.stall_after_s = 10
    query.status = {"message": "Getting offsets from KafkaV2[Subscribe[orders]]", "isTriggerActive": True}
    query.lastProgress = {"batchId": 4, "timestamp": "2026-11-21T10:00:00.000Z"}
    job.stall.sample(query, 100.0)
    job.stall.sample(query, 105.0)
    assert job.detail(now=105.0) is None
    job.stall.sample(query, 111.0)
    assert job.detail(now=111.5) == "no batch completed for 12 s; Spark: Getting offsets from KafkaV2[Subscribe[orders]]"
    query.lastProgress = {"batchId": 5, "timestamp": "2026-11-21T10:00:12.000Z"}  # a batch completed
    job.stall.sample(query, 112.0)
    assert job.detail(now=113.0) is None
    query.status = dict(IDLE)  # an idle trigger is not a stall, however old the last progress is
    job.stall.sample(query, 130.0)
    assert job.detail(now=200.0) is None


def test_the_watcher_notices_a_stall_by_itself(tmp_path):
    query = FakeQuery()
    query.status = {"message": "Processing new data", "isTriggerActive": True}
    registry = JobRegistry(tmp_path)
    job = make_job(tmp_path, query)
    job.stall_after_s = 0.1
    registry.add(job)
    detail = wait_until(lambda: dict(zip(JOB_COLUMNS, registry.rows()[0]))["detail"], what="a stall detail")
    assert detail.startswith("no batch completed for ") and detail.endswith("; Spark: Processing new data")
    job.stop()


def test_the_stall_threshold_follows_the_trigger_interval():
    assert stall_threshold_s("1 s") == 10 and stall_threshold_s("100 ms") == 5 and stall_threshold_s("1 min") == 600


# ---- savepoints -----------------------------------------------------------------------------------------------


def test_stop_with_savepoint_keeps_the_directory_and_records_the_job(tmp_path):
    registry = JobRegistry(tmp_path)
    job = start(registry, make_job(tmp_path))
    record = json.loads((job.directory / JOB_FILE).read_text())  # written when the job started
    assert {k: record[k] for k in ("job_id", "name", "statement", "target", "checkpoint")} == {
        "job_id": "j1", "name": "insert-into_out", "statement": "INSERT INTO out SELECT * FROM src;",
        "target": "out", "checkpoint": str(job.checkpoint)}  # fmt: skip
    assert JobRegistry(tmp_path).get("j1").status == RUNNING, "another shell sees it running (this process runs it)"
    registry.stop(job.job_id, savepoint=True)
    assert job.status == STOPPED and job.query.stopped
    assert job.detail() == "savepoint kept; RESUME JOB 'j1' continues it"
    assert json.loads((job.directory / "state.json").read_text())["status"] == STOPPED
    with pytest.raises(ExecutionError, match="not running"):
        registry.stop("j1")
    assert registry.resumable("j1").statement == job.statement

    later = JobRegistry(tmp_path)  # a new shell on the same home
    assert [s.job_id for s in later.stored_jobs()[0]] == ["j1"]
    row = dict(zip(JOB_COLUMNS, later.rows()[0]))
    assert (row["job id"], row["status"]) == ("j1", STOPPED)
    assert dict(later.describe("j1"))["checkpoint"] == str(job.checkpoint)
    assert later.resumable("j1") == SavedJob.read(job.directory)
    with pytest.raises(ExecutionError, match=r"not running \(it is STOPPED\)"):
        later.stop("j1")
    with later.resuming("j1"):
        assert later.new_directory() == ("j1", job.directory)
    assert later.new_directory()[0] != "j1"


def test_a_job_whose_process_died_is_failed_with_the_reason_and_can_be_resumed(tmp_path):
    registry = JobRegistry(tmp_path)
    job = start(registry, make_job(tmp_path))
    state = json.loads((job.directory / "state.json").read_text())
    assert state["status"] == RUNNING and state["pid"] > 0
    state["pid"] = 2**22 + 7  # no such process: the shell that ran it was killed
    (job.directory / "state.json").write_text(json.dumps(state))
    later = JobRegistry(tmp_path)
    row = dict(zip(JOB_COLUMNS, later.rows()[0]))
    assert row["status"] == FAILED
    assert row["last failure"] == f"the process that ran it (pid {2**22 + 7}) is gone: killed, or its machine restarted"
    assert row["detail"] == "RESUME JOB 'j1' continues it from its last checkpoint"
    assert later.resumable("j1").checkpoint == str(job.checkpoint)
    job.stop()


def savepoint_of(tmp_path, job_id):
    registry = JobRegistry(tmp_path)
    registry.stop(start(registry, make_job(tmp_path, job_id=job_id)).job_id, savepoint=True)
    return tmp_path / "jobs" / job_id / JOB_FILE


@pytest.mark.parametrize(
    "content, reason",
    [
        (None, "not valid JSON (line 4, column 11: Unterminated string starting at)"),  # truncated
        (b"\x00\xff\xfe garbage", "not UTF-8 text: byte 0xff at byte offset 1"),
        (b"[]", "not a job record (not a JSON object)"),
        (b'{"job_id": "bad", "name": 5}', "not a job record ('name' is missing or not a string)"),
    ],
)
def test_an_unreadable_job_record_is_listed_with_its_file_and_reason(tmp_path, content, reason):
    savepoint_of(tmp_path, "good")
    record = savepoint_of(tmp_path, "bad")
    original = record.read_bytes()
    content = original[:60] if content is None else content
    record.write_bytes(content)
    later = JobRegistry(tmp_path)
    rows = [dict(zip(JOB_COLUMNS, row)) for row in later.rows()]
    assert [(r["job id"], r["status"]) for r in rows] == [("good", STOPPED), ("bad", FAILED)]
    where = f"{record}:1:2" if "UTF-8" in reason else str(record)
    action = "restore the file, or remove the job's directory to drop the job"
    assert rows[1]["detail"] == f"job record unreadable: {where}: {reason}; {action}"
    with pytest.raises(ExecutionError) as info:
        later.resumable("bad")
    assert info.value.message == f"cannot read the record of job 'bad': {where}: {reason}; {action}"
    assert record.read_bytes() == content  # left as it is
    assert [s.job_id for s in later.stored_jobs()[0]] == ["good"]


def test_a_job_record_in_another_jobs_directory_is_not_taken_for_it(tmp_path):
    record = savepoint_of(tmp_path, "j1")
    other = tmp_path / "jobs" / "j2" / JOB_FILE
    other.parent.mkdir()
    other.write_bytes(record.read_bytes())
    with pytest.raises(ExecutionError, match="it records job 'j1' but is in the directory of job 'j2'"):
        JobRegistry(tmp_path).resumable("j2")


def test_a_savepoint_the_disk_refuses_leaves_the_job_running(tmp_path, monkeypatch):
    import errno
    import os

    registry = JobRegistry(tmp_path)
    job = start(registry, make_job(tmp_path))

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    before = sorted(p.name for p in job.directory.iterdir())
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(ExecutionError) as info:
        registry.stop("j1", savepoint=True)
    monkeypatch.undo()
    assert info.value.message == (
        f"cannot write the state of job 'j1' ({job.directory / 'state.json'}): No space left on device; "
        "it keeps running"
    )
    assert job.status == "RUNNING" and job.savepoint is None
    assert sorted(p.name for p in job.directory.iterdir()) == before  # no temporary file left
    registry.stop("j1", savepoint=True)  # once there is room again
    assert job.status == STOPPED and SavedJob.read(job.directory).job_id == "j1"


def test_a_plain_stop_removes_the_state_and_cannot_be_resumed(tmp_path):
    registry = JobRegistry(tmp_path)
    job = start(registry, make_job(tmp_path))
    registry.stop(job.job_id)
    assert job.status == CANCELED and not job.directory.exists()
    with pytest.raises(ExecutionError, match="stopped without a savepoint: there is nothing to resume"):
        registry.resumable(job.job_id)
    with pytest.raises(CatalogError, match="unknown job 'nope'"):
        registry.resumable("nope")


def test_a_failed_job_of_this_session_can_be_resumed_and_a_running_one_cannot(tmp_path):
    registry = JobRegistry(tmp_path)
    failed = start(registry, make_job(tmp_path, FakeQuery(ValueError("x")), job_id="f1"))
    failed.await_end()
    assert json.loads((failed.directory / "state.json").read_text())["status"] == FAILED, "written as it ended"
    assert registry.resumable("f1").checkpoint == str(failed.checkpoint)
    running = start(registry, make_job(tmp_path, job_id="r1"))
    with pytest.raises(ExecutionError, match="job 'r1' is running"):
        registry.resumable("r1")
    running.stop()


def test_the_stop_with_savepoint_waits_for_the_running_batch(tmp_path):
    query = FakeQuery()
    query.status = {"message": "Processing new data", "isTriggerActive": True}
    registry = JobRegistry(tmp_path)
    job = registry.add(make_job(tmp_path, query))
    threading.Timer(0.3, lambda: query.status.update(IDLE)).start()
    began = time.monotonic()
    registry.stop(job.job_id, savepoint=True)
    assert time.monotonic() - began >= 0.25 and query.stopped


def test_execution_savepoint_path_starts_the_next_job_from_a_copy(tmp_path):
    old = tmp_path / "jobs" / "old1"
    (old / "checkpoint" / "offsets").mkdir(parents=True)
    (old / "checkpoint" / "offsets" / "0").write_text("v1\n{}\n")
    (old / "checkpoint" / "metadata").write_text('{"id":"q-1"}')
    (old / "dead-letters" / "src").mkdir(parents=True)
    (old / "dead-letters" / "src" / "metadata").write_text('{"id":"q-2"}')
    settings = Settings()
    settings.set("execution.savepoint.path", str(old))
    registry = JobRegistry(tmp_path, settings)
    job_id, directory = registry.new_directory()
    assert (directory / "checkpoint" / "offsets" / "0").read_text() == "v1\n{}\n"
    assert json.loads((directory / "checkpoint" / "metadata").read_text())["id"] not in ("q-1", "q-2")  # its own
    assert json.loads((directory / "dead-letters" / "src" / "metadata").read_text())["id"] not in ("q-1", "q-2")
    assert (old / "checkpoint" / "metadata").exists()  # the savepoint itself is untouched
    job = registry.add(make_job(tmp_path, job_id=job_id))
    assert settings.get("execution.savepoint.path") is None  # used once
    job.stop()

    settings.set("execution.savepoint.path", str(old / "checkpoint"))  # the checkpoint itself is accepted too
    assert (registry.new_directory()[1] / "checkpoint" / "offsets").is_dir()
    settings.set("execution.savepoint.path", str(tmp_path / "nothing"))
    with pytest.raises(OptionError, match="is not a savepoint"):
        registry.new_directory()


def test_help_shows_the_job_statements():
    from shell.commands import help_text

    text = help_text("STOP")
    assert "STOP JOB 'id' [WITH SAVEPOINT]" in text and "RESUME JOB 'id'" not in text
    assert "RESUME JOB 'id'" in help_text("RESUME") and "RESTARTING" in help_text("SHOW")


# ---- dead-letter side queries that fail -------------------------------------------------------------------------


def side_query(table: str, query=None, start_error=None):
    from shell.engine.bad_records import DeadLetterQuery

    return DeadLetterQuery(table, query, start_error)


def test_a_side_query_that_fails_makes_the_running_job_degraded_with_the_reason(tmp_path):
    main, side = FakeQuery(), FakeQuery()
    job = make_job(tmp_path, main)
    job.side_queries = [side_query("orders", side)]
    registry = JobRegistry(tmp_path)
    registry.add(job)
    time.sleep(0.1)
    assert job.status == RUNNING and job.detail() is None
    side.fail(OSError("No space left on device"))
    wait_until(lambda: job.status == DEGRADED, what="the job DEGRADED")
    reason = "bad records of table orders are not kept: OSError: No space left on device"
    assert job.detail() == reason and job.side_failure == reason
    (row,) = registry.rows()
    assert (row[JOB_COLUMNS.index("status")], row[JOB_COLUMNS.index("detail")]) == (DEGRADED, reason)
    assert registry.running() == [job], "a degraded job is still running: STOP JOB stops it"
    registry.stop(job.job_id)
    assert job.status == CANCELED and main.stopped


def test_a_side_query_that_cannot_start_makes_the_job_degraded_at_once(tmp_path):
    job = make_job(tmp_path)
    job.side_queries = [side_query("t", start_error=NotADirectoryError("Parent path is not a directory: file:/x"))]
    JobRegistry(tmp_path).add(job)
    wait_until(lambda: job.status == DEGRADED, what="the job DEGRADED")
    assert job.detail() == "bad records of table t are not kept: NotADirectoryError: Parent path is not a directory: file:/x"


def test_a_restart_starts_the_side_queries_again_and_clears_the_reason(tmp_path):
    first, failing_side = FakeQuery(), FakeQuery(fail_with=RuntimeError("side broke"))
    second, healthy_side = FakeQuery(), FakeQuery()
    job = make_job(tmp_path, first, restart=lambda: (second, [side_query("t", healthy_side)]))
    job.side_queries = [side_query("t", failing_side)]
    JobRegistry(tmp_path).add(job)
    wait_until(lambda: job.status == DEGRADED, what="the job DEGRADED")
    first.fail(RuntimeError("main broke"))
    wait_until(lambda: job.query is second and job.status == RUNNING, what="the job running again")
    assert job.detail() is None and job.side_failure is None


def test_a_bounded_job_that_ended_without_its_bad_records_says_so(tmp_path):
    main, side = FakeQuery(), FakeQuery(fail_with=RuntimeError("side broke"))
    job = make_job(tmp_path, main, bounded=True)
    job.side_queries = [side_query("t", side)]
    registry = JobRegistry(tmp_path)
    registry.add(job)
    main.finish()
    assert registry.wait_all() == []
    assert job.status == FINISHED and job.detail() == "bad records of table t are not kept: RuntimeError: side broke"


def test_a_script_warns_about_a_job_that_ended_without_its_bad_records(tmp_path):
    import io
    from types import SimpleNamespace

    from shell.exitcodes import EXIT_OK
    from shell.script import ScriptRunner

    main, side = FakeQuery(), FakeQuery(fail_with=RuntimeError("side broke"))
    job = make_job(tmp_path, main, bounded=True)
    job.side_queries = [side_query("t", side)]
    registry = JobRegistry(tmp_path)
    registry.add(job)
    main.finish()
    err = io.StringIO()
    session = SimpleNamespace(jobs=registry, options=SimpleNamespace(print_stream=None))
    code = ScriptRunner(session, out=io.StringIO(), err=err)._wait_for_jobs()
    assert code == EXIT_OK, "the job's own output is complete"
    assert err.getvalue() == ("streamshell: warning: job j1 (insert-into_out): bad records of table t are not kept: "
                              "RuntimeError: side broke\n")  # fmt: skip


def test_a_job_is_found_by_its_name_the_running_one_first_and_two_running_of_one_name_are_refused(tmp_path):
    registry = JobRegistry(tmp_path)
    old = start(registry, make_job(tmp_path, job_id="j1"))
    registry.stop("j1", savepoint=True)
    new = start(registry, make_job(tmp_path, job_id="j2"))  # the same name, insert-into_out
    assert registry.get("insert-into_out") is new, "the running one"
    assert registry.running_named("insert-into_out") is new
    registry.stop("insert-into_out", savepoint=True)  # STOP JOB by name
    assert new.status == STOPPED
    assert registry.get("insert-into_out").job_id == "j2", "none running: the latest"
    assert registry.resumable("insert-into_out").job_id == "j2"
    assert registry.running_named("insert-into_out") is None and old.status == STOPPED
    a = start(registry, make_job(tmp_path, job_id="j3"))
    b = start(registry, make_job(tmp_path, job_id="j4"))
    with pytest.raises(ExecutionError, match=r"2 running jobs are named 'insert-into_out' \(j3, j4\)"):
        registry.get("insert-into_out")
    with pytest.raises(CatalogError, match="unknown job 'insert-into_ou'") as info:
        registry.get("insert-into_ou")
    assert "insert-into_out" in info.value.hint
    a.stop()
    b.stop()


def test_show_jobs_like_keeps_the_jobs_whose_names_match(tmp_path):
    from shell.session import Session, SessionOptions
    from shell.sql import parse_script

    session = Session(SessionOptions(home=tmp_path))
    try:
        for job_id, name in (("j1", "insert-into_orders"), ("j2", "copy_users"), ("j3", "insert-into_users")):
            directory = tmp_path / "jobs" / job_id
            (directory / "checkpoint").mkdir(parents=True)
            session.jobs.add(Job(job_id, name, "INSERT INTO out SELECT * FROM src;", FakeQuery(), directory, False))

        def names(sql: str) -> list[str]:
            [statement] = parse_script(sql)
            return sorted(dict(zip(JOB_COLUMNS, row))["name"] for row in session.execute(statement).rows)

        assert names("SHOW JOBS") == ["copy_users", "insert-into_orders", "insert-into_users"]
        assert names("SHOW JOBS LIKE 'ins%'") == ["insert-into_orders", "insert-into_users"]
        assert names("SHOW JOBS NOT LIKE 'ins%'") == ["copy_users"]
        assert names("SHOW JOBS LIKE '%_users'") == ["copy_users", "insert-into_users"]
    finally:
        for job in list(session.jobs.jobs.values()):
            job.query.finish()
        session.close()
