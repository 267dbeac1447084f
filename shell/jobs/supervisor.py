"""A job's supervisor: the thread that waits for its query, watches it, and starts it again when it fails.

One per job (per INSERT of a statement set). It waits for the job's query to end, and meanwhile, once a second,
samples it for a stalled batch (stall.py) and looks at the job's side queries (the writers of bad records it
cannot keep itself: engine/dead_letter_queries.py, start_dead_letters): the first that fails makes the job DEGRADED with the
reason, since the job runs on without keeping those records. When the query fails, the supervisor starts it again
from its checkpoint after the delay of the job's restart strategy (`restart-strategy.*`, shell/restart.py) through the
job's `restart` callable; the job is RESTARTING meanwhile, with the number of restarts and the last failure's
cause. Without a `restart` callable, or when the strategy gives up, the job is FAILED. A restart starts the side
queries again.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from shell.engine.bad_records import side_failure as side_query_failure
from shell.engine.spark_errors import root_cause

if TYPE_CHECKING:
    from shell.jobs.job import Job

SAMPLE_S = 1.0  # how often the supervisor looks at a running query
KEPT_FAILURES = 20


class Supervisor:
    def __init__(self, job: "Job"):
        self.job = job
        self.restarting = False
        self.gave_up = False
        self.attempt = 0  # restarts since the backoff was last reset
        self.restart_at: float | None = None  # when the next restart runs (time.time())
        self.running_since = time.monotonic()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name=f"job-{job.job_id}", daemon=True)

    def start(self) -> None:
        self.running_since = time.monotonic()
        self.thread.start()

    def may_restart(self) -> bool:
        job = self.job
        return job.restart is not None and job.strategy.delay_s(self.attempt + 1, rand=lambda: 0.5) is not None

    def _watch(self) -> None:
        job = self.job
        try:
            while True:
                error = self._await_query()
                if job.stopped_by_user:
                    return
                if error is None:  # the input ended: the bad-record writers end with it
                    self._await_side_queries()
                    self._look_at_side_queries()
                    return
                if not self._recover(error):
                    return
        finally:
            self.done.set()
            if job.on_end is not None:
                try:
                    job.on_end(job)
                except Exception:  # noqa: BLE001 - a state file that cannot be written; SHOW JOBS still asks Spark
                    pass

    def _await_query(self) -> BaseException | None:
        """Wait for the current query to end, looking at it once per SAMPLE_S; its failure, or None."""
        job = self.job
        query = job.query
        while True:
            try:
                if query.awaitTermination(SAMPLE_S):
                    break
            except Exception:  # noqa: BLE001 - the query failed: read below
                break
            job.stall.sample(query, time.monotonic())
            self._look_at_side_queries()
        try:
            return job.error_of(query)
        except Exception as exc:  # noqa: BLE001
            return exc

    def _look_at_side_queries(self) -> None:
        """Note the first side query that failed (once: what it says does not change until a restart)."""
        job = self.job
        if job.side_failure is not None:
            return
        for query in list(job.side_queries):
            try:
                failure = side_query_failure(query)
            except Exception:  # noqa: BLE001 - the query is ending; looked at again next time
                continue
            if failure is not None:
                job.side_failure = failure
                return

    def _await_side_queries(self) -> None:
        for query in self.job.side_queries:
            try:
                query.awaitTermination()
            except Exception:  # noqa: BLE001
                pass

    def _recover(self, error: BaseException) -> bool:
        """Restart the failed job per its strategy: True when it runs again, False when it stays ended."""
        job = self.job
        while True:
            self.restarting = True
            job.failures = [*job.failures[-(KEPT_FAILURES - 1) :], root_cause(error) or type(error).__name__]
            if job.strategy.resets(time.monotonic() - self.running_since):
                self.attempt = 0
            delay = job.strategy.delay_s(self.attempt + 1) if job.restart is not None else None
            for query in job.side_queries:
                try:
                    query.stop()
                except Exception:  # noqa: BLE001
                    pass
            if delay is None or job.stopped_by_user:
                self.gave_up = not job.stopped_by_user
                self.restarting = False
                return False
            self.attempt += 1
            self.restart_at = time.time() + delay
            if job.stopping.wait(delay):
                return False
            with job.lock:
                if job.stopped_by_user:
                    return False
                try:
                    query, side = job.restart()  # type: ignore[misc]
                except Exception as exc:  # noqa: BLE001 - counts as a failed attempt
                    job.restarts += 1
                    self.running_since = time.monotonic()
                    error = exc
                    continue
                job.query, job.side_queries = query, list(side)
                job.side_failure = None
                job.restarts += 1
                self.running_since = time.monotonic()
                job.stall.reset()
                self.restart_at = None
                self.restarting = False
                return True
