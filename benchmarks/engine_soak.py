"""A night-long run: pipelines held at a fixed rate for hours as detached jobs, sampled every minute (soak benchmark).

Why it exists: a job lives for days in a process of its own; memory, checkpoint files or batch times that creep
up over hours end it, and a 10-minute run cannot tell a slow leak from a settling heap. `make bench-soak` runs the
user count and the three-way join (benchmarks/engine.py's pipelines over `upsert-kafka` topics) together for 8
hours, each its own detached job on its own topics with `--keys` users preloaded and read before the rate starts,
each fed `--rate` changes/s (benchmarks/soak_load.py: users moved between accounts, 1 in 10 deleted, a probe every
200 ms). Every `--every` seconds (a minute), per job:

* the resident memory (RSS) of every process of the job (the job process, its JVM, Spark's Python workers), and
  of the process that follows it;
* the size on disk of the job's checkpoint folder (`<home>/jobs/<id>/checkpoint`: offsets, commits, the state
  store's files, which Spark's state store maintenance deletes once older than the retained batches) and its files;
* the micro-batches the job wrote to its batches.jsonl in the minute: how many, their duration (median, max), the
  rows the state holds;
* p50/p99 end-to-end latency of the probes sent in the minute ending 30 s before the sample (a probe that has not
  arrived by then counts at its age, a lower bound);
* and, for the machine, the 1-minute load, the CPU time stolen by the hypervisor, the memory available, the RSS of
  this process and of the Kafka broker.

Each sample is a line of `soak.jsonl` in the work folder, written as it is taken: a run that is interrupted keeps
its figures, and `--from-results` makes the report from that file, finished or not. At the end the rate stops,
each job is left to catch up, stopped, and its sink compared with the result recomputed from its input topics
(`benchmarks.engine_data verify`); then the report (benchmarks/soak_report.py): the first and last hour of each
figure, its slope, the bound it is held to and whether it held, and a PNG plot per figure over time. `--write` puts
the report in docs/reliability.md (between the soak-night markers) and the plots in docs/images/, only when every
job's sink was found right.

    .venv/bin/python -m benchmarks.engine_soak [--minutes 480] [--pipelines count,join] [--keys N] [--rate R]
        [--engines streamshell[,flink]] [--every S] [--work DIR] [--write] [--from-results FILE|DIR]

Unattended: `nohup setsid make bench-soak > /tmp/soak.log 2>&1 &` (its work folder is printed at the start).
Kafka is started (`scripts/services start kafka`) when it is not running, and stopped at the end if it was.
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
import time
import uuid
from pathlib import Path

from benchmarks import scratch, soak_report
from benchmarks import engine_data as data
from benchmarks.engine import INPUTS, QUIET_S, pipeline_sql, producer_command, start_engine
from benchmarks.engine_procs import REPO, Engine, jvm_live_heap, run_json, session_memory
from benchmarks.report import machine
from benchmarks.soak_load import Load

MIB = 1024 * 1024
LATENCY_LAG_S = 30.0  # a sample's latency is of the probes sent in the minute ending this long before it
RESULTS = "soak.jsonl"


def disk_usage(path: Path) -> tuple[int, int]:
    """(bytes on disk, files) of a folder (what `du` counts: allocated blocks)."""
    total = files = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
                files += 1
            except OSError:
                continue  # a file the job deleted while we walked
    return total, files


def stolen_seconds() -> float:
    """CPU seconds the hypervisor gave to other machines, over every core since boot (/proc/stat's `steal`)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


def memory_available_mib() -> float:
    line = next(x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemAvailable"))
    return int(line.split()[1]) / 1024


def process_rss_mib(pid: int | None) -> float | None:
    """VmRSS of one process, None if it is gone."""
    if not pid:
        return None
    try:
        line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS"))
    except (OSError, StopIteration):
        return None
    return int(line.split()[1]) / 1024


class Results:
    """soak.jsonl: one JSON object per line, flushed as it is written."""

    def __init__(self, path: Path):
        self.path = path
        self._out = path.open("a", encoding="utf-8")

    def write(self, kind: str, **fields) -> dict:
        record = {"kind": kind, "at": time.time(), **fields}
        self._out.write(json.dumps(record) + "\n")
        self._out.flush()
        os.fsync(self._out.fileno())
        return record


class Brokers:
    """Kafka for the run: the running broker, or one started here and stopped at the end."""

    def __init__(self, work: Path):
        self.log = work / "services.log"
        self.started = False
        if self._run("status", "kafka").returncode != 0:
            print("Kafka is not running: starting it (scripts/services start kafka)", flush=True)
            if self._run("start", "kafka").returncode != 0:
                raise RuntimeError(f"scripts/services start kafka failed; see {self.log}")
            self.started = True
        found = re.search(r"kafka: running \(pid (\d+)\)", self._run("status", "kafka").stdout)
        self.pid = int(found.group(1)) if found else None

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([str(REPO / "scripts" / "services"), *args], cwd=REPO, capture_output=True, text=True,
                              timeout=600, check=False)  # fmt: skip
        with self.log.open("a") as log:
            log.write(f"$ scripts/services {' '.join(args)} (exit {done.returncode})\n{done.stdout}{done.stderr}")
        return done

    def stop(self) -> None:
        if self.started:
            print("stopping the Kafka broker this run started", flush=True)
            self._run("stop", "kafka")
            self.started = False


class Job:
    """One pipeline in one engine, on topics of its own, with its load."""

    def __init__(self, engine_name: str, pipeline: str, args, work: Path):
        self.engine_name, self.pipeline = engine_name, pipeline
        self.name = f"{engine_name} {pipeline}"
        suffix = uuid.uuid4().hex[:6]
        self.topics = [f"bench-soak-{suffix}-{t}" for t in INPUTS[pipeline]]
        self.sink = f"bench-soak-{suffix}-sink"
        self.log = work / f"{engine_name}-{pipeline}-data.log"
        self.work, self.args = work, args
        self.engine: Engine | None = None
        self.load: Load | None = None
        self.preload = 0
        self.checkpoint: Path | None = None
        self.caught_up = False

    def start(self) -> dict:
        """Topics, preload, the job started and caught up with the preload; what the results record of it."""
        data.create_topics([*self.topics, self.sink])
        produce = producer_command(self.pipeline, self.topics, self.args.keys, self.args.accounts)
        self.preload = run_json([*produce, "--phase", "preload"], self.log, timeout=3600)["rows"]
        sql = self.work / f"{self.engine_name}-{self.pipeline}.sql"
        sql.write_text(pipeline_sql(self.pipeline, self.topics, self.sink))
        self.engine = start_engine(self.engine_name, sql, self.work)
        submitted = self.engine.event("submitted", timeout=900)
        if self.engine.state is not None and submitted.get("job"):
            self.checkpoint = self.engine.state / "jobs" / submitted["job"] / "checkpoint"
        started = time.time()
        if not self.engine.wait_rows(self.preload, self.args.timeout, quiet_s=QUIET_S):
            raise RuntimeError(f"{self.name}: did not read the {self.preload:,} preloaded changes in "
                               f"{self.args.timeout:.0f} s")  # fmt: skip
        return {"job": self.name, "engine": self.engine_name, "pipeline": self.pipeline, "topics": self.topics,
                "sink": self.sink, "preload": self.preload, "job_id": submitted.get("job"),
                "checkpoint": str(self.checkpoint) if self.checkpoint else None, "log": str(self.engine.log),
                "caught_up_s": time.time() - started}  # fmt: skip

    def start_load(self) -> None:
        self.load = Load(self.pipeline, self.topics, self.sink, self.args.keys, self.args.accounts, self.args.rate)
        self.load.start()

    def drain_batches(self) -> list[dict]:
        """The batch events the job reported since the last call, taken out of the engine's list (a night of full
        progress reports would otherwise pile up in this process)."""
        engine = self.engine
        with engine._changed:  # Flink's progress events (counters only) go too
            batches = [e for e in engine.events if e.get("event") == "batch"]
            engine.events[:] = [e for e in engine.events if e.get("event") not in ("batch", "progress")]
        return batches

    def sample(self, t: float, since: float | None, live_heap: bool) -> dict:
        engine = self.engine
        sessions = engine._sessions
        follower = session_memory(sessions[0]) if len(sessions) > 1 else {}
        heaps = None
        if live_heap:  # a full collection in each of the job's JVMs: a pause, which the latency includes
            found = [jvm_live_heap(pid) for pid, (name, _) in session_memory(sessions[-1]).items() if name == "java"]
            heaps = sum(h for h in found if h is not None) / MIB if any(h is not None for h in found) else None
        processes = session_memory(sessions[-1])
        by_kind = {"java": 0.0, "python": 0.0, "other": 0.0}
        for name, rss in processes.values():
            by_kind["java" if name == "java" else "python" if name.startswith("python") else "other"] += rss / MIB
        out = {"job": self.name, "t": t, "rss_mib": sum(by_kind.values()), "jvm_mib": by_kind["java"],
               "python_mib": by_kind["python"], "other_mib": by_kind["other"],
               "procs": sorted([pid, name, round(rss / MIB, 1)] for pid, (name, rss) in processes.items()),
               "follower_mib": sum(rss for _, rss in follower.values()) / MIB if follower else None,
               "heap_mib": heaps, "cpu_s": engine.cpu(), "rows": engine.rows,
               "sent": self.load.sent if self.load else 0}  # fmt: skip
        if self.checkpoint is not None:
            size, files = disk_usage(self.checkpoint)
            out |= {"checkpoint_mib": size / MIB, "checkpoint_files": files, "home_mib": disk_usage(engine.state)[0] / MIB}
        batches = self.drain_batches()
        if since is None:  # the sample as the rate starts: the batches before it read the preload
            batches = []
        if batches:
            ms = sorted(b["ms"] for b in batches)
            last = batches[-1].get("report") or {}
            operators = last.get("stateOperators") or []
            out |= {"batches": len(batches), "batch_rows": sum(b["rows"] for b in batches),
                    "batch_ms_p50": statistics.median(ms), "batch_ms_max": ms[-1], "batch_id": batches[-1].get("id"),
                    "state_rows": sum(int(o.get("numRowsTotal") or 0) for o in operators),
                    "state_mib": sum(int(o.get("memoryUsedBytes") or 0) for o in operators) / MIB}  # fmt: skip
        elif self.engine_name == "streamshell" and since is not None:
            out["batches"] = 0
        if self.load is not None and since is not None:
            window = self.load.window(since - LATENCY_LAG_S, time.time() - LATENCY_LAG_S)
            out |= {"lat_probes": window["probes"], "lat_late": window["late"], "p50_s": window["p50_s"],
                    "p99_s": window["p99_s"], "lat_max_s": window["max_s"]}  # fmt: skip
        return out

    def failed(self) -> str | None:
        if self.engine is not None and self.engine.failed:
            return self.engine.failed
        if self.load is not None and self.load.started and not self.load.alive:
            return f"the load stopped: {self.load.error}"
        return None

    def catch_up(self, results: Results) -> None:
        """With every load halted: this one's probes waited for, the job left to catch up and stopped."""
        end: dict = {"job": self.name}
        if self.load is not None and self.load.started:
            end["latency"] = self.load.stop()
            target = self.preload + self.load.sent
            try:
                end["caught_up"] = bool(self.engine and self.engine.wait_rows(target, self.args.timeout, quiet_s=QUIET_S))
            except RuntimeError:  # the job failed
                end["caught_up"] = False
            end["rows"], end["expected_rows"] = (self.engine.rows if self.engine else None), target
        if self.engine is not None:
            end["failed"] = self.engine.failed
            self.engine.stop()
        self.caught_up = bool(end.get("caught_up"))
        results.write("end", **end)

    def check(self, results: Results) -> None:
        """The job's sink against the result recomputed from its input topics."""
        if self.args.verify and self.caught_up:
            check = [sys.executable, "-m", "benchmarks.engine_data", "verify", "--pipeline", self.pipeline,
                     "--inputs", ",".join(self.topics), "--sink", self.sink]  # fmt: skip
            try:
                verdict = run_json(check, self.log, timeout=7200)
            except (RuntimeError, subprocess.SubprocessError) as exc:
                verdict = {"ok": False, "error": str(exc)}
            results.write("verify", job=self.name, result=verdict)
        elif self.args.verify:
            results.write("verify", job=self.name, result={"ok": False, "error": "the job did not catch up"})

    def cleanup(self) -> None:
        if self.load is not None and self.load.started:
            self.load.close()
        if self.engine is not None:
            self.engine.stop()
            if not self.args.keep_state and self.engine.state is not None:
                scratch.remove(self.engine.state)
                time.sleep(2)  # the job's monitor may write its state.json once more as the job ends
                scratch.remove(self.engine.state)
        if not self.args.keep_topics:
            try:
                data.delete_topics([*self.topics, self.sink])
            except Exception as exc:  # noqa: BLE001 - the broker may be gone; the run's figures are what matter
                print(f"{self.name}: could not delete its topics: {exc}", file=sys.stderr, flush=True)


def terminate(signum, _frame) -> None:
    raise SystemExit(128 + signum)  # the finally blocks stop the jobs and the broker


def run(args, argv: list[str], work: Path) -> Path:
    results = Results(work / RESULTS)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    results.write("start", args={k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}, argv=argv,
                  machine=machine(), commit=commit.strip(), work=str(work), load=os.getloadavg()[0])  # fmt: skip
    brokers = Brokers(work)
    jobs = [Job(e, p, args, work) for e in args.engines.split(",") for p in args.pipelines.split(",")]
    completed = broken = False
    try:
        for job in jobs:  # one after the other: two Sparks starting and reading a preload at once on 2 cores
            print(f"{job.name}: preloading {args.keys:,} keys and starting the job", flush=True)
            print(json.dumps(results.write("job", **job.start())), flush=True)
        for job in jobs:
            job.start_load()
        rate_start = time.time()
        results.write("rate", rate=args.rate, jobs=[j.name for j in jobs])
        print(f"rate started: {args.rate:,} changes/s per job for {args.minutes:g} minutes; samples in "
              f"{results.path}", flush=True)  # fmt: skip
        steal0, last = stolen_seconds(), rate_start
        samples = int(args.minutes * 60 // args.every)
        for k in range(samples + 1):
            due = rate_start + k * args.every
            broken = None
            while (now := time.time()) < due and not broken:
                broken = next((f"{j.name}: {f}" for j in jobs if (f := j.failed())), None)
                time.sleep(min(5.0, max(0.0, due - now)))
            if broken:
                results.write("failed", t=time.time() - rate_start, error=broken)
                print(f"stopping early: {broken}", flush=True)
                break
            t = time.time() - rate_start
            taken = [results.write("sample", **job.sample(t, last if k else None, args.live_heap)) for job in jobs]
            host = results.write("machine", t=t, load1=os.getloadavg()[0], steal_s=stolen_seconds() - steal0,
                          mem_available_mib=memory_available_mib(), harness_mib=process_rss_mib(os.getpid()),
                          kafka_mib=process_rss_mib(brokers.pid))  # fmt: skip
            last = time.time()
            print(soak_report.progress_line(taken, host), flush=True)
        while not broken and time.time() < rate_start + args.minutes * 60:  # the rest of the last interval
            time.sleep(max(0.0, min(1.0, rate_start + args.minutes * 60 - time.time())))
        for job in jobs:  # every load first: a job still fed would not catch up while another is checked
            if job.load is not None:
                job.load.halt()
        for job in jobs:
            job.catch_up(results)
        for job in jobs:
            job.check(results)
        completed = not broken
    finally:
        for job in jobs:
            job.cleanup()
        brokers.stop()
        results.write("done", minutes=(time.time() - soak_report.first_at(results.path)) / 60, completed=completed)
    return results.path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=480, help="how long the rate is held (default 480: 8 hours)")
    parser.add_argument("--pipelines", default="count,join", help="of count, join, orders: each its own job")
    parser.add_argument("--engines", default="streamshell", help="streamshell and/or flink (each runs every pipeline)")
    parser.add_argument("--keys", type=int, default=1_000_000, help="users preloaded per pipeline")
    parser.add_argument("--accounts", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=1000, help="changes/s held, per job")
    parser.add_argument("--every", type=float, default=60, help="seconds between samples")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds a job may take to read its preload, and to catch up once the rate stops")
    parser.add_argument("--live-heap", action="store_true",
                        help="also the heap the jobs' JVMs hold after a full collection (a pause each sample)")
    parser.add_argument("--no-verify", dest="verify", action="store_false")
    parser.add_argument("--work", type=Path, help="the work folder (default: a new bench-soak-* in the temp folder)")
    parser.add_argument("--keep-state", action="store_true", help="leave the jobs' catalog homes in the work folder")
    parser.add_argument("--keep-topics", action="store_true", help="leave the run's topics in Kafka")
    parser.add_argument("--write", action="store_true",
                        help="the report into docs/reliability.md, the plots into docs/images/ (a verified run only)")
    parser.add_argument("--no-write", dest="write", action="store_false", help="undo a --write before it")
    parser.add_argument("--from-results", type=Path, help="report a run's soak.jsonl (or its folder), measure nothing")
    args = parser.parse_args(argv)
    if args.from_results:
        path = args.from_results / RESULTS if args.from_results.is_dir() else args.from_results
        return soak_report.report(path, path.parent, args.write)
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
        work = args.work.resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix=f"bench-soak-{time.strftime('%Y%m%d-%H%M')}-"))
    print(f"work folder (logs, scripts, {RESULTS}, plots): {work}", flush=True)
    signal.signal(signal.SIGTERM, terminate)  # SIGHUP is left as it is: nohup ignores it, setsid has no terminal
    try:
        path = run(args, argv, work)
    except SystemExit:  # a signal: the jobs are stopped; the report of what was sampled, then the exit
        print("stopped by a signal; the report of what was sampled:", flush=True)
        soak_report.report(work / RESULTS, work, False)
        raise
    except (RuntimeError, TimeoutError) as exc:
        print(f"the run failed: {exc}", file=sys.stderr, flush=True)
        path = work / RESULTS
        soak_report.report(path, work, False)
        return 1
    print(f"results in {path}", flush=True)
    return soak_report.report(path, work, args.write)


if __name__ == "__main__":
    sys.exit(main())
