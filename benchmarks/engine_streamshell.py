"""The streamshell side of the engine benchmark: one SQL script (DDL + one INSERT) run as a user runs it.

Why it exists: benchmarks/engine.py runs every engine in a process of its own, so that each starts with a fresh
JVM and the harness's own work (producing, consuming the sink) is not in the engine's process. This one drives
streamshell through its library API as `streamshell -f` does: a `Session` with a fresh catalog home (defaults:
`local[*]`, `table.exec.changelog.buckets` 16 and `sub-buckets` 64, RocksDB state), `parse_script`, and the INSERT
job it starts, which runs detached in a job process of its own (benchmarks/detached_job.py follows it).

    .venv/bin/python -m benchmarks.engine_streamshell --sql FILE --home DIR

It prints one JSON object per line on stdout: `{"event": "submitted", "t": ..., "sid": n}` once the INSERT
returned (`sid`: the job process's session, whose processes' CPU is the job's), `{"event": "batch", "id": n,
"rows": numInputRows, "start": epoch s, "ms": triggerExecution, "report": Spark's progress report}` for every
micro-batch of the job's query (from the job's batch log), `{"event": "failed", ...}` if the job fails. A line
`stop` on stdin stops the job (STOP JOB) and ends the process.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.engine_procs import say, stop_requested



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sql", required=True, type=Path)
    parser.add_argument("--home", required=True, type=Path, help="a fresh catalog home (--catalog)")
    args = parser.parse_args(argv)

    from benchmarks.detached_job import epoch, start
    from shell.session import Session, SessionOptions

    session = Session(SessionOptions(home=args.home))
    try:
        job = start(session, args.sql.read_text())
        say("submitted", job=job.job_id, sid=job.sid)

        stopping = stop_requested()
        while True:
            for p in job.new_reports():
                say("batch", id=p["batchId"], rows=p["numInputRows"], start=epoch(p["timestamp"]),
                    ms=p["durationMs"].get("triggerExecution", 0), report=p)  # fmt: skip
            status, failure = job.status()
            if status not in ("RUNNING", "RESTARTING", "STARTING"):
                say("failed", status=status, error=failure)
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
