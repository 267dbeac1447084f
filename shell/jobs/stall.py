"""Noticing a running job whose micro-batch does not complete: a broker that does not answer, a batch that hangs.

Spark says what a running query is doing (`status`) and when a batch completed (`lastProgress`), but not that a
batch has been running for too long. The job's supervisor samples both about once a second; a batch that has been
running, unchanged, for longer than the stall threshold (10 trigger intervals, at least 5 s) is shown in SHOW JOBS'
detail with Spark's own message. An idle trigger (no new input) is never a stall.
"""

from __future__ import annotations

import json
from typing import Any

from shell.engine.progress_reports import LAST_REPORTS

STALL_TRIGGERS = 10  # a job that has not completed a batch for this many trigger intervals is reported ...
STALL_MIN_S = 5.0  # ... and for at least this long


class StallSampler:
    def __init__(self) -> None:
        self._stall: tuple[float, Any, str] | None = None  # (since, the last completed batch, Spark's message)

    def reset(self) -> None:
        self._stall = None

    def sample(self, query: Any, now: float) -> None:
        """Note how long a micro-batch of `query` has been running without completing."""
        try:
            status = query.status
            if not status.get("isTriggerActive"):
                self._stall = None
                return
            batch = progress_key(LAST_REPORTS.latest(query))
        except Exception:  # noqa: BLE001 - the query is ending; its supervisor notices
            return
        message = str(status.get("message") or "")
        if self._stall is None or self._stall[1] != batch:
            self._stall = (now, batch, message)
        else:
            self._stall = (self._stall[0], batch, message)

    def detail(self, now: float, after_s: float) -> str | None:
        """`no batch completed for N s; Spark: <message>` once the batch has run for `after_s`, else None."""
        stall = self._stall
        if stall is None or now - stall[0] < after_s:
            return None
        return f"no batch completed for {now - stall[0]:.0f} s; Spark: {stall[2]}"


def progress_key(progress: Any) -> Any:
    """What changes when a batch completes: the last progress report's batch id and time."""
    if progress is None:
        return None
    if not isinstance(progress, dict):
        progress = json.loads(progress.json)
    return (progress.get("batchId"), progress.get("timestamp"))


def stall_threshold_s(interval: str | None) -> float:
    """How long a running job may go without completing a batch before SHOW JOBS says so."""
    from shell.units import parse_duration_ms

    try:
        trigger_s = parse_duration_ms(interval or "1 s") / 1000
    except ValueError:
        trigger_s = 1.0
    return max(STALL_TRIGGERS * trigger_s, STALL_MIN_S)
