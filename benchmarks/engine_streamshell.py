"""The streamshell side of the engine benchmark: one SQL script (DDL + one INSERT) run as a user runs it.

Why it exists: benchmarks/engine.py runs every engine in a process of its own, so that each starts with a fresh
JVM and the harness's own work (producing, consuming the sink) is not in the engine's process. This one drives
streamshell through its library API, as tests/e2e/test_scenarios.py does: a `Session` with a fresh catalog home
(defaults: `local[*]`, 1 s trigger, `table.exec.changelog.buckets` 16 and `sub-buckets` 64, RocksDB state), `parse_script`, and the
INSERT job it starts.

    .venv/bin/python -m benchmarks.engine_streamshell --sql FILE --home DIR

It prints one JSON object per line on stdout: `{"event": "submitted", "t": ...}` once the INSERT returned,
`{"event": "batch", "id": n, "rows": numInputRows, "start": epoch s, "ms": triggerExecution}` for every
micro-batch of the job's query (read from `recentProgress`, deduplicated by run, batch id and start),
`{"event": "failed", ...}` if the job fails. A line `stop` on stdin stops the job and ends the process.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import threading
import time
from pathlib import Path


def say(event: str, **fields) -> None:
    print(json.dumps({"event": event, "t": time.time(), **fields}), flush=True)


def epoch(timestamp: str) -> float:
    """Spark's progress timestamp ('2026-11-21T16:18:36.123Z') in epoch seconds."""
    return dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sql", required=True, type=Path)
    parser.add_argument("--home", required=True, type=Path, help="a fresh catalog home (--catalog)")
    args = parser.parse_args(argv)

    from shell.results import JobStarted
    from shell.session import Session, SessionOptions
    from shell.sql.parse import parse_script

    session = Session(SessionOptions(home=args.home))
    try:
        started = [r for r in map(session.execute, parse_script(args.sql.read_text())) if isinstance(r, JobStarted)]
        if len(started) != 1:
            raise SystemExit(f"expected one INSERT job, got {len(started)}")
        job = session.jobs.jobs[started[0].job_id]
        say("submitted", job=job.job_id)

        stopping = threading.Event()

        def watch_stdin() -> None:
            for line in sys.stdin:
                if line.strip() == "stop":
                    break
            stopping.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
        seen: set[tuple[str, int, str]] = set()
        while True:
            query = job.query
            for p in list(query.recentProgress):
                ident = (p["runId"], p["batchId"], p["timestamp"])  # idle reports repeat a batch id
                if ident not in seen:
                    seen.add(ident)
                    say("batch", id=p["batchId"], rows=p["numInputRows"], start=epoch(p["timestamp"]),
                        ms=p["durationMs"].get("triggerExecution", 0))  # fmt: skip
            if job.status not in ("RUNNING", "RESTARTING"):
                say("failed", status=job.status, error=job.failure)
                break
            if stopping.wait(0.25):
                break
        job.stop()
    finally:
        session.close()
    say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
