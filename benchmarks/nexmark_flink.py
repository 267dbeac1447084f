"""The Flink side of the Nexmark benchmark: run bounded Flink SQL jobs one after another and say when each starts
and ends.

Why it exists: benchmarks/nexmark.py compares streamshell with Flink SQL on Nexmark queries over the same Kafka
topic. This runs under `.venv-flink/bin/python` (scripts/flink-venv: apache-flink, whose pins clash with
streamshell's), so it imports PyFlink and the standard library only, never the `shell` package or the rest of
`benchmarks` (but for its sibling script engine_flink.py: the TableEnvironment and the event lines):

    .venv-flink/bin/python benchmarks/nexmark_flink.py --phases FILE --jar JAR [--parallelism 2]

FILE is a JSON list of phases, each `{"name": ..., "statements": [...]}`: DDL, then one INSERT. The phases run in
one TableEnvironment (one JVM: the first phase warms it up), STREAMING mode, Flink's defaults otherwise (heap
state, no checkpoints, no mini-batch). The INSERT's tables are bounded (`'scan.bounded.mode'`), so the job ends
when it has read them; at their end the watermark moves to the end of time and every pending window fires. For
each phase it prints `{"event": "start", "phase": ...}` just before the INSERT and `{"event": "end", "phase":
..., "wall_s": ...}` once the job has finished, one JSON object per line; the caller measures CPU in between.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from engine_flink import say, table_environment  # a sibling file: both run as scripts, from this folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", required=True, type=Path)
    parser.add_argument("--jar", required=True, action="append", help="connector jar (repeatable)")
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args(argv)

    env = table_environment(args.parallelism, args.jar)
    for phase in json.loads(args.phases.read_text()):
        *ddl, insert = phase["statements"]
        for statement in ddl:
            env.execute_sql(statement)
        say("start", phase=phase["name"])
        started = time.perf_counter()
        env.execute_sql(insert).wait()
        say("end", phase=phase["name"], wall_s=time.perf_counter() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
