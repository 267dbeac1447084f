"""Gateway benchmark: a bounded SELECT's rows/s through the gateway beside the CLI's json mode, and the delay from
a change to a streaming client beside the CLI's own stream of the same query.

Why it exists: the gateway adds a hop (the wire protocol, a driver) between a query and its reader; this measures
what that hop costs. `python -m benchmarks.gateway` prints a markdown table; `--write` puts it in
docs/benchmarks.md (section `gateway`); `--quick` is the small run a test executes.

* Rows/s: `SELECT id, name, amount FROM rows` over a bounded datagen table of N rows, read by psycopg through
  the gateway (a warm-up query first, so Spark has started) and by `streamshell --result-mode json -e`, whose
  clock starts at the line a marker query before it prints (so Spark's start is not counted). Both times include
  planning, Spark's run, and writing the rows (DataRows on a socket / JSON lines on a pipe).
* Change delay: a watched filesystem table; the benchmark writes one file per change holding its own wall-clock
  time, one a second once the reader has a first probe change (its query is running), and each reader (psycopg with `COPY (SELECT ...) TO STDOUT` through the gateway, then the
  CLI's json mode, the same ChangeStream its live table shows) takes the difference when the change reaches it.
  Both readers use the default trigger (as fast as possible), so the delay is mostly Spark's micro-batch.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def gateway(home: Path) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen([sys.executable, "-m", "shell", "gateway", "--port", "0", "--metrics-port", "-1",
                                "--catalog", str(home)], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=(home / "gateway.err").open("w"), text=True)  # fmt: skip
    line = process.stdout.readline()
    match = re.search(r"listening on \S+:(\d+)", line)
    if match is None:
        raise SystemExit(f"the gateway did not start: {line!r}")
    return process, int(match.group(1))


def cli(home: Path, sql: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "shell", "--catalog", str(home), "--result-mode", "json", "-e", sql],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def rows_per_second(home: Path, port: int, rows: int) -> dict[str, float]:
    import psycopg

    dsn = f"host=127.0.0.1 port={port} user=bench dbname=streamshell"
    query = "SELECT id, name, amount FROM bench_rows"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE IF NOT EXISTS bench_rows (id BIGINT, name STRING, amount DOUBLE) WITH ("
                     f"'connector' = 'datagen', 'number-of-rows' = '{rows}', 'fields.id.kind' = 'sequence', "
                     f"'fields.id.start' = '1', 'fields.id.end' = '{rows}', 'fields.name.length' = '10')")
        conn.execute("SET 'sql-client.display.max-rows-per-batch' = '10000000'")
        conn.execute("SELECT COUNT(*) FROM bench_rows").fetchall()  # Spark started and warm
        started = time.perf_counter()
        got = len(conn.execute(query).fetchall())
        gateway_seconds = time.perf_counter() - started
    assert got == rows, f"the gateway returned {got} of {rows} rows"
    process = cli(home, f"SET 'sql-client.display.max-rows-per-batch' = '10000000'; SELECT 'start' AS m; {query}")
    start_line_at, seen = None, 0
    for line in process.stdout:
        if start_line_at is None:
            if '"m": "start"' in line:
                start_line_at = time.perf_counter()
            continue
        seen += 1
        if seen == rows:
            break
    cli_seconds = time.perf_counter() - start_line_at
    process.wait(timeout=120)
    assert seen == rows, f"the CLI printed {seen} of {rows} rows"
    return {"gateway": rows / gateway_seconds, "cli": rows / cli_seconds,
            "gateway_seconds": gateway_seconds, "cli_seconds": cli_seconds}  # fmt: skip


def write_changes(folder: Path, count: int, ready: threading.Event, stop: threading.Event) -> None:
    """One file per change, a second apart, each holding the time it was written (renamed into place whole). The
    first is a probe: the timed ones follow once the reader has it (its query is running, Spark has started)."""
    for k in range(count + 1):
        if k == 1:
            ready.wait(600)
        if stop.is_set():
            return
        hidden = folder / f".change-{k}.json"
        hidden.write_text(json.dumps({"k": k, "written": int(time.time() * 1000)}) + "\n")
        hidden.rename(folder / f"change-{k}.json")
        stop.wait(1.0)


def delays(home: Path, port: int, changes: int) -> dict[str, list[float]]:
    import psycopg

    dsn = f"host=127.0.0.1 port={port} user=bench dbname=streamshell"
    found: dict[str, list[float]] = {}
    for reader in ("gateway", "cli"):
        folder = home / f"changes-{reader}"
        folder.mkdir()
        table = f"changes_{reader}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (k INT, written BIGINT) WITH ('connector' = 'filesystem', "
                         f"'path' = '{folder}', 'format' = 'json', 'source.monitor-interval' = '1 s')")
        ready, stop = threading.Event(), threading.Event()
        seen: list[float] = []
        writer = threading.Thread(target=write_changes, args=(folder, changes, ready, stop), daemon=True)
        if reader == "gateway":
            with psycopg.connect(dsn, autocommit=True) as conn:
                with conn.cursor().copy(f"COPY (SELECT k, written FROM {table}) TO STDOUT") as copy:
                    writer.start()
                    for op, k, written in copy.rows():
                        if int(k) == 0:
                            ready.set()
                        else:
                            seen.append(time.time() * 1000 - int(written))
                        if len(seen) == changes:
                            stop.set()
                            conn.cancel()
                            break
                conn.close()
        else:
            process = cli(home, f"SELECT k, written FROM {table}")
            writer.start()
            for line in process.stdout:
                row = json.loads(line)["row"]
                if row["k"] == 0:
                    ready.set()
                else:
                    seen.append(time.time() * 1000 - row["written"])
                if len(seen) == changes:
                    break
            stop.set()
            process.send_signal(signal.SIGINT)
            process.wait(timeout=120)
        writer.join(10)
        found[reader] = seen
    return found


def report(figures: dict, rows: int, changes: int, argv: list[str]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()[0]
    from benchmarks.report import machine

    bounded, late = figures["rows"], figures["delays"]
    lines = [
        "## The gateway beside the CLI",
        "",
        f"`python -m benchmarks.gateway {' '.join(argv)}` on {time.strftime('%Y-%m-%d')} at commit {commit}, "
        f"{machine()}, load average {load:.1f} at the end (the machine is shared).",
        "",
        "| what | through the gateway (psycopg) | the CLI's json mode |",
        "| --- | --- | --- |",
        f"| bounded SELECT of {rows:,} rows (3 columns) | {bounded['gateway']:,.0f} rows/s ({bounded['gateway_seconds']:.2f} s) "
        f"| {bounded['cli']:,.0f} rows/s ({bounded['cli_seconds']:.2f} s) |",
    ]
    for name, label in (("median", statistics.median), ("max", max)):
        lines.append(f"| change to reader, {name} of {changes} changes | {label(late['gateway']) / 1000:.2f} s "
                     f"| {label(late['cli']) / 1000:.2f} s |")
    lines += ["", "Rows/s count from the query's start to its last row at the reader; the delay from a change's file "
              "being renamed into a watched folder to its row at the reader (COPY TO STDOUT through the gateway; "
              "the CLI's stream of the same query, which its live table shows)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gateway", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run (5,000 rows, 3 changes)")
    parser.add_argument("--rows", type=int, help="rows of the bounded SELECT (default 200,000)")
    parser.add_argument("--changes", type=int, help="changes timed per reader (default 10)")
    parser.add_argument("--write", action="store_true", help="write the table into docs/benchmarks.md")
    args = parser.parse_args(argv)
    rows = args.rows or (5_000 if args.quick else 200_000)
    changes = args.changes or (3 if args.quick else 10)
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as folder:
        home = Path(folder) / "home"
        home.mkdir()
        process, port = gateway(home)
        try:
            figures = {"rows": rows_per_second(home, port, rows), "delays": delays(home, port, changes)}
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=120)
    text = report(figures, rows, changes, argv if argv is not None else sys.argv[1:])
    print(text)
    if args.write:
        from benchmarks.report import write_section

        write_section("gateway", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
