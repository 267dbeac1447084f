"""Memory of a running pipeline over a long run at a fixed input rate, streamshell beside Flink SQL (soak benchmark).

Why it exists: DESIGN.md's target "no memory growth over a 10-minute run at a fixed rate beyond the state it must
hold" is to be measured with a command, side by side with the reference, on this machine. Per engine, on topics
of its own (as benchmarks/engine.py sets them up): `--keys` users are preloaded and the job is started and left
to catch up; then `--rate` changes/s are held for `--minutes` (benchmarks/engine_latency.py's load: users moved
between accounts, 1 in 10 deleted, a probe every 200 ms, so the latency over the whole run comes with it). Every
`--every` seconds, from the start of the rate:

* the resident memory (RSS) of the engine's whole process tree (JVM, Spark's Python workers, PyFlink's Python);
* the heap its JVMs hold right after a full collection (`jcmd GC.run`, then `GC.heap_info`): live objects only,
  the figure that grows if something is kept that should not be (the collection is a pause of the job, which
  the latency figures include);
* the size of streamshell's catalog home (the job's checkpoints and state store files; Flink runs without
  checkpoints and holds its state on the heap);
* the machine's 1-minute load and the CPU time the hypervisor gave to other machines (`steal` in /proc/stat):
  at a fixed rate, an engine that gets less CPU falls behind, and its latency shows it.

The state the job must hold does not grow: every user is in Kafka before the job starts and the changes only
move, delete and re-insert them (a tenth of the changes delete a user, so over the run it shrinks a little). So
any growth after the first minute (the state store's caches and memtables filling, the JIT, Spark's bounded
lists of recent progress and plans) should level off; the report gives the growth from the first full minute
to the end and the slope over the second half.

    .venv/bin/python -m benchmarks.engine_soak [--pipeline count|join|orders] [--keys N] [--rate R] [--minutes M]
        [--every S] [--engines streamshell,flink] [--write]

Needs Kafka (`scripts/services start kafka`), and for Flink `scripts/flink-venv` and `scripts/jvm-deps flink`.
`--write` puts the figures between the soak markers of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from benchmarks import engine_latency, scratch
from benchmarks import engine_data as data
from benchmarks.engine import INPUTS, QUIET_S, pipeline_sql, producer_command, start_engine
from benchmarks.engine_procs import Engine, jvm_live_heap, run_json, session_memory
from benchmarks.report import machine, write_section

MIB = 1024 * 1024


def tree_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue  # a file the job deleted while we walked
    return total


def stolen_seconds() -> float:
    """CPU seconds the hypervisor gave to other machines, over every core since boot (/proc/stat's `steal`)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


class Sampler:
    """Samples an engine's memory every `every` seconds on a thread, from `start()` until `stop()`."""

    def __init__(self, engine: Engine, home: Path | None, every: float):
        self.engine, self.home, self.every = engine, home, every
        self.samples: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-sampler", daemon=True)

    def start(self) -> None:
        self.started = time.time()
        self._thread.start()

    def sample(self) -> dict:
        at = time.time() - self.started
        jvms = [pid for pid, (name, _) in session_memory(self.engine.proc.pid).items() if name == "java"]
        heaps = [jvm_live_heap(pid) for pid in jvms]
        processes = session_memory(self.engine.proc.pid)  # after the collection, which may have returned memory
        return {
            "t": at,
            "rss_mib": sum(rss for _, rss in processes.values()) / MIB,
            "jvm_rss_mib": sum(rss for name, rss in processes.values() if name == "java") / MIB,
            "heap_mib": sum(h for h in heaps if h is not None) / MIB if any(h is not None for h in heaps) else None,
            "home_mib": tree_bytes(self.home) / MIB if self.home else None,
            "cpu_s": self.engine.cpu(),
            "steal_s": stolen_seconds(),
            "load": os.getloadavg()[0],
        }

    def _run(self) -> None:
        self.samples.append(self.sample())
        while not self._stop.wait(self.every - (time.time() - self.started) % self.every):
            self.samples.append(self.sample())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(180)
        self.samples.append(self.sample())


def run_engine(engine_name: str, args, work: Path) -> dict:
    suffix = uuid.uuid4().hex[:6]
    topics = [f"bench-soak-{suffix}-{t}" for t in INPUTS[args.pipeline]]
    sink = f"bench-soak-{suffix}-sink"
    data.create_topics([*topics, sink])
    log = work / f"{engine_name}-data.log"
    out: dict = {"engine": engine_name}
    engine = None
    try:
        produce = producer_command(args.pipeline, topics, args.keys, args.accounts)
        preload = run_json([*produce, "--phase", "preload"], log)["rows"]
        sql = work / f"{engine_name}-{args.pipeline}.sql"
        sql.write_text(pipeline_sql(args.pipeline, topics, sink))
        engine = start_engine(engine_name, sql, work)
        engine.event("submitted", timeout=600)
        if not engine.wait_rows(preload, args.timeout, quiet_s=QUIET_S):
            out["error"] = f"did not read the {preload:,} preloaded changes in {args.timeout:.0f} s"
            return out
        sampler = Sampler(engine, engine.state, args.every)
        sampler.start()
        try:
            latency = engine_latency.measure(args.pipeline, topics, sink, args.keys, args.accounts, args.rate,
                                             args.minutes * 60)  # fmt: skip
        finally:
            sampler.stop()
        out["samples"] = sampler.samples
        out["latency"] = latency.figures()
        return out
    except (RuntimeError, TimeoutError) as exc:
        out["error"] = str(exc)
        return out
    finally:
        if engine is not None:
            engine.stop()
            if not args.keep_state:
                scratch.remove(engine.state)
        data.delete_topics([*topics, sink])


# ---- report ----------------------------------------------------------------------------------------------------


def slope(samples: list[dict], key: str) -> float | None:
    """Least-squares MiB per minute of `key` over the samples."""
    points = [(s["t"] / 60, s[key]) for s in samples if s.get(key) is not None]
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else None


def summary(run: dict) -> dict:
    """Growth from the first sample at or after one minute to the last, and slopes over the second half."""
    samples = run["samples"]
    end = samples[-1]["t"]
    settled = next((s for s in samples if s["t"] >= 60), samples[0])
    second_half = [s for s in samples if s["t"] >= end / 2]
    figures = {}
    for key in ("rss_mib", "jvm_rss_mib", "heap_mib", "home_mib"):
        if settled.get(key) is None or samples[-1].get(key) is None:
            continue
        figures[key] = {"first": samples[0][key], "settled": settled[key], "end": samples[-1][key],
                        "growth": samples[-1][key] - settled[key], "slope_late": slope(second_half, key)}  # fmt: skip
    return figures


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def samples_table(runs: list[dict]) -> str:
    ok = [r for r in runs if r.get("samples")]
    homes = any(r["engine"] == "streamshell" for r in ok)
    lines = ["| minute | " + " | ".join(f"{r['engine']} RSS | of it JVMs | live heap" for r in ok)
             + (" | streamshell home |" if homes else " |"),
             "| ---: |" + " ---: | ---: | ---: |" * len(ok) + (" ---: |" if homes else "")]
    rows = max((len(r["samples"]) for r in ok), default=0)
    for i in range(rows):
        t = next(r["samples"][i]["t"] for r in ok if i < len(r["samples"]))
        cells = []
        home = ""
        for r in ok:
            s = r["samples"][i] if i < len(r["samples"]) else {}
            cells.append(f"{_mib(s.get('rss_mib'))} | {_mib(s.get('jvm_rss_mib'))} | {_mib(s.get('heap_mib'))}")
            if r["engine"] == "streamshell":
                home = f" {_mib(s.get('home_mib'))} |"
        last = all(i == len(r["samples"]) - 1 for r in ok)  # the sample taken when the rate stopped
        lines.append(f"| {t / 60:.1f}{' (end)' if last else ''} | " + " | ".join(cells) + " |" + home)
    return "\n".join(lines)


def summary_table(runs: list[dict]) -> str:
    names = {"rss_mib": "RSS of the process tree", "jvm_rss_mib": "of it, the JVMs'",
             "heap_mib": "live heap (after a full GC)", "home_mib": "catalog home on disk"}  # fmt: skip
    lines = ["| engine | what | at the start | after 1 min | at the end | growth after 1 min | slope, 2nd half |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for run in runs:
        if "error" in run:
            lines.append(f"| {run['engine']} | failed: {run['error'][:120]} | | | | | |")
            continue
        for key, f in summary(run).items():
            late = "-" if f["slope_late"] is None else f"{f['slope_late']:+.1f} MiB/min"
            lines.append(f"| {run['engine']} | {names[key]} | {_mib(f['first'])} MiB | {_mib(f['settled'])} MiB | "
                         f"{_mib(f['end'])} MiB | {f['growth']:+,.0f} MiB | {late} |")  # fmt: skip
    return "\n".join(lines)


def latency_line(run: dict) -> str:
    lat = run.get("latency")
    if not lat:
        return ""
    s = lambda v: "not arrived" if v is None else f"{v:.2f} s"  # noqa: E731
    first, last = run["samples"][0], run["samples"][-1]
    seconds = last["t"] - first["t"]
    steal = ""
    if "steal_s" in first:  # runs before 2026-11-23 did not record it
        loads = [x["load"] for x in run["samples"]]
        steal = (f"; {(last['steal_s'] - first['steal_s']) / seconds:.2f} cores' time stolen by the hypervisor, "
                 f"1-minute load {min(loads):.1f}-{max(loads):.1f}")  # fmt: skip
    return (f"- {run['engine']}: {lat['rate']:,.0f} changes/s held, {lat['arrived']:,} of {lat['probes']:,} probes "
            f"arrived, p50 {s(lat['p50'])}, p99 {s(lat['p99'])}, max {s(lat['max'])}; "
            f"engine CPU {(last['cpu_s'] - first['cpu_s']) / seconds:.2f} cores{steal}")  # fmt: skip


def body(results: dict) -> str:
    args = argparse.Namespace(**results["args"])
    command = " ".join([".venv/bin/python -m benchmarks.engine_soak", *[a for a in results["argv"] if a != "--write"],
                        "--write"])  # fmt: skip
    pipeline = {"count": "user count", "join": "three-way join"}[args.pipeline]
    latencies = "\n".join(filter(None, map(latency_line, results["runs"])))
    return f"""## Memory over a long run at a fixed rate

Measured with `{command}` on {dt.date.today().isoformat()}, {machine()}; the whole run took
{results['minutes']:.0f} minutes, 1-minute load average {results['load_start']:.1f} at its start and
{results['load_end']:.1f} at its end.

The {pipeline} pipeline over `upsert-kafka` topics (as in the changelog benchmark above): {args.keys:,} users preloaded
and read, then {args.rate:,} changes/s for {args.minutes:g} minutes (users moved between {args.accounts:,} accounts, 1 in 10
deleted, a probe every 200 ms). The state to hold stays the same size (no new users; deletes make it a little
smaller). Every {args.every:g} s: the RSS of the engine's process tree, the heap its JVMs hold after a forced full
collection, and the size of streamshell's catalog home (checkpoints and state files). streamshell: defaults
(RocksDB state, off the JVM heap); Flink: defaults (heap state, no checkpoints), parallelism 2.

{summary_table(results['runs'])}

Latency and CPU over the same run (every sample's full collection is a pause of the job, included here):

{latencies}

Every sample (MiB):

{samples_table(results['runs'])}
"""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", choices=tuple(INPUTS), default="count")
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--accounts", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=1000, help="changes/s held")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--every", type=float, default=60, help="seconds between samples")
    parser.add_argument("--timeout", type=float, default=900, help="seconds an engine may take to read the preload")
    parser.add_argument("--engines", default="streamshell,flink")
    parser.add_argument("--keep-state", action="store_true",
                        help="leave streamshell's catalog home (checkpoints, state) in the work directory")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--from-results", type=Path, help="report a finished run's results.json, measure nothing")
    args = parser.parse_args(argv)
    if args.from_results:
        results = json.loads(args.from_results.read_text())
    else:
        work = Path(tempfile.mkdtemp(prefix="bench-soak-"))
        print(f"logs and scripts in {work}", flush=True)
        started = time.time()
        results = {"runs": [], "load_start": os.getloadavg()[0]}
        for name in args.engines.split(","):
            results["runs"].append(run_engine(name, args, work))
            print(json.dumps(results["runs"][-1]), flush=True)
        results["load_end"], results["minutes"] = os.getloadavg()[0], (time.time() - started) / 60
        results["args"], results["argv"] = vars(args) | {"from_results": None}, argv
        (work / "results.json").write_text(json.dumps(results, indent=1))
        print(f"results in {work / 'results.json'}", flush=True)
    print(body(results))
    if args.write:
        write_section("soak", body(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
