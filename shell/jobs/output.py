"""What a detached job's print sink writes, passed on to the shell that waits for the job.

A job process writes the print connector's rows to `print.log` in its folder (as Flink's print sink writes to its
task manager's output); a script that waits for its jobs shows them as they come, as if the job ran in the shell.
Only the bytes added since the last look are read, a whole line at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from shell.jobs.record import PRINT_FILE


class PrintedRows:
    def __init__(self, out: TextIO):
        self.out = out
        self.offsets: dict[Path, int] = {}

    def pass_on(self, jobs: list) -> None:
        """Write what each job's print sink added since the last call (jobs without a `print.log` are skipped)."""
        for job in jobs:
            path = job.directory / PRINT_FILE
            try:
                with open(path, "rb") as f:
                    f.seek(self.offsets.get(path, 0))
                    data = f.read()
            except OSError:
                continue
            end = data.rfind(b"\n") + 1
            if end:
                self.out.write(data[:end].decode("utf-8", errors="replace"))
                self.out.flush()
                self.offsets[path] = self.offsets.get(path, 0) + end
