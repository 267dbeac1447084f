"""Keystroke echo while jobs run: does the prompt stay responsive with two jobs and a live SELECT at once?

Why it exists: jobs now run in processes of their own and a live SELECT in the shell's own Spark; all compete for
the same cores. What a user feels is the delay between pressing a key and seeing it. `python -m
benchmarks.prompt_echo` runs `streamshell` in a pseudo-terminal and measures, for each key typed one at a time,
the time until the terminal shows it:

* `idle`: at the prompt, nothing running (Spark started);
* `two jobs`: at the prompt, while two jobs (generated rows at 5,000 rows/s each, in their own processes) run;
* `two jobs + SELECT`: while the same two jobs run and a live SELECT shows its table, the time from Page Up to
  the status line saying the view paused, and from End back to following (a key the live table answers).

It prints a markdown table (p50, p90, max in ms, over 60 keys each, and the machine's load); `--write` puts it in
docs/benchmarks.md between the prompt-echo markers.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

from benchmarks.report import write_section
from benchmarks.startup import spawn, wait_prompt

ROOT = Path(__file__).resolve().parents[1]
KEYS = 60
JOBS = """
CREATE TEMPORARY TABLE gen (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '5000');
CREATE TEMPORARY TABLE sink (id BIGINT, name STRING) WITH ('connector' = 'blackhole');
SET 'pipeline.name' = 'echo-a';
INSERT INTO sink SELECT id, name FROM gen;
SET 'pipeline.name' = 'echo-b';
INSERT INTO sink SELECT id, UPPER(name) FROM gen;
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def echo_times(child: pexpect.spawn, keys: int = KEYS) -> list[float]:
    """Type `keys` letters one at a time at the prompt; seconds from each send to its echo. Clears the line."""
    times = []
    for i in range(keys):
        letter = "abcdefghijklmnopqrstuvwxyz"[i % 26]
        began = time.perf_counter()
        child.send(letter)
        child.expect_exact(letter, timeout=30)
        times.append(time.perf_counter() - began)
        time.sleep(0.05)
    child.sendcontrol("u")  # clear the typed line
    return times


def live_key_times(child: pexpect.spawn, rounds: int = KEYS // 2) -> list[float]:
    """In a live table: Page Up until it says paused, End until it follows again; seconds for each."""
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        child.send("\x1b[5~")  # Page Up
        child.expect("paused at row", timeout=30)
        times.append(time.perf_counter() - began)
        began = time.perf_counter()
        child.send("\x1b[F")  # End
        child.expect(r"\d+ rows? \(last \d+ shown", timeout=30)
        times.append(time.perf_counter() - began)
        time.sleep(0.1)
    return times


def run_statement(child: pexpect.spawn, sql: str, timeout: float = 600) -> None:
    child.send(sql + "\r")
    wait_prompt(child, timeout)


def measure() -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        child = spawn(home)
        try:
            wait_prompt(child)
            run_statement(child, "SELECT 1 AS warm;")  # Spark started: what is measured is the prompt itself
            results["idle"] = echo_times(child)
            for line in [s.strip() for s in JOBS.strip().split(";\n") if s.strip()]:
                run_statement(child, line.rstrip(";") + ";")
            time.sleep(10)  # both jobs past their first batches
            results["two jobs"] = echo_times(child)
            child.send("SELECT id, name FROM gen;\r")
            child.expect(r"\d+ rows? \(last \d+ shown", timeout=600)
            results["two jobs + SELECT"] = live_key_times(child)
            child.send("q")
            wait_prompt(child, 120)
        finally:
            child.sendcontrol("d")
            try:
                child.expect(pexpect.EOF, timeout=120)
            finally:
                child.close(force=True)
            stop_jobs(home)
    return results


def stop_jobs(home: Path) -> None:
    """The two jobs outlive the shell: stop them from a script on the same home."""
    import json
    import subprocess

    from shell.jobs.record import ALIVE

    for state in (home / "jobs").glob("*/state.json"):
        job_id = state.parent.name
        if json.loads(state.read_text()).get("status") in ALIVE:
            subprocess.run([sys.executable, "-m", "shell", "--catalog", str(home), "-e", f"STOP JOB '{job_id}';"],
                           cwd=ROOT, capture_output=True, timeout=300)  # fmt: skip


def table(results: dict[str, list[float]]) -> str:
    load = os.getloadavg()
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, {os.cpu_count()} cores, load "
        f"{load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} (1/5/15 min), with `python -m benchmarks.prompt_echo --write`.",
        "",
        "| while | what | keys | p50 ms | p90 ms | max ms |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    what = {"idle": "a letter typed at the prompt, until it shows", "two jobs": "the same",
            "two jobs + SELECT": "Page Up / End in the live table, until its status line changes"}  # fmt: skip
    for name, values in results.items():
        ms = [v * 1000 for v in values]
        lines.append(f"| {name} | {what[name]} | {len(ms)} | {statistics.median(ms):.0f} | "
                     f"{percentile(ms, 0.9):.0f} | {max(ms):.0f} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="put the table in docs/benchmarks.md")
    args = parser.parse_args(argv)
    text = table(measure())
    print(text)
    if args.write:
        write_section("prompt-echo", "## Keystroke echo while jobs run\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
