"""Every micro-batch a job ran, as Spark reported it: `batches.jsonl` in the job's folder.

Why it exists: SHOW JOBS and the metrics endpoint give the latest figures, but where a job's time goes (reading,
planning, the keyed stages, the state store's commit, the sink) is told by each micro-batch's progress report, and
Spark keeps only the last hundred of them, in the job's own process. The job process appends each report once (by
its query's run, batch id and time, as metrics.py counts them) to this file, so a benchmark, `tail -f` or any tool can
read a job's batches while it runs and after it ended, from another process. The file rolls over at `MAX_BYTES`
to `batches.jsonl.1` (one old file is kept), so a job running for weeks keeps a bounded folder.

A line is `{"query": n, "report": <Spark's progress report>}`: `query` is the part of a statement set (0 for a
single INSERT), the report as Spark wrote it (`durationMs`, `stateOperators`, `sources`, `sink`, ...).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

BATCH_LOG = "batches.jsonl"
MAX_BYTES = 4 * 2**20


class BatchLog:
    """Appends reports to a job folder's batch log, rolling it over by size."""

    def __init__(self, folder: Path, max_bytes: int = MAX_BYTES):
        self.path = folder / BATCH_LOG
        self.max_bytes = max_bytes

    def append(self, query: int, report: dict) -> None:
        line = json.dumps({"query": query, "report": report}, separators=(",", ":"), default=str) + "\n"
        try:
            if self.path.exists() and self.path.stat().st_size + len(line) > self.max_bytes:
                os.replace(self.path, self.path.with_name(BATCH_LOG + ".1"))
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line)
        except OSError:
            pass  # the folder was removed (a plain STOP JOB) or the disk is full: the job itself goes on


def read_batches(folder: Path, offset: int = 0) -> tuple[list[dict], int]:
    """The lines of a job's batch log from byte `offset` on (only whole lines), and the offset after them.

    A reader that follows a running job passes the offset it got back; after a roll-over (the file is shorter
    than the offset) it reads the new file from its start."""
    path = folder / BATCH_LOG
    try:
        with path.open("rb") as log:
            if log.seek(0, os.SEEK_END) < offset:
                offset = 0
            log.seek(offset)
            data = log.read()
    except OSError:
        return [], offset
    whole = data[: data.rfind(b"\n") + 1]
    return [json.loads(line) for line in whole.splitlines() if line.strip()], offset + len(whole)


def every_batch(folder: Path) -> Iterator[dict]:
    """Every line of a job's batch log, the rolled-over file's first."""
    for name in (BATCH_LOG + ".1", BATCH_LOG):
        try:
            text = (folder / name).read_text(encoding="utf-8")
        except OSError:
            continue
        for line in text.splitlines():
            if line.strip():
                yield json.loads(line)
