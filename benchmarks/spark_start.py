"""How long a Spark takes to start as the shell and every job process start it, with and without the class-data
archive of its driver classes (shell/engine/cds.py).

    .venv/bin/python -m benchmarks.spark_start [--runs 5] [--write]

Each run is a new process (one SparkContext per process, as a job process has): SparkRuntime.get() (the JVM, the
session, the jars of the spark bundle) and then a first query (`SELECT` over `range`, collected). The archive is
the one `make setup` writes; runs without it start the JVM without the option. The median of the runs is
reported, with the load average, since the other work on the machine moves these times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks.report import machine, write_section

PROBE = """
import json, sys, time
from pathlib import Path
began = time.monotonic()
from shell.engine.spark import SparkRuntime
runtime = SparkRuntime('local[*]', {}, Path(sys.argv[1]), class_archive=sys.argv[2] == 'on')
session = runtime.get()
ready = time.monotonic()
session.range(1000).selectExpr('id % 7 AS k').groupBy('k').count().collect()
done = time.monotonic()
print(json.dumps({'ready': ready - began, 'first_query': done - ready}))
runtime.stop()
"""


def one(archive: bool) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run([sys.executable, "-c", PROBE, os.path.join(folder, "spark.log"), "on" if archive else "off"],
                             capture_output=True, text=True, timeout=600, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(runs: int) -> dict:
    from shell.engine import cds

    if not cds.java_options():
        raise SystemExit("no class-data archive: run `.venv/bin/python -m shell.engine.cds` (make setup does) first")
    results: dict = {"load": os.getloadavg()[0]}
    for archive in (False, True):  # each side starts with a run not counted (the page cache warm for both)
        one(archive)
        samples = [one(archive) for _ in range(runs)]
        results["with" if archive else "without"] = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    results["load_after"] = os.getloadavg()[0]
    return results


def report(results: dict, runs: int) -> str:
    without, with_ = results["without"], results["with"]
    total = {k: v["ready"] + v["first_query"] for k, v in results.items() if isinstance(v, dict)}
    return "\n".join([
        "## Spark start with a class-data archive",
        "",
        f"Measured with `.venv/bin/python -m benchmarks.spark_start --runs {runs} --write` "
        f"({time.strftime('%Y-%m-%d %H:%M')}, {machine()}, load average {results['load']:.1f} before and "
        f"{results['load_after']:.1f} after): a new process starts a local Spark as a shell or a job process does "
        "and runs a first small aggregate; median of the runs.",
        "",
        "| | Spark ready | first query | both |",
        "| --- | ---: | ---: | ---: |",
        f"| without the archive | {without['ready']:.1f} s | {without['first_query']:.1f} s | {total['without']:.1f} s |",
        f"| with the archive (shell/engine/cds.py) | {with_['ready']:.1f} s | {with_['first_query']:.1f} s | "
        f"{total['with']:.1f} s |",
        "",
        "The archive holds the classes of pyspark's jars, parsed as the JVM needs them; `make setup` writes it once "
        "(about 30 s of CPU, 140 MiB under the cache folder) and every Spark started afterwards maps it: the shell's, "
        "each job process's (a job, a RESUME JOB), and the test suite's. A different Java or pyspark gets an archive "
        "of its own; without one, Spark starts as before.",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    section = report(measure(args.runs), args.runs)
    print(section)
    if args.write:
        write_section("spark-start", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
