"""The Flink side of the Nexmark benchmark: run bounded Flink SQL jobs one after another and say when each starts
and ends.

Why it exists: benchmarks/nexmark.py compares streamshell with Flink SQL on Nexmark's queries over the same Kafka
topic. This runs under `.venv-flink/bin/python` (scripts/flink-venv: apache-flink, whose pins clash with
streamshell's), so it imports PyFlink and the standard library only, never the `shell` package or the rest of
`benchmarks` (but for its sibling script engine_flink.py: the TableEnvironment and the event lines):

    .venv-flink/bin/python benchmarks/nexmark_flink.py --phases FILE --jar JAR [--parallelism 2]

FILE is a JSON list of phases, each `{"name": ..., "statements": [...]}`: statements, then one INSERT. Every phase
gets a TableEnvironment of its own (the case's tables and views keep their names) in the same JVM (the first
phases warm it up), STREAMING mode, Flink's defaults otherwise (heap state, no checkpoints, no mini-batch).
`SET 'k' = 'v'` (which only Flink's SQL client runs) goes to the configuration; `SET 'python.files'` ships the
files to Python workers, which run in this Python. The INSERT's tables are bounded (`'scan.bounded.mode'`), so
the job ends when it has read them; at their end the watermark moves to the end of time and every pending window
fires. For each phase it prints `{"event": "start", "phase": ...}` just before the INSERT and `{"event": "end",
"phase": ..., "wall_s": ...}` once the job has finished (`"error"` if it failed), one JSON object per line; the
caller measures CPU and memory in between.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import traceback
from pathlib import Path

from engine_flink import say, table_environment  # a sibling file: both run as scripts, from this folder

SET_STATEMENT = re.compile(r"^\s*SET\s+'([^']+)'\s*=\s*'([^']*)'\s*$", re.I | re.S)


def execute(env, statement: str) -> None:  # noqa: ANN001 - a pyflink TableEnvironment
    setting = SET_STATEMENT.match(statement)
    if setting and setting.group(1) == "python.files":
        for path in filter(None, setting.group(2).split(",")):
            env.add_python_file(path)
            folder = str(Path(path).parent if Path(path).suffix == ".py" else Path(path))
            if folder not in sys.path:  # this process imports them too (planning)
                sys.path.insert(0, folder)
    elif setting:
        env.get_config().set(setting.group(1), setting.group(2))
    else:
        env.execute_sql(statement)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", required=True, type=Path)
    parser.add_argument("--jar", required=True, action="append", help="connector jar (repeatable)")
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args(argv)

    for phase in json.loads(args.phases.read_text()):
        env = table_environment(args.parallelism, args.jar)
        env.get_config().set("python.executable", sys.executable)
        *ddl, insert = phase["statements"]
        try:
            for statement in ddl:
                execute(env, statement)
            say("start", phase=phase["name"])
            started = time.perf_counter()
            env.execute_sql(insert).wait()
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which fails the run
            traceback.print_exc()
            lines = str(exc).splitlines() or [repr(exc)]  # a Py4JJavaError: the Java exception's line, not py4j's
            say("end", phase=phase["name"], error=next((x for x in lines if "Exception:" in x), lines[0]).strip(": ")[:500])
            continue
        say("end", phase=phase["name"], wall_s=time.perf_counter() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
