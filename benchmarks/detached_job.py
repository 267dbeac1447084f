"""A job started as a user starts it, followed from outside: the benchmarks' view of a detached job.

Why it exists: an INSERT runs in a job process of its own (shell/jobs/process.py), not in the shell that typed it,
so a benchmark that looked the job up in its own session's registry measured nothing users run. This starts the
statements through the library API exactly as `streamshell -f` does (a `Session` on a catalog home), then follows
the job through its folder: its micro-batches from the batch log the job process writes (shell/jobs/batch_log.py),
its status from `state.json`, and the process session whose CPU is the job's (its pid leads a session of its own:
the job process, its monitor, its JVM and Spark's Python workers).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from shell.jobs.batch_log import every_batch, read_batches
from shell.jobs.record import ALIVE, JobState


@dataclass
class FollowedJob:
    """A detached job of `session` (a shell.session.Session) in `folder`."""

    session: Any
    job_id: str
    folder: Path
    offset: int = 0
    reports: list[dict] = field(default_factory=list)  # the main query's progress reports read so far

    @property
    def sid(self) -> int | None:
        """The session of the job's processes (its monitor, the job process, its JVM, Spark's Python workers): the
        job is started in a session of its own."""
        state = JobState.read(self.folder)
        try:
            return os.getsid(state.pid) if state is not None and state.pid else None
        except OSError:
            return None

    def new_reports(self) -> list[dict]:
        """The main query's progress reports written since the last call (a statement set's first INSERT's)."""
        lines, self.offset = read_batches(self.folder, self.offset)
        fresh = [line["report"] for line in lines if line.get("query") == 0]
        self.reports.extend(fresh)
        return fresh

    def status(self) -> tuple[str, str | None]:
        """(status, failure) as SHOW JOBS gives them."""
        job = self.session.jobs.get(self.job_id)
        return job.status, job.failure

    @property
    def alive(self) -> bool:
        return self.status()[0] in ALIVE

    def stop(self) -> None:
        """STOP JOB (its state dropped), as a user types it."""
        if self.alive:
            self.session.jobs.stop(self.job_id)

    def await_end(self, timeout_s: float, tick: Callable[[], None] = lambda: None, every_s: float = 0.2) -> str:
        """Wait until the job ended (a bounded job reads its input to the end), calling `tick` every `every_s`
        and once at the end; its final status."""
        deadline = time.monotonic() + timeout_s
        while self.alive:
            tick()
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {self.job_id} still {self.status()[0]} after {timeout_s:.0f} s")
            time.sleep(every_s)
        time.sleep(0.2)
        tick()
        self.reports = [line["report"] for line in every_batch(self.folder) if line.get("query") == 0]
        return self.status()[0]


def start(session: Any, script: str) -> FollowedJob:
    """Run `script` (DDL and one INSERT or statement set) in `session`; the job it started, detached."""
    from shell.results import JobStarted
    from shell.sql.parse import parse_script

    started = [r for r in map(session.execute, parse_script(script)) if isinstance(r, JobStarted)]
    if len(started) != 1:
        raise RuntimeError(f"expected one INSERT job, got {len(started)}")
    job = session.jobs.get(started[0].job_id)
    if not hasattr(job, "directory") or job.job_id in session.jobs.jobs:
        raise RuntimeError("the job runs in this process: set 'execution.target' to 'detached' (the default)")
    return FollowedJob(session, job.job_id, job.directory)


@dataclass
class Finished:
    """A bounded job that ran to its end: its batches' progress reports, the CPU seconds its process tree spent from
    its first micro-batch on, and its processing time (its micro-batches' `triggerExecution`, summed). Both leave
    out the job process's own start (its Spark), which hand-written PySpark in a warm JVM does not pay either."""

    reports: list[dict]
    cpu_s: float
    processing_s: float
    peak_rss: int = 0  # the most resident memory the job's processes held together (bytes), when sampled

    @property
    def rows(self) -> int:
        return sum(int(r.get("numInputRows") or 0) for r in self.reports)


def run_to_end(session: Any, insert: Any, timeout_s: float = 3600, memory: bool = False) -> Finished:
    """Start a bounded INSERT (a parsed statement) as a detached job and wait for its end; a job that did not
    finish is an error. The job's CPU is sampled from its session while it runs (benchmarks/engine_procs.py), and
    with `memory` its peak resident memory too."""
    from benchmarks.engine_procs import SessionCpu, session_memory
    from shell.results import JobStarted

    result = session.execute(insert)
    if not isinstance(result, JobStarted):
        raise RuntimeError(f"the INSERT started no job: {result!r}")
    job = session.jobs.get(result.job_id)
    followed = FollowedJob(session, job.job_id, job.directory)
    sid = followed.sid
    cpu = SessionCpu(sid, every=0.1) if sid else None
    samples: list[tuple[float, float]] = []  # (time, CPU seconds so far)
    peak = 0

    def tick() -> None:
        nonlocal peak
        samples.append((time.time(), cpu.sample() if cpu is not None else 0.0))
        if memory and sid:
            peak = max(peak, sum(rss for _, rss in session_memory(sid).values()))

    try:
        status = followed.await_end(timeout_s, every_s=0.1, tick=tick)
    finally:
        if cpu is not None:
            cpu.close()
    if status != "FINISHED" or not followed.reports:
        raise RuntimeError(f"job {status}: {followed.status()[1]}")
    first = epoch(followed.reports[0]["timestamp"])
    before = max((c for t, c in samples if t <= first), default=0.0)
    processing = sum(int((r.get("durationMs") or {}).get("triggerExecution", 0)) for r in followed.reports) / 1000
    return Finished(followed.reports, samples[-1][1] - before, processing, peak)


def epoch(timestamp: str) -> float:
    """Spark's progress timestamp ('2026-11-21T16:18:36.123Z') in epoch seconds."""
    return dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
