"""A job process's memory over a long run at a fixed rate: does it grow beyond the state it must hold?

Why it exists: a job now lives in a process of its own for days; memory that creeps up would end it. `python -m
benchmarks.job_memory [--minutes 10] [--rate 2000]` starts a detached job through the real command line (generated
rows at a fixed rate, counted per key over 1,000 keys into a blackhole table: a stateful job whose state stops
growing once every key is seen), samples the resident memory (RSS) of the job's process tree (the job process,
its JVM and Python workers) once every 30 s, stops the job, and prints a markdown table; `--write` puts it in
docs/reliability.md between the job-memory markers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import write_section

ROOT = Path(__file__).resolve().parents[1]
JOB = """
CREATE TEMPORARY TABLE gen (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
  'fields.k.min' = '1', 'fields.k.max' = '1000');
CREATE TEMPORARY TABLE counts (k INT, n BIGINT) WITH ('connector' = 'blackhole');
SET 'table.dml-sync' = 'false';
SET 'pipeline.name' = 'memory';
INSERT INTO counts SELECT k, COUNT(*) AS n FROM gen GROUP BY k;
"""


def tree(pid: int) -> list[int]:
    """`pid` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        found = re.search(r"VmRSS:\s+(\d+) kB", status)
        total += int(found.group(1)) if found else 0
    return total / 1024


def shell(home: Path, *args: str) -> str:
    run = subprocess.run([sys.executable, "-m", "shell", "--catalog", str(home), *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    if run.returncode != 0:
        raise SystemExit(f"streamshell failed: {run.stderr[-2000:]}")
    return run.stdout


def measure(minutes: float, rate: int) -> list[tuple[float, float, float]]:
    """(minutes since start, RSS MiB of the job's tree, input rows/s) every 30 s."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        script = Path(tmp) / "job.sql"
        script.write_text(JOB.format(rate=rate))
        out = shell(home, "-f", str(script))
        job_id = re.search(r"started with id (\w+)", out).group(1)
        state_file = home / "jobs" / job_id / "state.json"
        samples = []
        began = time.monotonic()
        try:
            while (elapsed := time.monotonic() - began) <= minutes * 60:
                state = json.loads(state_file.read_text())
                rate_now = (state.get("progress") or {}).get("input_rows_per_second", 0.0)
                samples.append((elapsed / 60, rss_mib(tree(state["pid"])), rate_now))
                time.sleep(30)
        finally:
            shell(home, "-e", f"STOP JOB '{job_id}';")
    return samples


def table(samples: list[tuple[float, float, float]], rate: int) -> str:
    load = os.getloadavg()
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load {load[0]:.1f}/{load[1]:.1f}/"
        f"{load[2]:.1f}, with `python -m benchmarks.job_memory --write`: a detached `COUNT(*) ... GROUP BY k` over "
        f"1,000 keys at {rate:,} generated rows/s; RSS of the job process, its JVM and its Python workers.",
        "",
        "| minute | RSS MiB | input rows/s |",
        "| ---: | ---: | ---: |",
    ]
    lines += [f"| {m:.1f} | {rss:,.0f} | {r:,.0f} |" for m, rss, r in samples]
    warm = [rss for m, rss, _ in samples if m >= 2]
    if len(warm) >= 2:
        lines += ["", f"From minute 2 on: {min(warm):,.0f} to {max(warm):,.0f} MiB, last {warm[-1]:,.0f} MiB."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    text = table(measure(args.minutes, args.rate), args.rate)
    print(text)
    if args.write:
        write_section("job-memory", "### A job process's memory over a long run\n\n" + text,
                      ROOT / "docs" / "reliability.md")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
