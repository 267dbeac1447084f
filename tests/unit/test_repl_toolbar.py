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

    def running(self) -> list:
        self.calls += 1
        return list(self.jobs.values())


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

    def broken() -> list:
        raise RuntimeError("py4j down")

    session.jobs.running = broken
    assert "0 jobs running" in text(Toolbar(session, max_age=0))
