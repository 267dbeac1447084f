"""The bottom toolbar: running jobs, the result mode and whether Spark is ready, always in view.

Why it exists: detached INSERT jobs run out of sight; the toolbar keeps their count visible so nobody quits
(or wonders why the laptop is warm) without knowing. The count is the home's: this shell's jobs and every detached
job running, whichever shell started it. Reading the jobs' folders costs file reads, so the count is refreshed at
most once a second (the prompt redraws every second), not on every key press.
"""

from __future__ import annotations

import time

from prompt_toolkit.formatted_text import FormattedText


class Toolbar:
    def __init__(self, session, interactive: bool = True, max_age: float = 1.0):  # noqa: ANN001 - Session
        self.session = session
        self.interactive = interactive
        self.max_age = max_age
        self._jobs = 0
        self._checked = 0.0

    def running_jobs(self) -> int:
        now = time.monotonic()
        if now - self._checked >= self.max_age:
            self._checked = now
            try:
                self._jobs = self.session.jobs.running_in_home()
            except Exception:  # noqa: BLE001 - a toolbar must not fail the prompt
                pass
        return self._jobs

    def spark_state(self) -> str:
        runtime = self.session.runtime
        if runtime.started:
            return "ready"
        if runtime.starting:
            return "starting…"
        return "failed" if getattr(runtime, "_future", None) is not None else "not started"

    def __call__(self) -> FormattedText:
        jobs = self.running_jobs()
        mode = self.session.result_mode(interactive=self.interactive)
        jobs_style = "class:toolbar.jobs" if jobs else "class:toolbar"
        noun = "job" if jobs == 1 else "jobs"
        return FormattedText(
            [
                (jobs_style, f" {jobs} {noun} running "),
                ("class:toolbar", "│ result mode: "),
                ("class:toolbar.value", mode),
                ("class:toolbar", " │ Spark: "),
                ("class:toolbar.value", self.spark_state()),
                ("class:toolbar", " │ Enter runs a complete statement · Ctrl-C cancels · Ctrl-D quits "),
            ]
        )
