"""The Flink side of the engine benchmark: one Flink SQL script (DDL + one INSERT) run by PyFlink, until told to stop.

Why it exists: benchmarks/engine.py compares streamshell's changelog path with Flink SQL on the same pipelines and
the same Kafka input. This runs under `.venv-flink/bin/python` (scripts/flink-venv: apache-flink, whose pins clash
with streamshell's), so it imports PyFlink and the standard library only, never the `shell` package or the rest
of `benchmarks`:

    .venv-flink/bin/python benchmarks/engine_flink.py --sql FILE --jar JAR [--parallelism 2] [--rest-port N]

The job runs in PyFlink's local mini-cluster (one JVM, `parallelism.default` slots), STREAMING mode, Flink's
defaults otherwise: heap state, no checkpoints, no mini-batch. It prints one JSON object per line on stdout:
`{"event": "submitted", "t": <epoch s>}` once the INSERT is submitted; `{"event": "progress", "rows": n,
"moving": bool}` whenever the job's vertex counters change (from the mini-cluster's REST API, refreshed every
second): `rows` is what the source vertices emitted, i.e. the Kafka records read, and `moving` whether any
vertex's record counters changed since the last poll; `{"event": "failed", ...}` if the job fails. A line
`stop` on stdin cancels the job and ends the process.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path


def say(event: str, **fields) -> None:
    print(json.dumps({"event": event, "t": time.time(), **fields}), flush=True)


def statements(script: str) -> list[str]:
    """The script's statements (the benchmark writes no ';' inside literals or comments)."""
    return [s.strip() for s in script.split(";") if s.strip()]


def counters(port: int, job: str) -> tuple[int, tuple]:
    """(records the source vertices emitted, every vertex's record counters) from the REST API."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/{job}", timeout=5) as response:
        vertices = json.loads(response.read())["vertices"]
    sources = sum(v["metrics"]["write-records"] for v in vertices if v["name"].startswith("Source:"))
    return sources, tuple((v["metrics"]["read-records"], v["metrics"]["write-records"]) for v in vertices)


def table_environment(parallelism: int, jars: list[str]):  # noqa: ANN201 - a pyflink TableEnvironment
    """A streaming TableEnvironment in a local mini-cluster: `parallelism` slots, UTC, the connector jars."""
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("parallelism.default", str(parallelism))
    config.set("table.local-time-zone", "UTC")
    config.set("pipeline.jars", ";".join(Path(j).resolve().as_uri() for j in jars))
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sql", required=True, type=Path, help="DDL and one INSERT, separated by ';'")
    parser.add_argument("--jar", required=True, action="append", help="connector jar (repeatable)")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--rest-port", type=int, default=18081, help="the mini-cluster's REST port (metrics)")
    args = parser.parse_args(argv)

    env = table_environment(args.parallelism, args.jar)
    config = env.get_config()
    config.set("pipeline.name", args.sql.stem)
    config.set("rest.port", str(args.rest_port))
    config.set("metrics.fetcher.update-interval", "1000")
    result = None
    for statement in statements(args.sql.read_text()):
        result = env.execute_sql(statement)
    assert result is not None
    client = result.get_job_client()
    say("submitted", job=str(client.get_job_id()) if client else None)

    stopping = threading.Event()

    def watch_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stopping.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    last: tuple = ()
    polls = 0
    while client is not None and not stopping.wait(0.5):
        polls += 1
        if polls % 4 == 0:
            status = str(client.get_job_status().result())
            if status in ("FAILED", "CANCELED", "FINISHED"):
                say("failed" if status != "FINISHED" else "finished", status=status)
                break
        try:
            rows, now = counters(args.rest_port, str(client.get_job_id()))
        except (OSError, KeyError, ValueError):
            continue  # the REST endpoint or the job's vertices are not up yet
        if now != last:
            say("progress", rows=rows, moving=True)
            last = now
        elif polls % 4 == 0:
            say("progress", rows=rows, moving=False)
    if client is not None:
        try:
            client.cancel().result()
        except Exception as exc:  # noqa: BLE001 - ending anyway; the harness reads the sink, not this
            say("cancel-error", error=str(exc).splitlines()[0][:300])
    say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
