"""The bottom toolbar: running jobs, result mode and Spark's state, with job states asked at most once a second."""

from __future__ import annotations

from dataclasses import dataclass, field

from shell.config import Settings
from shell.repl.toolbar import Toolbar


@dataclass
class Runtime:
    started: bool = False
    starting: bool = True
    _future: object = object()


@dataclass
class Jobs:
    jobs: dict = field(default_factory=dict)
    calls: int = 0

    def running_in_home(self) -> int:
        self.calls += 1
        return len(self.jobs)


@dataclass
class Session:
    runtime: Runtime = field(default_factory=Runtime)
    jobs: Jobs = field(default_factory=Jobs)
    settings: Settings = field(default_factory=Settings)

    def result_mode(self, interactive: bool) -> str:
        return self.settings.get("sql-client.execution.result-mode") or "table"


def text(toolbar: Toolbar) -> str:
    return "".join(part for _, part in toolbar())


def test_toolbar_shows_jobs_mode_and_spark():
    session = Session()
    toolbar = Toolbar(session, max_age=0)
    assert "0 jobs running" in text(toolbar)
    assert "result mode: table" in text(toolbar) and "Spark: starting…" in text(toolbar)
    session.jobs.jobs = {"a": object()}
    session.settings.set("sql-client.execution.result-mode", "changelog")
    session.runtime.started, session.runtime.starting = True, False
    shown = text(toolbar)
    assert "1 job running" in shown and "result mode: changelog" in shown and "Spark: ready" in shown


def test_job_states_are_asked_at_most_once_per_interval():
    session = Session()
    session.jobs.jobs = {"a": object()}
    toolbar = Toolbar(session, max_age=60)
    for _ in range(5):
        text(toolbar)
    assert session.jobs.calls == 1


def test_a_failing_job_lookup_does_not_break_the_prompt():
    session = Session()
    session.jobs.jobs = {"a": object()}

    def broken() -> int:
        raise OSError("jobs folder unreadable")

    session.jobs.running_in_home = broken
    assert "0 jobs running" in text(Toolbar(session, max_age=0))


def test_the_count_includes_detached_jobs_of_the_home_and_drops_them_when_they_end(tmp_path):
    """A job started by another shell (or by this one, detached) runs in its own process and is known by its folder
    alone: the status line counts it while its process lives."""
    import subprocess
    import sys

    from shell.jobs.record import JobRecord, JobState, process_start
    from shell.jobs.registry import JobRegistry

    registry = JobRegistry(tmp_path)
    session = Session()
    session.jobs = registry
    toolbar = Toolbar(session, max_age=0)
    assert "0 jobs running" in text(toolbar)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        job_id, folder = registry.new_directory()
        JobRecord(job_id, "counts", "INSERT INTO s SELECT * FROM t", None, str(folder / "checkpoint"), "2026-01-01T00:00:00Z").write(folder)
        JobState("RUNNING", pid=child.pid, pid_start=process_start(child.pid)).write(folder)
        assert "1 job running" in text(toolbar)
    finally:
        child.kill()
        child.wait()
    assert "0 jobs running" in text(toolbar), "its process is gone: no longer counted"
    resumed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:  # RESUME JOB runs it again in the same folder: its state file changes, so it is read again
        JobState("RUNNING", pid=resumed.pid, pid_start=process_start(resumed.pid)).write(folder)
        assert "1 job running" in text(toolbar)
    finally:
        resumed.kill()
        resumed.wait()
